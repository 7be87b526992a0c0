import subprocess
import sys
from pathlib import Path

import pytest

from seqlearn.course.cli import main
from seqlearn.course.notebooks import chapter_paths, course_root


def test_info_reports_versions_and_device(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("SEQLEARN_DATA", str(tmp_path))
    monkeypatch.setenv("SEQLEARN_DEVICE", "cpu")
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "torch" in out and "cpu" in out and str(tmp_path) in out


@pytest.mark.integration
def test_console_script_runs():
    result = subprocess.run([sys.executable, "-m", "seqlearn.course.cli", "--help"], capture_output=True, text=True)
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


BASE_INSTALL = """
import sys

class WithoutCourseExtra:
    '''A base install (pip install seqlearn): the packages of the course extra cannot be imported.'''

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

BLOCKED = set(sys.argv[1].split(","))
sys.meta_path.insert(0, WithoutCourseExtra())
from seqlearn.course.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _course_extra_modules() -> list[str]:
    import tomllib

    from seqlearn.course.notebooks import course_root

    pyproject = tomllib.loads((course_root() / "pyproject.toml").read_text())
    course = pyproject["project"]["optional-dependencies"]["course"]
    return [spec.split("==")[0].replace("-", "_") for spec in course]


def _base_install(*argv: str) -> subprocess.CompletedProcess:
    blocked = ",".join(_course_extra_modules())
    return subprocess.run([sys.executable, "-c", BASE_INSTALL, blocked, *argv], capture_output=True, text=True)


@pytest.mark.integration
@pytest.mark.parametrize("argv", [["run", "1"], ["exercises"], ["check-grading", "01_ngram"]])
def test_base_install_names_the_extra_a_subcommand_needs(argv):
    result = _base_install(*argv)
    assert result.returncode == 2, result.stderr
    assert "pip install 'seqlearn[course]'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.integration
def test_base_install_runs_info_and_ngram(tmp_path):
    assert _base_install("info").returncode == 0
    train = tmp_path / "train.txt"
    train.write_text("a b c\nb c a\n" * 3)
    result = _base_install("ngram", "estimate", "--order", "2", "--discount-fallback", "--text", str(train))
    assert result.returncode == 0 and result.stdout.startswith("\\data\\"), result.stderr


@pytest.mark.parametrize("timeout", ["-5", "0", "nan", "inf", "soon"])
def test_run_refuses_a_timeout_that_is_not_positive(timeout, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "1", "--timeout", timeout])
    assert exit_.value.code == 2 and "--timeout" in capsys.readouterr().err


def _scratch_course(tmp_path, *cells: str):
    import nbformat

    (tmp_path / "chapters").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in cells])
    nbformat.write(nb, tmp_path / "chapters/01_scratch.ipynb")
    return str(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cells", "says"),
    [
        (
            ["x = 1", "# the second cell\nraise ValueError('no data here')"],
            "cell 2 (# the second cell): raised ValueError: no data here",
        ),
        (["import time\ntime.sleep(30)"], "cell 1 (import time): timed out after 3 s"),
    ],
)
def test_a_failing_chapter_is_one_line_naming_the_cell(tmp_path, capsys, cells, says):
    root = _scratch_course(tmp_path, *cells)
    assert main(["run", "--root", root, "--timeout", "3", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"seqlearn run: error: 01_scratch: {says}"


@pytest.mark.slow
def test_run_fails_on_a_misquoted_number_and_names_it(tmp_path, capsys):
    import nbformat

    root = _scratch_course(tmp_path, "x = 0.25")
    path = tmp_path / "chapters/01_scratch.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("x is 0.24<!--q: x | .2f -->"))
    nbformat.write(nb, path)
    assert main(["run", "--root", root, "1"]) == 1
    err = capsys.readouterr().err
    assert "01_scratch misquotes" in err and "the text says 0.24, the chapter computes 0.25 (x | .2f)" in err


def test_run_refuses_an_unwritable_html_directory_before_running(tmp_path, capsys):
    root = _scratch_course(tmp_path, "open('ran', 'w').close()")
    (tmp_path / "file").write_text("")
    assert main(["run", "--root", root, "--html", str(tmp_path / "file" / "html"), "1"]) == 2
    assert "cannot write to" in capsys.readouterr().err and not (tmp_path / "chapters/ran").exists()


@pytest.mark.integration
def test_env_prints_the_cpu_kernel_pins_and_threads_as_shell_exports():
    from seqlearn.device import CPU_KERNEL_PINS, KERNEL_THREADS

    script = f'eval "$({sys.executable} -m seqlearn.course.cli env)"; env'
    env = {"PATH": "/usr/bin:/bin", "ATEN_CPU_CAPABILITY": "default"}
    out = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    seen = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert seen == {**seen, **CPU_KERNEL_PINS, **KERNEL_THREADS, "ATEN_CPU_CAPABILITY": "default"}


def test_env_prints_only_the_threads_when_the_pins_are_switched_off(monkeypatch, capsys):
    from seqlearn.device import KERNEL_THREADS

    monkeypatch.setenv("SEQLEARN_PIN_KERNELS", "0")
    for name in KERNEL_THREADS:
        monkeypatch.delenv(name, raising=False)
    assert main(["env"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# SEQLEARN_PIN_KERNELS=0")
    assert out.splitlines()[1:] == [f"export {name}={value}" for name, value in KERNEL_THREADS.items()]


@pytest.mark.integration
def test_binder_start_pins_the_cpu_kernels_and_threads():
    """Binder starts JupyterLab through binder/start: its kernels get the pins and one thread per library."""
    from seqlearn.device import CPU_KERNEL_PINS, KERNEL_THREADS

    root = course_root(__file__)
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    out = subprocess.run(
        ["bash", str(root / "binder" / "start"), "env"], env=env, capture_output=True, text=True, check=True
    ).stdout
    seen = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    pins = {**CPU_KERNEL_PINS, **KERNEL_THREADS}
    assert {k: seen.get(k) for k in pins} == pins and seen["SEQLEARN_DEVICE"] == "cpu"
