"""The course on a real JupyterHub: one assignment's whole cycle, driven as the users' browsers drive it.

A JupyterHub from this environment runs on 127.0.0.1 (its own ports, working directory,
database, cookie secret and proxy token), with JupyterHub's shared-password authenticator, two
students and one instructor (an administrator), and ``SimpleLocalProcessSpawner``: each user's
single-user server (``jupyterhub-singleuser --allow-root``) runs in a home of its own. The
exchange is a temporary directory. Each user's ``~/.jupyter/nbgrader_config.py`` names the
course id and the exchange; the instructor's also names the course directory (a fresh copy of
the course in their home) and loads its ``nbgrader_config.py``; the students' name their student
id (every server runs as the same OS user here, where a hub has one OS user per student), and
their server has the formgrader disabled, as an institution's hub would.

Each user logs in through the hub's REST API with their password for an API token, starts their
server through the hub, and calls nbgrader's server extensions through the proxy
(``/user/<name>/...``): the instructor's formgrader API generates, releases, collects, generates
and releases feedback; the students' assignment list (the handlers JupyterLab's Assignments
panel calls) fetches, submits and fetches feedback, and their answers are saved through the
Contents API, as the notebook editor saves them. Grading is ``seqlearn grade`` (the course's
sealed grader) in the instructor's course directory, as from a terminal on the hub. One student
hands in the solution, the other the solution with its first answer left blank; the gradebook
and the fetched feedback pages must show the points each deserves, counted from the source
notebook's graded cells.

The assignment is the one that ``seqlearn grade`` grades fastest (06_lowrank: 0.4 s for the solution
and 3 s for the whole run on two cores, against 0.5-3.4 s and 4-9 s for the other assignments).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
import yaml
from browser_support import free_port
from hub_course import ROOT, fresh_course, full_submission, notebook_name, partial_submission

from seqlearn.course.nbgrader_tools import release_differences

ASSIGNMENT = "06_lowrank"
COURSE_ID = "seqlearn"
STUDENTS = ("student1", "student2")
INSTRUCTOR = "instructor"
BIN = Path(sys.executable).parent
PROXY = BIN / "configurable-http-proxy"
MARKER = "SEQLEARN_HUB_TEST"  # in the environment of every process the hub starts, to find them all
TIMEOUT = 180  # seconds for one request (generating an assignment, a server's start)

HUB_CONFIG = """
c = get_config()
c.JupyterHub.bind_url = "http://127.0.0.1:{proxy_port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "jupyterhub_cookie_secret"
c.ConfigurableHTTPProxy.auth_token = {proxy_token!r}
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = {user_password!r}
c.SharedPasswordAuthenticator.admin_password = {admin_password!r}
c.Authenticator.allowed_users = {students!r}
c.Authenticator.admin_users = {{{instructor!r}}}
c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
c.SimpleLocalProcessSpawner.home_dir_template = {homes!r} + "/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = ["--allow-root"]
c.Spawner.ip = "127.0.0.1"
c.Spawner.environment = {{{marker!r}: {run!r}}}
c.Spawner.start_timeout = {timeout}
c.Spawner.http_timeout = {timeout}
"""


def _marked_pids(run: str) -> list[int]:
    """The processes whose environment holds ``MARKER=run``: the hub, its proxy, the users' servers."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"{MARKER}={run}".encode() in environ:
                pids.append(int(entry.name))
    return pids


def _signal(pids: list[int], sig: int, group: bool = False) -> None:
    """Send ``sig`` to each pid (to its process group with ``group``), skipping those already gone."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(os.getpgid(pid), sig)
            else:
                os.kill(pid, sig)


@dataclass
class Hub:
    """A running hub: its URL (the proxy's), passwords and working folders."""

    url: str
    tmp: Path
    passwords: dict[str, str]
    tokens: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    @property
    def exchange(self) -> Path:
        """nbgrader's exchange (``c.Exchange.root`` of every user)."""
        return self.tmp / "exchange"

    def home(self, user: str) -> Path:
        return self.tmp / "home" / user

    def log(self) -> str:
        return (self.tmp / "hub" / "jupyterhub.log").read_text(errors="replace")[-4000:]

    def request(self, method: str, path: str, user: str | None = None, **kwargs):
        """A request to the hub's public URL (``/hub/...`` or ``/user/...``), as ``user`` when given."""
        import requests

        headers = {"Authorization": f"token {self.tokens[user]}"} if user else {}
        return requests.request(method, self.url + path, headers=headers, timeout=TIMEOUT, **kwargs)


def _write_user_config(hub: Hub, user: str) -> None:
    """The user's ``~/.jupyter``: nbgrader's course id and exchange; the course (instructor) or student id."""
    config = hub.home(user) / ".jupyter"
    config.mkdir(parents=True)
    lines = [
        "c = get_config()",
        f"c.CourseDirectory.course_id = {COURSE_ID!r}",
        f"c.Exchange.root = {str(hub.exchange)!r}",
    ]
    if user == INSTRUCTOR:
        course = hub.home(user) / COURSE_ID
        lines += [f"c.CourseDirectory.root = {str(course)!r}", f"load_subconfig('nbgrader_config.py', {str(course)!r})"]
    else:
        lines.append(f"c.CourseDirectory.student_id = {user!r}")
        disabled = {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False}}}
        (config / "jupyter_server_config.json").write_text(json.dumps(disabled))
    (config / "nbgrader_config.py").write_text("\n".join(lines) + "\n")


def _configure_hub(tmp: Path, run: str) -> Hub:
    """Write the hub's working directory and config, the exchange, the users' homes and the course."""
    user_password, admin_password = secrets.token_hex(8), secrets.token_hex(20)  # the students share one
    passwords = {**dict.fromkeys(STUDENTS, user_password), INSTRUCTOR: admin_password}
    ports = {"proxy_port": free_port(), "hub_port": free_port(), "api_port": free_port()}
    hub = Hub(f"http://127.0.0.1:{ports['proxy_port']}", tmp, passwords)
    (tmp / "hub").mkdir()
    hub.exchange.mkdir(mode=0o777)
    for user in (*STUDENTS, INSTRUCTOR):
        _write_user_config(hub, user)
    fresh_course(hub.home(INSTRUCTOR) / COURSE_ID, [ASSIGNMENT])
    config = HUB_CONFIG.format(
        **ports,
        proxy=str(PROXY),
        proxy_token=secrets.token_hex(32),
        user_password=user_password,
        admin_password=admin_password,
        students=set(STUDENTS),
        instructor=INSTRUCTOR,
        homes=str(tmp / "home"),
        singleuser=str(BIN / "jupyterhub-singleuser"),
        marker=MARKER,
        run=run,
        timeout=TIMEOUT,
    )
    (tmp / "hub" / "jupyterhub_config.py").write_text(config)
    return hub


def _launch(hub: Hub, run: str) -> None:
    """Start ``jupyterhub`` in its working directory (a session of its own) and wait until it answers."""
    env = {**os.environ, MARKER: run, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    with open(hub.tmp / "hub" / "jupyterhub.log", "wb") as log:
        hub.process = subprocess.Popen(
            [str(BIN / "jupyterhub"), "-f", "jupyterhub_config.py"],
            cwd=hub.tmp / "hub",
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _wait(lambda: _answers(hub), 60, hub, "the hub did not answer through its proxy")


def _answers(hub: Hub) -> bool:
    """Whether the hub's REST API answers through the proxy."""
    import requests

    try:
        return hub.request("GET", "/hub/api/").ok
    except requests.ConnectionError:
        return False


def _wait(ready, seconds: float, hub: Hub, what: str) -> None:
    """Poll ``ready()`` until it is true; fail with the hub's log after ``seconds``."""
    end = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < end, f"{what} within {seconds} s; hub log:\n{hub.log()}"
        time.sleep(0.5)


def _stop_hub(hub: Hub, run: str) -> None:
    """SIGTERM the hub, its proxy and the servers; SIGKILL the process group of any left after 20 s."""
    _signal(_marked_pids(run), signal.SIGTERM)
    end = time.monotonic() + 20
    while _marked_pids(run) and time.monotonic() < end:
        time.sleep(0.5)
    _signal(_marked_pids(run) + ([hub.process.pid] if hub.process else []), signal.SIGKILL, group=True)
    if hub.process:
        hub.process.wait(timeout=10)
    time.sleep(0.5)
    assert not _marked_pids(run), "processes of the hub outlived SIGKILL"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """A running hub whose users are logged in (an API token each) and have started their servers."""
    if not PROXY.exists():
        pytest.skip(f"JupyterHub's proxy is not installed ({PROXY}): it needs Node.js; `make install` adds it with npm")
    run = secrets.token_hex(8)
    hub = _configure_hub(tmp_path_factory.mktemp("hub"), run)
    try:
        _launch(hub, run)
        for user in (*STUDENTS, INSTRUCTOR):
            hub.tokens[user] = _login(hub, user)
            started = hub.request("POST", f"/hub/api/users/{user}/server", user)
            assert started.status_code in (201, 202), f"{user}'s server: {started.status_code} {started.text}"
        for user in (*STUDENTS, INSTRUCTOR):
            _wait(lambda user=user: _server_ready(hub, user), TIMEOUT, hub, f"{user}'s server did not start")
        yield hub
    finally:
        _stop_hub(hub, run)


def _login(hub: Hub, user: str) -> str:
    """An API token for ``user``, asked for with their password (the hub's REST API login)."""
    auth = {"username": user, "password": hub.passwords[user]}
    reply = hub.request("POST", f"/hub/api/users/{user}/tokens", json={"auth": auth, "note": "course test"})
    assert reply.status_code == 201, f"{user} could not log in: {reply.status_code} {reply.text}"
    return reply.json()["token"]


def _server_ready(hub: Hub, user: str) -> bool:
    """Whether the hub reports ``user``'s default server as ready."""
    reply = hub.request("GET", f"/hub/api/users/{user}", user)
    reply.raise_for_status()
    return bool(reply.json()["servers"].get("", {}).get("ready"))


def _formgrader(hub: Hub, action: str) -> dict:
    """POST the instructor's formgrader API action for the assignment; its result must be a success."""
    reply = hub.request("POST", f"/user/{INSTRUCTOR}/formgrader/api/assignment/{ASSIGNMENT}/{action}", INSTRUCTOR)
    assert reply.status_code == 200, f"formgrader {action}: {reply.status_code} {reply.text[-2000:]}"
    result = reply.json()
    assert result["success"], f"formgrader {action} failed:\n{result.get('error')}\n{result.get('log')}"
    return result


def _assignment_list(hub: Hub, student: str, action: str) -> list[dict]:
    """POST an Assignments panel action (fetch, submit, fetch_feedback); the student's assignments after it."""
    body = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
    reply = hub.request("POST", f"/user/{student}/assignments/{action}", student, json=body)
    assert reply.status_code == 200, f"{student} {action}: {reply.status_code} {reply.text[-2000:]}"
    result = reply.json()
    assert result["success"], f"{student} {action} failed:\n{result['value']}"
    return [a for a in result["value"] if a["assignment_id"] == ASSIGNMENT]


def _save(hub: Hub, student: str, path: str, notebook: nbformat.NotebookNode) -> None:
    """Save a notebook in the student's home through the Contents API, as the notebook editor does."""
    model = {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(notebook))}
    reply = hub.request("PUT", f"/user/{student}/api/contents/{path}", student, json=model)
    assert reply.status_code in (200, 201), f"{student} could not save {path}: {reply.status_code} {reply.text}"


def _grade(hub: Hub) -> str:
    """``seqlearn grade`` in the instructor's course directory, as from a terminal on the hub; its output."""
    env = {**os.environ, "HOME": str(hub.home(INSTRUCTOR)), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    command = [str(BIN / "seqlearn"), "grade", ASSIGNMENT, "--jobs", "2"]
    proc = subprocess.run(
        command, cwd=hub.home(INSTRUCTOR) / COURSE_ID, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, (
        f"seqlearn grade failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    )
    return proc.stdout


def _gradebook_scores(course: Path) -> dict[str, tuple[float, float]]:
    """Student -> (autograded score, autograded maximum) of the assignment, from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        return {
            s: (
                gradebook.find_submission(ASSIGNMENT, s).code_score,
                gradebook.find_submission(ASSIGNMENT, s).max_code_score,
            )
            for s in STUDENTS
        }


@pytest.fixture(scope="module")
def cycle(hub) -> dict:
    """Release, fetch, submit, collect, grade, generate and release feedback, fetch feedback; what came out."""
    course = hub.home(INSTRUCTOR) / COURSE_ID
    name = notebook_name(course, ASSIGNMENT)
    submissions = dict(zip(STUDENTS, (full_submission(course, ASSIGNMENT), partial_submission(course, ASSIGNMENT))))
    _formgrader(hub, "assign")  # generate_assignment --force: the assignment goes into the gradebook
    _formgrader(hub, "release")
    released = release_differences(ROOT / "exercises" / ASSIGNMENT, hub.exchange / COURSE_ID / "outbound" / ASSIGNMENT)
    fetched = {}
    for student, (notebook, _) in submissions.items():
        fetched[student] = _assignment_list(hub, student, "fetch")
        _save(hub, student, f"{ASSIGNMENT}/{name}", notebook)
        _assignment_list(hub, student, "submit")
    _formgrader(hub, "collect")
    graded = _grade(hub)
    _formgrader(hub, "generate_feedback")
    _formgrader(hub, "release_feedback")
    pages = {}
    for student in STUDENTS:
        _assignment_list(hub, student, "fetch_feedback")
        folder = hub.home(student) / ASSIGNMENT / "feedback"
        pages[student] = [p.read_text() for p in sorted(folder.rglob(Path(name).with_suffix(".html").name))]
    return {
        "course": course,
        "released": released,
        "fetched": fetched,
        "graded": graded,
        "deserved": {s: points for s, (_, points) in submissions.items()},
        "full": full_submission(course, ASSIGNMENT)[1],
        "scores": _gradebook_scores(course),
        "pages": pages,
    }


@pytest.mark.slow
def test_the_nbgrader_extensions_load_where_they_belong(hub):
    import nbgrader

    status = hub.request("GET", f"/user/{INSTRUCTOR}/formgrader/api/status", INSTRUCTOR)
    assert status.status_code == 200 and status.json() == {"status": True}
    for student in STUDENTS:
        params = {"version": nbgrader.__version__}
        version = hub.request("GET", f"/user/{student}/nbgrader_version", student, params=params)
        assert version.status_code == 200 and version.json() == {"success": True}
        assert hub.request("GET", f"/user/{student}/formgrader/api/status", student).status_code == 404


@pytest.mark.slow
def test_a_wrong_password_gets_no_token(hub):
    auth = {"username": STUDENTS[0], "password": hub.passwords[STUDENTS[0]] + "x"}
    assert hub.request("POST", f"/hub/api/users/{STUDENTS[0]}/tokens", json={"auth": auth}).status_code == 403


@pytest.mark.slow
def test_a_student_cannot_reach_another_students_server(hub):
    first, second = STUDENTS
    assert hub.request("GET", f"/user/{second}/api/status", second).status_code == 200
    assert hub.request("GET", f"/user/{second}/api/status", first).status_code == 403


@pytest.mark.slow
def test_the_formgrader_released_the_committed_exercise(cycle):
    assert cycle["released"] == []


@pytest.mark.slow
def test_each_student_fetched_the_release(cycle):
    for student, assignments in cycle["fetched"].items():
        assert [a["status"] for a in assignments] == ["fetched"], student


@pytest.mark.slow
def test_the_instructor_collected_both_submissions(cycle):
    submitted = sorted(p.name for p in (cycle["course"] / "submitted").iterdir())
    assert submitted == sorted(STUDENTS)


@pytest.mark.slow
def test_the_gradebook_holds_the_points_each_student_deserves(cycle):
    deserved = cycle["deserved"]
    assert 0 < deserved[STUDENTS[1]] < deserved[STUDENTS[0]] == cycle["full"]
    assert cycle["scores"] == {s: (deserved[s], cycle["full"]) for s in STUDENTS}, cycle["graded"]


@pytest.mark.slow
def test_each_student_fetched_feedback_with_their_score(cycle):
    for student, pages in cycle["pages"].items():
        assert len(pages) == 1, f"{student} fetched {len(pages)} feedback pages"
        assert f"Score: {cycle['deserved'][student]:.1f} / " in pages[0], student
        assert "(hidden tests: not shown)" in pages[0]  # the course's feedback preprocessors ran


# ----------------------------------------------------------------------------- the deployment files of docs/

DEPLOY = ROOT / "docs" / "deploy"
PIN = re.compile(r"\b([A-Za-z][A-Za-z0-9_.\-]*)==([0-9][0-9A-Za-z.+\-]*)")


def _values(name: str) -> dict:
    """A Helm values file of ``docs/deploy/``, parsed."""
    return yaml.safe_load((DEPLOY / name).read_text())


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject_pins() -> dict[str, str]:
    """Package -> version of every exact pin in ``pyproject.toml`` (dependencies and every extra)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + [s for group in project["optional-dependencies"].values() for s in group]
    return {_normal(name): version for name, version in (PIN.fullmatch(s).groups() for s in specs if PIN.fullmatch(s))}


def _requirements(path: Path) -> dict[str, str]:
    """Package -> pinned version of a requirements file (options and comments skipped)."""
    lines = [line.strip() for line in path.read_text().splitlines()]
    return dict(line.split("==") for line in lines if line and not line.startswith(("#", "-")))


def _memory(text) -> float:
    """A Kubernetes/Z2JH quantity of memory ("4G", "512Mi") in bytes."""
    number, unit = re.fullmatch(r"([0-9.]+)([KMGT]i?)?", str(text)).groups()
    powers = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    return float(number) * powers.get(unit, 1)


def test_the_pins_the_deployment_files_name_are_pyprojects():
    pins, named = _pyproject_pins(), 0
    for path in [ROOT / "docs/deploy.md", ROOT / "binder/requirements-gpu.txt", *sorted(DEPLOY.iterdir())]:
        for name, version in PIN.findall(path.read_text()):
            if _normal(name) in pins:
                named += 1
                assert version.split("+")[0] == pins[_normal(name)], f"{path.name}: {name}=={version}"
    assert named >= 14  # the GPU requirements name every runtime and course pin


def test_the_gpu_requirements_are_binders_with_pypis_torch():
    cpu, gpu = _requirements(ROOT / "binder/requirements.txt"), _requirements(ROOT / "binder/requirements-gpu.txt")
    assert gpu == {**cpu, "torch": cpu["torch"].removesuffix("+cpu")}
    assert "whl/cpu" not in (ROOT / "binder/requirements-gpu.txt").read_text()


def test_the_hub_and_ngshare_agree_on_the_service():
    hub, ngshare = _values("z2jh-values.yaml"), _values("ngshare-values.yaml")
    service = hub["hub"]["services"]["ngshare"]
    assert service["api_token"] == ngshare["ngshare"]["hub_api_token"]
    config = hub["singleuser"]["extraFiles"]["nbgrader-config"]
    assert config["mountPath"] == "/etc/jupyter/nbgrader_config.py"
    compile(config["stringData"], "nbgrader_config.py", "exec")
    assert f'configureExchange(c, "{service["url"]}/services/ngshare")' in config["stringData"]
    assert f'c.CourseDirectory.course_id = "{COURSE_ID}"' in config["stringData"]
    scope = "access:services!service=ngshare"
    assert scope in hub["hub"]["loadRoles"]["user"]["scopes"] and "self" in hub["hub"]["loadRoles"]["user"]["scopes"]
    assert scope in hub["hub"]["config"]["KubeSpawner"]["server_token_scopes"]


def test_the_course_id_is_the_courses():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert config.CourseDirectory.course_id == COURSE_ID


def test_limits_are_at_least_the_guarantees_and_the_gpu_profile_asks_for_a_gpu():
    single = _values("z2jh-values.yaml")["singleuser"]
    assert single["cpu"]["limit"] >= single["cpu"]["guarantee"] > 0
    assert _memory(single["memory"]["limit"]) >= _memory(single["memory"]["guarantee"]) >= 1.5e9
    default, gpu = single["profileList"]
    assert default["default"] and "kubespawner_override" not in default
    override = gpu["kubespawner_override"]
    assert override["image"] == f"{single['image']['name']}:{single['image']['tag']}-gpu"
    assert override["extra_resource_limits"] == {"nvidia.com/gpu": "1"}
    assert override["cpu_limit"] >= override["cpu_guarantee"] > 0
    assert _memory(override["mem_limit"]) >= _memory(override["mem_guarantee"]) > 0


def _repo2docker_options(text: str) -> list[str]:
    """The options of the ``jupyter-repo2docker`` command in ``text``, up to ``--image-name``."""
    command = re.search(r"jupyter-repo2docker ([^\n]*(?:\\\n[^\n]*)*)", text).group(1).replace("\\\n", " ")
    return command.split("--image-name")[0].split()


def _committed(path: str) -> str:
    """A file as committed (the GPU build starts from the committed tree)."""
    return subprocess.run(
        ["git", "-C", str(ROOT), "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout


def test_the_gpu_build_swaps_the_requirements_and_the_start_script(tmp_path):
    record = tmp_path / "built"
    fake = tmp_path / "bin" / "jupyter-repo2docker"
    fake.parent.mkdir()
    fake.write_text(f'#!/usr/bin/env bash\necho "$@" > {record}/args\ncp -r "${{@: -1}}/binder" {record}/binder\n')
    fake.chmod(0o755)
    record.mkdir()
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    script = DEPLOY / "build-gpu-image.sh"
    proc = subprocess.run([str(script), "example/seqlearn:gpu"], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    built = record / "binder"
    assert (built / "requirements.txt").read_text() == _committed("binder/requirements-gpu.txt")
    start = (built / "start").read_text()
    assert "SEQLEARN_DEVICE" not in start and 'exec "$@"' in start
    assert _committed("binder/start").replace(" SEQLEARN_DEVICE=cpu", "") == start
    assert "--image-name example/seqlearn:gpu" in (record / "args").read_text()
    assert _repo2docker_options(script.read_text()) == _repo2docker_options((ROOT / "docs/deploy.md").read_text())
