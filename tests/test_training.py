import math

import pytest
import torch

from seqlearn.training import History, evaluate, fit, to_device


def regression_data(n=256, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    return [(x[i : i + 32], y[i : i + 32]) for i in range(0, n, 32)]


def mse(model, batch):
    x, y = batch
    return torch.mean((model(x).squeeze(-1) - y) ** 2), len(y)


def test_fit_learns_a_linear_map():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hist = fit(model, mse, opt, regression_data(), regression_data(seed=1), epochs=30, device="cpu", progress=False)
    assert hist.val_loss[-1] < 1e-4
    assert hist.seconds > 0
    assert torch.allclose(model.weight.detach(), torch.tensor([[1.0, -2.0, 0.5]]), atol=1e-2)


def test_evaluate_is_a_token_weighted_mean():
    model = torch.nn.Linear(1, 1)
    batches = [(torch.zeros(1, 1), torch.ones(1)), (torch.zeros(3, 1), torch.full((3,), 3.0))]
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    # per-item squared errors: 1 (one item) and 9 (three items) -> (1 + 27) / 4
    assert math.isclose(evaluate(model, mse, batches, device="cpu"), 7.0)


def test_early_stopping_restores_the_best_weights(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    # validation targets are the negated map: training moves away from them after epoch 0
    val = [(x, -y) for x, y in regression_data(seed=1)]
    ckpt = tmp_path / "best.pt"
    hist = fit(
        model,
        mse,
        opt,
        regression_data(),
        val,
        epochs=50,
        patience=2,
        checkpoint_path=ckpt,
        device="cpu",
        progress=False,
    )
    assert hist.stopped_early and len(hist.val_loss) == hist.best_epoch + 3
    assert math.isclose(evaluate(model, mse, val, device="cpu"), hist.best_val_loss, rel_tol=1e-6)
    saved = torch.load(ckpt)
    assert torch.equal(saved["weight"], model.weight.detach())


def test_clipping_bounds_the_step():
    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(0.0)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    batch = [(torch.ones(1, 1), torch.full((1,), 1000.0))]
    fit(model, mse, opt, batch, epochs=1, clip_grad_norm=0.5, device="cpu", progress=False)
    assert math.isclose(model.weight.item(), 0.5, rel_tol=1e-6)


def test_non_finite_loss_is_reported():
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = [(torch.full((1, 1), float("nan")), torch.ones(1))]
    with pytest.raises(ValueError, match="loss became nan"):
        fit(model, mse, opt, batch, epochs=1, device="cpu", progress=False)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"epochs": 0}, "epochs"), ({"patience": 2}, "val_batches"), ({"clip_grad_norm": -1.0}, "clip_grad_norm")],
)
def test_bad_arguments(kwargs, message):
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=message):
        fit(model, mse, opt, regression_data(), device="cpu", progress=False, **kwargs)


def test_to_device_handles_nested_batches():
    batch = {"x": torch.ones(2), "pair": (torch.zeros(1), 3)}
    moved = to_device(batch, torch.device("cpu"))
    assert moved["pair"][1] == 3 and moved["x"].device.type == "cpu"


def test_history_without_validation():
    assert History().best_val_loss is None


@pytest.mark.gpu
def test_fit_on_cuda_matches_cpu():
    results = []
    for device in ("cpu", "cuda"):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        fit(model, mse, opt, regression_data(), epochs=5, device=device, progress=False)
        results.append(model.weight.detach().cpu())
    assert torch.allclose(results[0], results[1], atol=1e-5)
