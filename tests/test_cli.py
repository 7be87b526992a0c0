import subprocess
import sys

import pytest

from seqlearn.cli import main
from seqlearn.notebooks import chapter_paths, course_root


def test_info_reports_versions_and_device(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLEARN_DATA", str(tmp_path))
    monkeypatch.setenv("SEQLEARN_DEVICE", "cpu")
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "torch" in out and "cpu" in out and str(tmp_path) in out


def test_console_script_runs():
    result = subprocess.run([sys.executable, "-m", "seqlearn.cli", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for command in ("info", "run", "exercises", "check-grading", "ngram"):
        assert command in result.stdout


def test_unknown_chapter_is_a_clear_error(capsys):
    assert main(["run", "99"]) == 2
    assert "no chapter called '99'" in capsys.readouterr().err


def test_chapter_selection_by_number_and_slug():
    root = course_root()
    first = chapter_paths(root)[0]
    assert chapter_paths(root, ["1"]) == [first]
    assert chapter_paths(root, [first.stem]) == [first]


def test_course_root_outside_the_course(tmp_path):
    with pytest.raises(FileNotFoundError, match="no course directory"):
        course_root(tmp_path)
