"""``seqlearn release``: a student repository without the solutions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from seqlearn.course.cli import main
from seqlearn.course.release import STUDENT_PATHS, SolutionLeak, write_student_repository

ROOT = Path(__file__).resolve().parents[1]


def test_the_student_repository_has_the_course_but_no_solutions(tmp_path):
    dest = tmp_path / "student"
    written = write_student_repository(ROOT, dest)
    assert written and all(dest in p.parents for p in written)
    assert not (dest / "solutions").exists() and not (dest / "tests").exists()
    assert sorted(p.name for p in dest.iterdir()) == sorted(n for n in STUDENT_PATHS if (ROOT / n).exists())
    for notebook in dest.rglob("*.ipynb"):
        text = notebook.read_text()
        assert "### BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, notebook
    for path in (ROOT / "exercises").rglob("*.ipynb"):
        assert (dest / path.relative_to(ROOT)).read_bytes() == path.read_bytes()
    assert not list(dest.rglob("__pycache__"))


def test_a_notebook_with_solutions_is_never_released(tmp_path):
    course = tmp_path / "course"
    for name in ("chapters", "exercises"):
        shutil.copytree(ROOT / name, course / name)
    (leak,) = list((ROOT / "solutions" / "01_ngram").glob("*.ipynb"))
    shutil.copy2(leak, course / "exercises" / "01_ngram" / leak.name)
    with pytest.raises(SolutionLeak, match="solutions or hidden tests"):
        write_student_repository(course, tmp_path / "student")
    assert not (tmp_path / "student").exists()


def test_the_destination_must_be_new_and_outside_the_course(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(FileExistsError):
        write_student_repository(ROOT, tmp_path / "full")
    with pytest.raises(ValueError, match="outside the course"):
        write_student_repository(ROOT, ROOT / "build" / "student")


def test_the_command(tmp_path, capsys):
    assert main(["release", str(tmp_path / "s"), "--root", str(ROOT)]) == 0
    assert "student repository" in capsys.readouterr().out
    assert main(["release", str(tmp_path / "s"), "--root", str(ROOT)]) == 2
    assert "not empty" in capsys.readouterr().err
