"""`make lab` run headless prints a URL that opens Chapter 1 (not the Launcher)."""

import os
import re
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _printed_url(server: subprocess.Popen, port: int, deadline: float) -> str | None:
    """The first URL with the port that JupyterLab prints (on stderr), or None if it stops first."""
    assert server.stderr is not None
    while time.monotonic() < deadline:
        line = server.stderr.readline()
        if not line and server.poll() is not None:
            return None
        found = re.search(rf"http://127\.0\.0\.1:{port}/\S+", line)
        if found:
            return found.group(0)
    return None


def _page(url: str, deadline: float) -> str:
    """The page at ``url`` once the server answers (it may print its URL before it listens)."""
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.integration
def test_the_url_make_lab_prints_opens_chapter_1(tmp_path):
    port = _free_port()
    args = f"--no-browser --ip 127.0.0.1 --port {port} --ServerApp.token=t0k3n"
    dry_run = subprocess.run(["make", "-n", "lab", f"LAB_ARGS={args}"], cwd=ROOT, capture_output=True, text=True)
    (lab,) = [line for line in dry_run.stdout.splitlines() if re.search(r"/jupyter lab\s", line)]
    assert lab.rstrip().endswith("chapters/01_ngram.ipynb"), "a browser opens Chapter 1 too"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)}
    server = subprocess.Popen(["bash", "-c", lab], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        url = _printed_url(server, port, time.monotonic() + 90)
        assert url is not None, f"JupyterLab printed no URL (exit code {server.poll()})"
        address, _, query = url.partition("?")  # a token given on the command line is printed as "..."
        assert address == f"http://127.0.0.1:{port}/lab/tree/chapters/01_ngram.ipynb" and query.startswith("token=")
        assert "JupyterLab" in _page(f"{address}?token=t0k3n", time.monotonic() + 60)
    finally:
        server.terminate()
        server.wait(timeout=30)
