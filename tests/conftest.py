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
