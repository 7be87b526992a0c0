import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from seqlearn.losses import masked_cross_entropy
from seqlearn.nlm import basics


def random_batch(shape=(4, 7), V=11, seed=0, dtype=torch.float64, p_real=0.6):
    g = torch.Generator().manual_seed(seed)
    logits = (3 * torch.randn(*shape, V, generator=g)).to(dtype)
    targets = torch.randint(0, V, shape, generator=g)
    mask = torch.rand(shape, generator=g) < p_real
    mask.view(-1)[0] = True
    return logits, targets, mask


@pytest.mark.parametrize("shape", [(5,), (4, 7), (2, 3, 5)])
def test_matches_the_numpy_reference(shape):
    logits, targets, mask = random_batch(shape, seed=len(shape))
    got = masked_cross_entropy(logits, targets, mask).item()
    want = basics.masked_cross_entropy(logits.numpy(), targets.numpy(), mask.numpy())
    assert got == pytest.approx(want, rel=1e-12)


def test_matches_cross_entropy_with_ignore_index():
    logits, targets, mask = random_batch((6, 9), V=20, seed=1)
    padded_targets = targets.masked_fill(~mask, -100)  # padding holds an id outside the vocabulary
    want = F.cross_entropy(logits.reshape(-1, 20), padded_targets.reshape(-1), ignore_index=-100)
    assert masked_cross_entropy(logits, padded_targets, mask).item() == pytest.approx(want.item(), rel=1e-12)


def test_hand_computed_value():
    # two real tokens of uniform 4-way predictions and one padded token with a huge loss
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [100.0, 0.0, 0.0, 0.0]])
    targets = torch.tensor([0, 3, 1])
    mask = torch.tensor([1.0, 1.0, 0.0])
    assert masked_cross_entropy(logits, targets, mask).item() == pytest.approx(math.log(4), rel=1e-6)


def test_padding_never_dilutes_or_changes_the_loss():
    logits, targets, mask = random_batch((3, 8), seed=2)
    base = masked_cross_entropy(logits, targets, mask)
    # change everything at padded positions
    logits2 = torch.where(mask[..., None], logits, 50 * torch.randn_like(logits))
    targets2 = torch.where(mask, targets, 0)
    assert masked_cross_entropy(logits2, targets2, mask).item() == pytest.approx(base.item(), rel=1e-12)
    # append a block of padding: the mean over real tokens is unchanged
    wide_logits = torch.cat([logits, torch.zeros(3, 5, logits.shape[-1], dtype=logits.dtype)], dim=1)
    wide = masked_cross_entropy(
        wide_logits,
        torch.cat([targets, torch.zeros(3, 5, dtype=torch.long)], 1),
        torch.cat([mask, torch.zeros(3, 5, dtype=torch.bool)], 1),
    )
    assert wide.item() == pytest.approx(base.item(), rel=1e-12)


def test_no_mask_is_the_plain_mean_and_float_masks_work():
    logits, targets, mask = random_batch((4, 5), seed=3)
    everything = masked_cross_entropy(logits, targets, None)
    assert everything.item() == pytest.approx(F.cross_entropy(logits.reshape(-1, 11), targets.reshape(-1)).item())
    as_float = masked_cross_entropy(logits, targets, mask.double())
    assert as_float.item() == pytest.approx(masked_cross_entropy(logits, targets, mask).item(), rel=1e-14)


def test_gradient_is_the_closed_form():
    logits, targets, mask = random_batch((5, 6), V=7, seed=4)
    logits.requires_grad_(True)
    masked_cross_entropy(logits, targets, mask).backward()
    # dL/dy_t = m_t (softmax(y_t) - onehot(w_t)) / sum_t m_t
    m = mask.double()[..., None]
    want = m * (torch.softmax(logits.detach(), -1) - F.one_hot(targets, 7).double()) / mask.sum()
    assert torch.allclose(logits.grad, want, atol=1e-14, rtol=0)
    assert torch.all(logits.grad[~mask] == 0)


def test_gradcheck_float64():
    logits, targets, mask = random_batch((3, 4), V=5, seed=5)
    logits.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda y: masked_cross_entropy(y, targets, mask), (logits,))


def test_float32_agrees_with_float64_in_value_and_gradient():
    logits64, targets, mask = random_batch((8, 10), V=30, seed=6)
    logits32 = logits64.float().requires_grad_(True)
    logits64.requires_grad_(True)
    loss32, loss64 = masked_cross_entropy(logits32, targets, mask), masked_cross_entropy(logits64, targets, mask)
    assert loss32.dtype == torch.float32
    assert loss32.item() == pytest.approx(loss64.item(), rel=1e-6)
    loss32.backward()
    loss64.backward()
    assert torch.allclose(logits32.grad.double(), logits64.grad, atol=1e-7)


def test_extreme_logits_are_stable():
    logits = torch.tensor([[1000.0, -1000.0, 0.0], [-1e4, -1e4, -1e4 + 1]])
    targets = torch.tensor([0, 2])
    loss = masked_cross_entropy(logits, targets)
    want = (0.0 + (np.log(2 * np.exp(-1) + 1))) / 2
    assert torch.isfinite(loss) and loss.item() == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda y, w, m: (y[:, :-1], w, m), ValueError, "shape"),
        (lambda y, w, m: (y, w, m[:, :-1]), ValueError, "mask must have the shape"),
        (lambda y, w, m: (y, w, torch.zeros_like(m)), ValueError, "selects no token"),
        (lambda y, w, m: (y, w.double(), m), TypeError, "integer"),
        (lambda y, w, m: (y, w > 0, m), TypeError, "integer"),
        (lambda y, w, m: (y.long(), w, m), TypeError, "floating-point"),
        (lambda y, w, m: (y.numpy(), w, m), TypeError, "torch tensors"),
        (lambda y, w, m: (y, w, m.numpy()), TypeError, "mask"),
        (lambda y, w, m: (y, w, 2 * m.long()), ValueError, "only 0"),
        (lambda y, w, m: (torch.where(m[..., None], float("nan"), y), w, m), ValueError, "NaN"),
        (lambda y, w, m: (y, torch.where(m, 11, w), m), ValueError, "target id 11 is outside"),
        (lambda y, w, m: (y, torch.where(m, -1, w), m), ValueError, "outside the vocabulary"),
    ],
)
def test_bad_input(make, error, words):
    logits, targets, mask = make(*random_batch((3, 4), seed=7))
    with pytest.raises(error, match=words):
        masked_cross_entropy(logits, targets, mask)


def test_no_targets_is_an_error():
    with pytest.raises(ValueError, match="zero tokens"):
        masked_cross_entropy(torch.zeros(0, 5), torch.zeros(0, dtype=torch.long))


def test_the_loss_is_a_graded_reference():
    from seqlearn.guard import ReferenceCallError, student_code

    logits, targets = torch.randn(3, 5), torch.tensor([1, 2, 3])
    with student_code(), pytest.raises(ReferenceCallError, match="masked_cross_entropy"):
        masked_cross_entropy(logits, targets)
