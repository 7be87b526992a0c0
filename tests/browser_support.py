"""What the browser tests share: Debian's chromium driven by Playwright, a JupyterLab server on
a free port, and the directory where a test leaves its screenshots.

A browser test calls :func:`require_browser` first (it skips the test, with the reason, where
``/usr/bin/chromium`` or the ``playwright`` module is missing), then opens pages with
:func:`launch_chromium`; :func:`jupyter_lab` serves a directory for it. Everything these start
is stopped when their ``with`` block ends, whether the test passed or failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
# The network here (and in CI) is closed: without the background-networking flags chromium's
# own connections are refused and pages stall.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
ARTIFACTS = ROOT / "build" / "test-artifacts"
# JupyterLab's user settings for a test: no news or update checks (the network is closed), and
# every cell of a notebook kept in the page, so that a test can read all of their prompts.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def require_browser() -> None:
    """Skip the calling test, saying which, where chromium or Playwright is not installed."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian's chromium package)")
    pytest.importorskip("playwright.sync_api", reason="the playwright module is not installed")


def artifacts_dir(name: str) -> Path:
    """An empty ``build/test-artifacts/<name>/`` for a test's screenshots and logs (kept after the run)."""
    path = ARTIFACTS / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


@contextlib.contextmanager
def launch_chromium(**launch_options) -> Iterator:
    """Debian's chromium, headless, as a Playwright ``Browser`` (closed when the block ends).

    Playwright starts every launch with a fresh temporary profile (``--user-data-dir``) and
    deletes it on close. ``launch_options`` go to ``playwright.chromium.launch``.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS), headless=True, **launch_options
        )
        try:
            yield browser
        finally:
            browser.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class LabServer:
    """A running JupyterLab: where it serves and the token that opens it."""

    port: int
    token: str
    root_dir: Path
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "lab") -> str:
        """The address of ``path`` on this server, with the token (it logs the browser in)."""
        return f"{self.base_url}/{path}?token={self.token}"


def lab_environment(base: Path, **extra: str) -> dict[str, str]:
    """Environment variables for a JupyterLab whose settings and runtime files stay under ``base``.

    ``MPLBACKEND`` is removed, so that the kernels draw figures inline as in a reader's Lab;
    ``extra`` (``HOME``, ``JUPYTER_CONFIG_DIR``, ...) is added last.
    """
    settings = base / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(base / "lab-workspaces"),
        JUPYTER_RUNTIME_DIR=str(base / "jupyter-runtime"),
        **extra,
    )
    return env


@contextlib.contextmanager
def jupyter_lab(root_dir: Path, env: dict[str, str], log: Path, timeout: float = 60) -> Iterator[LabServer]:
    """Serve ``root_dir`` with this environment's JupyterLab on a free port of 127.0.0.1.

    The server's output goes to ``log``. The block starts once the server answers; when it
    ends, the server is stopped (it shuts its kernels down) and any process it left is killed.
    """
    server = LabServer(free_port(), secrets.token_hex(16), root_dir, log)
    command = [
        str(Path(sys.executable).with_name("jupyter")),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={server.port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.token={server.token}",
        f"--ServerApp.root_dir={root_dir}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=root_dir, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_until_serving(server, process, timeout)
        yield server
    finally:
        _stop(process)


def _wait_until_serving(server: LabServer, process: subprocess.Popen, timeout: float) -> None:
    """Return once the server answers its status API; fail if it exits or takes over ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"JupyterLab exited with {process.returncode}:\n{server.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(server.url("api/status"), timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)  # polled: the server is still starting
    raise AssertionError(f"JupyterLab did not answer within {timeout} s:\n{server.log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen, grace: float = 20) -> None:
    """Stop a server with SIGTERM (it shuts down its kernels), then kill whatever of it is left.

    Kernels run in sessions of their own, so the server's descendants are listed (with psutil,
    which IPython requires) before it stops, and any still running after it are killed.
    """
    import psutil

    try:
        family = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    _, alive = psutil.wait_procs(family, timeout=grace)
    for leftover in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            leftover.kill()
