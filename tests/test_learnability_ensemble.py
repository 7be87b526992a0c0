"""Chapter 5's ensembles: train_ensemble against one train_regressor call per member.

The reference is the plain loop, ``train_regressor(models[m], trains[m], vals[m], ..., seed=seeds[m])``
for each member: the same final parameters, per-epoch losses, best epoch, Adam state and
diagnostics, in float64 to 1e-10 and in float32 to round-off (at the chapter's sizes, bit for bit).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from seqlearn.learnability.effective_rates import adaptive_rates
from seqlearn.learnability.ensemble import _Stacked, train_ensemble
from seqlearn.learnability.models import ARCHITECTURES
from seqlearn.learnability.pipeline import diagnose
from seqlearn.learnability.task import GatedRegressor, delayed_regression, train_regressor

T, D, H, LAGS, COEFFS = 12, 3, 4, (2, 4), (0.6, 0.4)
SEEDS = (3, 7)
RUN = {"epochs": 3, "batch_size": 16, "lr": 2e-2, "weight_decay": 1e-3, "clip": 1.0}  # a short last batch


def _cast(task, dtype, scale: float = 1.0):
    return dataclasses.replace(task, x=task.x.to(dtype), y=(scale * task.y).to(dtype))


def _tasks(seeds, dtype, n=40, n_val=12, scale=(1.0, 30.0)):
    """Each member's training and validation sets; the second's targets scaled, so only its gradient is clipped."""
    trains, vals = [], []
    for s, k in zip(seeds, scale):
        train = delayed_regression(n, T, D, LAGS, COEFFS, seed=s)
        val = delayed_regression(n_val, T, D, LAGS, COEFFS, seed=s + 10_000, u=train.u)
        trains.append(_cast(train, dtype, k))
        vals.append(_cast(val, dtype, k))
    return trains, vals


def _models(arch, seeds, dtype, layernorm=True):
    return [GatedRegressor(arch, D, H, s0=0.2, layernorm=layernorm, seed=s, dtype=dtype) for s in seeds]


def _both(arch, dtype, layernorm=True, seeds=SEEDS):
    """(reference models, their (history, optimizer)), (ensemble models, theirs), and the data."""
    trains, vals = _tasks(seeds, dtype)
    alone = _models(arch, seeds, dtype, layernorm)
    reference = [
        train_regressor(m, tr, va, seed=s, progress=False, **RUN) for m, tr, va, s in zip(alone, trains, vals, seeds)
    ]
    together = _models(arch, seeds, dtype, layernorm)
    fitted = train_ensemble(together, trains, vals, seeds, progress=False, **RUN)
    return (alone, reference), (together, fitted), (trains, vals)


def _close(a, b, rtol):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())


CASES = [(arch, True) for arch in ARCHITECTURES] + [("const", False), ("shared", False), ("diag", False)]


@pytest.mark.parametrize("arch, layernorm", CASES)
def test_float64_members_equal_separate_training(arch, layernorm):
    (alone, reference), (together, fitted), _ = _both(arch, torch.float64, layernorm)
    for a, b, (h_a, opt_a), (h_b, opt_b) in zip(alone, together, reference, fitted):
        for p, q in zip(a.parameters(), b.parameters()):
            _close(q.detach(), p.detach(), 1e-10)
        _close(h_b.train_loss, h_a.train_loss, 1e-10)
        _close(h_b.val_loss, h_a.val_loss, 1e-10)
        assert h_b.best_epoch == h_a.best_epoch and len(h_b.train_loss) == RUN["epochs"]
        _close(adaptive_rates(b.cell, opt_b), adaptive_rates(a.cell, opt_a), 1e-10)
        for p, q in zip(a.parameters(), b.parameters()):
            state_a, state_b = opt_a.state[p], opt_b.state[q]
            assert float(state_b["step"]) == float(state_a["step"])
            _close(state_b["exp_avg"], state_a["exp_avg"], 1e-10)
            _close(state_b["exp_avg_sq"], state_a["exp_avg_sq"], 1e-10)


def test_each_member_is_clipped_by_its_own_norm():
    """The second member's targets are 30 times larger: clipped together, the first member would move less."""
    trains, _ = _tasks(SEEDS, torch.float64)
    stacked = _Stacked(_models("diag", SEEDS, torch.float64))
    x = torch.stack([t.x[:16] for t in trains])
    y = torch.stack([t.y[:16] for t in trains])
    stacked.losses(x, y).sum().backward()
    norms = [torch.linalg.vector_norm(torch.stack([p.grad[m].norm() for p in stacked.params.values()])) for m in (0, 1)]
    assert float(norms[0]) < RUN["clip"] < float(norms[1])
    stacked.clip(RUN["clip"])
    clipped = [
        torch.linalg.vector_norm(torch.stack([p.grad[m].norm() for p in stacked.params.values()])) for m in (0, 1)
    ]
    assert float(clipped[0]) == pytest.approx(float(norms[0]), rel=1e-12)
    assert float(clipped[1]) == pytest.approx(RUN["clip"], rel=1e-6)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_float32_members_equal_separate_training_to_round_off(arch):
    (alone, reference), (together, fitted), _ = _both(arch, torch.float32)
    for a, b, (h_a, _), (h_b, _) in zip(alone, together, reference, fitted):
        for p, q in zip(a.parameters(), b.parameters()):
            _close(q.detach(), p.detach(), 1e-4)
        _close(h_b.train_loss, h_a.train_loss, 1e-5)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_at_the_chapters_sizes_a_batch_gradient_is_the_members_to_round_off(arch):
    """Batch 128, D = 8, H = 32 (shorter sequences): every kernel and every sum of autograd, member by member.

    Bit for bit on the CPUs measured, but a batched matrix product may sum in another order on another CPU."""
    models = [GatedRegressor(arch, 8, 32, seed=s) for s in (0, 1, 2)]
    g = torch.Generator().manual_seed(5)
    x, y = torch.randn(3, 128, 16, 8, generator=g), torch.randn(3, 128, 16, generator=g)
    expected = []
    for model, x_m, y_m in zip(models, x, y):
        loss = torch.mean((model(x_m) - y_m) ** 2)
        loss.backward()
        expected.append(loss.detach())
    stacked = _Stacked(models)
    losses = stacked.losses(x, y)
    losses.sum().backward()
    _close(losses.detach(), torch.stack(expected), 1e-6)
    for name, p in stacked.params.items():
        _close(p.grad, torch.stack([m.get_parameter(name).grad for m in models]), 1e-5)


def test_diagnostics_read_the_ensembles_optimizer_unchanged():
    (alone, reference), (together, fitted), (trains, _) = _both("gru", torch.float64)
    diag = delayed_regression(24, T, D, LAGS, COEFFS, seed=99, u=trains[0].u)
    diag = _cast(diag, torch.float64)
    a = diagnose(alone[0], reference[0][1], diag, [1, 2, 4], K=2, chunk=10, progress=False)
    b = diagnose(together[0], fitted[0][1], diag, [1, 2, 4], K=2, chunk=10, progress=False)
    for name in ("f", "f_gates", "unit_mass", "mean", "alpha", "sigma"):
        _close(getattr(b, name), getattr(a, name), 1e-9)
    assert b.r2 == pytest.approx(a.r2, rel=1e-10)


def test_a_member_alone_is_the_same_as_in_company():
    trains, vals = _tasks(SEEDS, torch.float64)
    pair = _models("lstm", SEEDS, torch.float64)
    train_ensemble(pair, trains, vals, SEEDS, progress=False, **RUN)
    single = _models("lstm", SEEDS[1:], torch.float64)
    train_ensemble(single, trains[1:], vals[1:], SEEDS[1:], progress=False, **RUN)
    for p, q in zip(pair[1].parameters(), single[0].parameters()):
        _close(q.detach(), p.detach(), 1e-12)


def test_the_trained_members_own_their_optimizer_state():
    _, (together, fitted), _ = _both("const", torch.float64)
    first, second = (opt for _, opt in fitted)
    p, q = next(together[0].parameters()), next(together[1].parameters())
    assert first.state[p]["step"] is not second.state[q]["step"]
    before = second.state[q]["exp_avg"].clone()
    first.state[p]["exp_avg"].add_(1.0)
    assert torch.equal(second.state[q]["exp_avg"], before)


def _bad(**change):
    trains, vals = _tasks(SEEDS, torch.float32)
    args = {"models": _models("diag", SEEDS, torch.float32), "trains": trains, "vals": vals, "seeds": SEEDS}
    args.update(change)
    train_ensemble(**args, epochs=1, progress=False)


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"models": []}, ValueError, "non-empty"),
        ({"seeds": ()}, ValueError, "one length"),
        ({"seeds": (3, 3)}, ValueError, "distinct"),
        ({"seeds": (3, -1)}, ValueError, "seeds"),
        ({"models": [GatedRegressor("diag", D, H, seed=3), GatedRegressor("gru", D, H, seed=7)]}, ValueError, "share"),
        (
            {"models": [GatedRegressor("diag", D, H, seed=3), GatedRegressor("diag", D, H + 1, seed=7)]},
            ValueError,
            "share",
        ),
        (
            {
                "models": [
                    GatedRegressor("diag", D, H, seed=3),
                    GatedRegressor("diag", D, H, seed=7, dtype=torch.float64),
                ]
            },
            ValueError,
            "share",
        ),
        ({"models": [GatedRegressor("diag", D, H, seed=3), torch.nn.Linear(2, 2)]}, TypeError, "GatedRegressor"),
        ({"trains": _tasks(SEEDS, torch.float32)[0][:1]}, ValueError, "one length"),
        (
            {"vals": [_tasks(SEEDS, torch.float32)[1][0], _tasks(SEEDS, torch.float32, n_val=13)[1][1]]},
            ValueError,
            "vals",
        ),
        ({"trains": _tasks(SEEDS, torch.float64)[0]}, TypeError, "dtype"),
        ({"trains": [None, None]}, TypeError, "DelayedRegression"),
    ],
)
def test_bad_members_are_refused(change, error, message):
    with pytest.raises(error, match=message):
        _bad(**change)
