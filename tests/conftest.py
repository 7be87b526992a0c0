"""Shared test configuration: ``gpu`` tests are skipped where torch sees no CUDA device."""

import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_collection_modifyitems(config, items):
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def one_thread():
    """Torch on one CPU thread for a module: small models train as fast, and other processes
    on the cores cannot stall its threads (use with ``pytest.mark.usefixtures``)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def replayable_hidden_draws(monkeypatch):
    """Hidden grading cases from one fixed draw, so a test of the hints on hidden cases cannot flake."""
    from seqlearn.grading import checks

    draw = checks.hidden_rngs
    monkeypatch.setattr(checks, "hidden_rngs", lambda n, entropy=None: draw(n, 20260101))
