import numpy as np
import pytest
import torch

from seqlearn.device import default_device, resolve_device, seed_everything


def test_env_var_overrides_choice(monkeypatch):
    monkeypatch.setenv("SEQLEARN_DEVICE", "cpu")
    assert default_device() == torch.device("cpu")


def test_default_prefers_cuda_when_present(monkeypatch):
    monkeypatch.delenv("SEQLEARN_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else default_device().type
    assert default_device().type == expected
    if not torch.cuda.is_available():
        assert default_device().type in ("mps", "cpu")


def test_resolve_device_rejects_bad_names():
    with pytest.raises(ValueError, match="not a device name"):
        resolve_device("gpu-please")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            resolve_device("cuda")


def test_bad_env_var_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("SEQLEARN_DEVICE", "tpu9")
    with pytest.raises(ValueError, match="tpu9"):
        default_device()


def test_seed_everything_makes_all_generators_repeat():
    rng = seed_everything(7)
    a = (np.random.rand(), torch.rand(1).item(), rng.random())  # noqa: NPY002 (the global generator)
    rng = seed_everything(7)
    b = (np.random.rand(), torch.rand(1).item(), rng.random())  # noqa: NPY002 (the global generator)
    assert a == b


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_seed_everything_rejects_bad_seeds(seed):
    with pytest.raises((TypeError, ValueError)):
        seed_everything(seed)


@pytest.mark.gpu
def test_cuda_device_is_default_and_usable(monkeypatch):
    monkeypatch.delenv("SEQLEARN_DEVICE", raising=False)
    dev = default_device()
    assert dev.type == "cuda"
    x = torch.arange(4.0, device=dev)
    assert x.sum().item() == 6.0


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (None, "avx2"),
        ("1", "avx2"),
        ("", "avx2"),
        ("0", "native"),
        ("native", "native"),
        ("OFF", "native"),
        ("baseline", "baseline"),
    ],
)
def test_the_pins_are_avx2_unless_switched(value, path):
    from seqlearn.device import CPU_KERNEL_BASELINE, CPU_KERNEL_PINS, KERNEL_THREADS, kernel_env, kernel_path

    env = {"PATH": "/bin"} if value is None else {"PATH": "/bin", "SEQLEARN_PIN_KERNELS": value}
    assert kernel_path(env) == path
    pins = {"avx2": CPU_KERNEL_PINS, "baseline": CPU_KERNEL_BASELINE, "native": {}}[path]
    assert kernel_env(env) == {**pins, **KERNEL_THREADS, **env}
    assert kernel_env({**env, "OMP_NUM_THREADS": "4"})["OMP_NUM_THREADS"] == "4"  # the caller's own setting wins


def test_the_baseline_pins_set_every_variable_the_avx2_pins_set_to_another_value():
    from seqlearn.device import CPU_KERNEL_BASELINE, CPU_KERNEL_PINS

    assert CPU_KERNEL_BASELINE.keys() == CPU_KERNEL_PINS.keys()
    assert all(CPU_KERNEL_BASELINE[k] != CPU_KERNEL_PINS[k] for k in CPU_KERNEL_PINS)


def test_a_pin_switch_that_means_nothing_is_refused():
    from seqlearn.device import kernel_path

    with pytest.raises(ValueError, match=r"SEQLEARN_PIN_KERNELS must be 1 .* got 'maybe'"):
        kernel_path({"SEQLEARN_PIN_KERNELS": "maybe"})
