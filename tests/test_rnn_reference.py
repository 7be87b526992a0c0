"""The NumPy Elman RNN and its BPTT against torch autograd in float64, and clipping against torch."""

import numpy as np
import pytest
import torch

import seqlearn.rnn as rnn
from seqlearn.guard import ReferenceCallError, student_code

pytestmark = pytest.mark.usefixtures("one_thread")

NAMES = ("h0", "W_hh", "W_xh", "b_h", "W_hy", "b_y")
PHI_TORCH = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "linear": lambda z: z}


def torch_losses(x, targets, p, phi, loss, detach_before=None):
    """Per-step losses L_t, shape (..., T), of an Elman RNN written directly in torch.

    ``detach_before=m`` cuts the graph at h_m (the gradient stops there, as in truncated BPTT).
    """
    x = torch.as_tensor(x)
    h = p["h0"].expand(*x.shape[:-2], -1) if x.dim() == 3 else p["h0"]
    losses = []
    for t in range(x.shape[-2]):
        if detach_before is not None and t == detach_before:
            h = h.detach()
        h = PHI_TORCH[phi](h @ p["W_hh"].T + x[..., t, :] @ p["W_xh"].T + p["b_h"])
        y = h @ p["W_hy"].T + p["b_y"]
        if loss == "mse":
            losses.append(0.5 * ((y - torch.as_tensor(targets)[..., t, :]) ** 2).sum(-1))
        else:
            logp = torch.log_softmax(y, dim=-1)
            losses.append(-logp.gather(-1, torch.as_tensor(targets)[..., t, None]).squeeze(-1))
    return torch.stack(losses, dim=-1)


def leaf_params(params):
    return {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}


def autograd_gradients(x, targets, params, phi, loss):
    p = leaf_params(params)
    total = torch_losses(x, targets, p, phi, loss).sum()
    grads = torch.autograd.grad(total, [p[k] for k in NAMES])
    return total.item(), {k: g.numpy() for k, g in zip(NAMES, grads)}


def max_rel_error(a, b):
    return max(np.abs(a[k] - b[k]).max() / max(np.abs(b[k]).max(), 1e-300) for k in NAMES)


def problem(loss, T=9, D=3, H=5, O=4, batch=None, seed=0, rho=0.9):
    rng = np.random.default_rng(seed)
    lead = (T,) if batch is None else (batch, T)
    x = rng.standard_normal((*lead, D))
    targets = rng.standard_normal((*lead, O)) if loss == "mse" else rng.integers(0, O, lead)
    params = rnn.init_elman_params(D, H, O, rho=rho, seed=seed + 1)
    if batch is not None:
        params["h0"] = rng.standard_normal((batch, H)) * 0.3
    return x, targets, params


@pytest.mark.parametrize("phi", rnn.NONLINEARITIES)
def test_forward_matches_torch(phi):
    x, _, params = problem("mse")
    h, y = rnn.elman_forward(x, **params, phi=phi)
    p = leaf_params(params)
    hs, ht = [], p["h0"]
    for t in range(len(x)):
        ht = PHI_TORCH[phi](p["W_hh"] @ ht + p["W_xh"] @ torch.as_tensor(x[t]) + p["b_h"])
        hs.append(ht)
    h_ref = torch.stack(hs).detach().numpy()
    np.testing.assert_allclose(h, h_ref, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(y, h_ref @ params["W_hy"].T + params["b_y"], rtol=1e-13, atol=1e-14)
    assert h.shape == (9, 5) and y.shape == (9, 4)


@pytest.mark.parametrize("loss", rnn.LOSSES)
def test_loss_matches_torch(loss):
    x, targets, params = problem(loss)
    _, y = rnn.elman_forward(x, **params)
    expected, _ = autograd_gradients(x, targets, params, "tanh", loss)
    assert rnn.elman_loss(y, targets, loss) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("loss", rnn.LOSSES)
@pytest.mark.parametrize("phi", rnn.NONLINEARITIES)
def test_bptt_fast_and_unrolled_equal_autograd(phi, loss):
    x, targets, params = problem(loss, rho=1.3)
    _, expected = autograd_gradients(x, targets, params, phi, loss)
    fast = rnn.bptt_gradients(x, targets, **params, phi=phi, loss=loss)
    plain = rnn.bptt_gradients_unrolled(x, targets, **params, phi=phi, loss=loss)
    assert set(fast) == set(plain) == set(NAMES)
    for k in NAMES:
        assert fast[k].shape == params[k].shape
    assert max_rel_error(fast, expected) < 1e-10
    assert max_rel_error(plain, expected) < 1e-10
    assert max_rel_error(fast, plain) < 1e-10


@pytest.mark.parametrize("loss", rnn.LOSSES)
def test_batched_gradients_equal_autograd(loss):
    x, targets, params = problem(loss, batch=3, seed=4)
    _, expected = autograd_gradients(x, targets, params, "tanh", loss)
    assert max_rel_error(rnn.bptt_gradients(x, targets, **params, loss=loss), expected) < 1e-10
    assert max_rel_error(rnn.bptt_gradients_unrolled(x, targets, **params, loss=loss), expected) < 1e-10
    h, y = rnn.elman_forward(x, **params)
    assert h.shape == (3, 9, 5) and y.shape == (3, 9, 4)


def test_shared_h0_in_a_batch_gets_the_summed_gradient():
    x, targets, params = problem("mse", batch=3, seed=5)
    params["h0"] = params["h0"][0]
    p = leaf_params(params)
    grads = torch.autograd.grad(torch_losses(x, targets, p, "tanh", "mse").sum(), [p[k] for k in NAMES])
    ours = rnn.bptt_gradients(x, targets, **params)
    assert ours["h0"].shape == (5,)
    assert max_rel_error(ours, {k: g.numpy() for k, g in zip(NAMES, grads)}) < 1e-10


def test_gradients_are_not_trivially_equal():
    x, targets, params = problem("mse")
    a = rnn.bptt_gradients(x, targets, **params)
    params["W_hh"] = params["W_hh"] * 1.01
    b = rnn.bptt_gradients(x, targets, **params)
    assert max_rel_error(a, b) > 1e-4


# --- truncated BPTT -------------------------------------------------------------------


def truncated_autograd(x, targets, params, k1, k2, phi="tanh", loss="mse"):
    """Brute force: each block's losses backpropagated through a forward pass cut at h_{s-k2}."""
    T = x.shape[-2]
    ends = sorted({*range(k1, T + 1, k1), T})
    p = leaf_params(params)
    total = {k: np.zeros_like(v) for k, v in params.items()}
    for start, s in zip([0, *ends[:-1]], ends):
        cut = s - k2 if s - k2 > 0 else None
        block = torch_losses(x, targets, p, phi, loss, detach_before=cut)[..., start:s].sum()
        for k, g in zip(NAMES, torch.autograd.grad(block, [p[k] for k in NAMES], allow_unused=True)):
            if g is not None:
                total[k] += g.numpy()
    return total


@pytest.mark.parametrize("k1, k2", [(1, 1), (2, 3), (3, 3), (2, 5), (4, 7), (3, 20)])
@pytest.mark.parametrize("loss", rnn.LOSSES)
def test_truncated_bptt_equals_brute_force(k1, k2, loss):
    x, targets, params = problem(loss, T=10, seed=2, rho=1.2)
    expected = truncated_autograd(x, targets, params, k1, k2, loss=loss)
    fast = rnn.truncated_bptt_gradients(x, targets, **params, k1=k1, k2=k2, loss=loss)
    plain = rnn.bptt_gradients_unrolled(x, targets, **params, loss=loss, k1=k1, k2=k2)
    for k in NAMES:
        np.testing.assert_allclose(fast[k], expected[k], rtol=1e-10, atol=1e-12, err_msg=k)
        np.testing.assert_allclose(plain[k], expected[k], rtol=1e-10, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("k1", [1, 3, 10])
def test_truncated_bptt_with_k2_at_least_T_is_full_bptt(k1):
    x, targets, params = problem("mse", T=10, seed=3)
    full = rnn.bptt_gradients(x, targets, **params)
    for k2 in (10, 15):
        truncated = rnn.truncated_bptt_gradients(x, targets, **params, k1=k1, k2=max(k2, k1))
        assert max_rel_error(truncated, full) < 1e-12


def test_truncation_changes_the_gradient():
    x, targets, params = problem("mse", T=10, seed=3)
    full = rnn.bptt_gradients(x, targets, **params)
    truncated = rnn.truncated_bptt_gradients(x, targets, **params, k1=2, k2=2)
    assert np.abs(truncated["W_hh"] - full["W_hh"]).max() > 1e-3
    first_block = rnn.bptt_gradients(x[:2], targets[:2], **params)  # only block 1 reaches h0
    np.testing.assert_allclose(truncated["h0"], first_block["h0"], rtol=1e-12)
    np.testing.assert_allclose(truncated["W_hy"], full["W_hy"], rtol=1e-14)


@pytest.mark.parametrize(
    "k1, k2, error",
    [
        (0, 3, ValueError),
        (2, 0, ValueError),
        (3, 2, ValueError),
        (1.5, 3, TypeError),
        (2, None, TypeError),
        (True, 2, TypeError),
    ],
)
def test_bad_truncation(k1, k2, error):
    x, targets, params = problem("mse")
    with pytest.raises(error, match=r"k1|k2"):
        rnn.truncated_bptt_gradients(x, targets, **params, k1=k1, k2=k2)


# --- clipping -------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [0.1, 1.0, 100.0])
def test_clipping_matches_torch(threshold):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((4, 3)), rng.standard_normal(5), rng.standard_normal((2, 2, 2))]
    clipped, norm = rnn.clip_grad_norm(grads, threshold)
    tensors = [torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64)) for g in grads]
    for t, g in zip(tensors, grads):
        t.grad = torch.tensor(g)
    torch_norm = torch.nn.utils.clip_grad_norm_(tensors, threshold)
    assert norm == pytest.approx(float(torch_norm), rel=1e-14)
    for ours, t in zip(clipped, tensors):
        np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-6)  # torch divides by norm + 1e-6
    new_norm = rnn.global_grad_norm(clipped)
    assert new_norm == pytest.approx(min(norm, threshold), rel=1e-12)


def test_clipping_keeps_direction_dict_and_inputs():
    grads = {"W_hh": np.array([[3.0, 0.0], [0.0, 0.0]]), "b_h": np.array([4.0, 0.0])}
    clipped, norm = rnn.clip_grad_norm(grads, 1.0)
    assert norm == 5.0
    np.testing.assert_allclose(clipped["W_hh"], [[0.6, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(clipped["b_h"], [0.8, 0.0])
    assert grads["b_h"][0] == 4.0
    same, _ = rnn.clip_grad_norm(grads, 5.0)
    np.testing.assert_array_equal(same["b_h"], grads["b_h"])


@pytest.mark.parametrize(
    ("threshold", "error"), [(0, ValueError), (-1.0, ValueError), (float("nan"), ValueError), ("1", TypeError)]
)
def test_clipping_bad_threshold(threshold, error):
    with pytest.raises(error, match="threshold must be a finite real number > 0"):
        rnn.clip_grad_norm([np.ones(2)], threshold)


def test_clipping_bad_gradients():
    with pytest.raises(ValueError, match="NaN"):
        rnn.clip_grad_norm([np.array([1.0, np.nan])], 1.0)
    with pytest.raises(TypeError, match="list or dict"):
        rnn.clip_grad_norm(np.ones(3), 1.0)


# --- bad input ------------------------------------------------------------------------


def test_bad_shapes_are_named():
    x, targets, p = problem("mse")
    cases = [
        ({"W_hh": p["W_hh"][:, :4]}, "W_hh must be square"),
        ({"W_xh": p["W_xh"].T}, "W_xh must have shape"),
        ({"b_h": p["b_h"][:3]}, "b_h must have shape"),
        ({"h0": np.zeros(4)}, "h0 must have shape"),
        ({"W_hy": p["W_hy"][:, :3]}, "W_hy must have shape"),
        ({"b_y": p["b_y"][:2]}, "b_y must have shape"),
    ]
    for change, message in cases:
        with pytest.raises(ValueError, match=message):
            rnn.bptt_gradients(x, targets, **{**p, **change})
    with pytest.raises(ValueError, match="targets for the squared error"):
        rnn.bptt_gradients(x, targets[:, :2], **p)
    with pytest.raises(ValueError, match="x must have 2 or 3 dimensions"):
        rnn.elman_forward(x[0], **p)


def test_nan_and_bad_targets():
    x, targets, p = problem("cross_entropy")
    x[2, 1] = np.nan
    with pytest.raises(ValueError, match="x contains NaN"):
        rnn.elman_forward(x, **p)
    x, _, _ = problem("mse")
    with pytest.raises(TypeError, match="integer class ids"):
        rnn.bptt_gradients(x, targets.astype(float), **p, loss="cross_entropy")
    with pytest.raises(ValueError, match=r"class ids in \[0, 4\)"):
        rnn.bptt_gradients(x, targets + 4, **p, loss="cross_entropy")
    with pytest.raises(ValueError, match="unknown loss"):
        rnn.bptt_gradients(x, targets, **p, loss="hinge")


def test_unknown_nonlinearity():
    x, targets, p = problem("mse")
    with pytest.raises(ValueError, match="unknown nonlinearity phi='relu'"):
        rnn.elman_forward(x, **p, phi="relu")
    with pytest.raises(TypeError, match="phi must be the name"):
        rnn.bptt_gradients(x, targets, **p, phi=np.tanh)


def test_graded_references_refuse_under_grading():
    x, targets, p = problem("mse")
    for f, args in [
        (rnn.elman_forward, (x,)),
        (rnn.bptt_gradients, (x, targets)),
        (rnn.bptt_gradients_unrolled, (x, targets)),
    ]:
        with student_code(), pytest.raises(ReferenceCallError, match=f.__name__):
            f(*args, **p)
        f(*args, **p)
    with student_code(), pytest.raises(ReferenceCallError):
        rnn.clip_grad_norm([np.ones(2)], 1.0)
    with student_code(), pytest.raises(ReferenceCallError):
        rnn.truncated_bptt_gradients(x, targets, **p, k1=2, k2=3)
    assert not hasattr(rnn.elman_forward, "__wrapped__")


@pytest.mark.integration
def test_every_public_name_resolves_and_no_torch_import():
    import subprocess
    import sys

    for name in rnn.__all__:
        assert getattr(rnn, name) is not None, name
    code = "import sys, seqlearn.rnn, seqlearn.gradcheck; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("loss", rnn.LOSSES)
def test_output_error_is_the_gradient_of_the_loss_in_y(loss):
    _, targets, _ = problem(loss)
    y = torch.tensor(np.random.default_rng(7).standard_normal((9, 4)), requires_grad=True)
    if loss == "mse":
        total = 0.5 * ((y - torch.tensor(targets)) ** 2).sum()
    else:
        total = torch.nn.functional.cross_entropy(y, torch.tensor(targets), reduction="sum")
    (expected,) = torch.autograd.grad(total, y)
    ours = rnn.output_error(y.detach().numpy(), targets, loss)
    np.testing.assert_allclose(ours, expected.numpy(), rtol=1e-12, atol=1e-15)
    assert rnn.elman_loss(y.detach().numpy(), targets, loss) == pytest.approx(total.item(), rel=1e-13)
