import math

import numpy as np
import pytest
import torch

from seqlearn.data.synthetic import ToyEnglish, agreement_examples
from seqlearn.data.vocab import Vocab
from seqlearn.tasks import (
    adding_baseline_mse,
    adding_problem,
    agreement_chance,
    agreement_task,
    copy_baseline_loss,
    copy_task,
    copy_vocab_size,
    mackey_glass,
    one_hot,
    to_torch,
)

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("halves", [True, False])
def test_adding_problem_shapes_and_statistics(halves):
    x, y = adding_problem(200_000, 10, rng=0, halves=halves)
    assert x.shape == (200_000, 10, 2) and y.shape == (200_000,) and x.dtype == np.float32
    markers = x[..., 1]
    assert (markers.sum(1) == 2).all() and set(np.unique(markers)) == {0.0, 1.0}
    np.testing.assert_allclose(y, (x[..., 0] * markers).sum(1), rtol=1e-6)
    assert y.mean() == pytest.approx(1.0, abs=0.005)
    assert ((y - 1) ** 2).mean() == pytest.approx(adding_baseline_mse(), abs=0.002)
    assert adding_baseline_mse() == pytest.approx(1 / 6)
    first, last = markers.argmax(1), 9 - markers[:, ::-1].argmax(1)
    if halves:
        assert (first < 5).all() and (last >= 5).all()
    else:
        assert (first < 5).any() and (first >= 5).any()


def test_adding_problem_is_reproducible_and_checked():
    a, b = adding_problem(5, 8, rng=3), adding_problem(5, 8, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a[0], b[0])
    with pytest.raises(ValueError, match="T must be an int >= 2, got 1"):
        adding_problem(5, 1)
    with pytest.raises(TypeError, match="n_sequences"):
        adding_problem(5.0, 8)
    with pytest.raises(ValueError, match="n_sequences"):
        adding_problem(0, 8)


def test_copy_task_layout():
    T, k, n = 6, 3, 5
    x, y = copy_task(100, T, k, n, rng=0)
    assert x.shape == y.shape == (100, T + 2 * k) and x.dtype == np.int64
    blank, delim = n, n + 1
    assert copy_vocab_size(n) == n + 2
    np.testing.assert_array_equal(y[:, T + k :], x[:, :k])
    assert (x[:, :k] < n).all() and (x[:, k : k + T - 1] == blank).all() and (x[:, k + T - 1] == delim).all()
    assert (x[:, k + T :] == blank).all() and (y[:, : T + k] == blank).all()
    assert ((x == delim).sum(1) == 1).all()


def test_copy_baseline_is_the_memoryless_cross_entropy():
    T, k, n = 20, 4, 6
    _x, y = copy_task(50, T, k, n, rng=1)
    p = np.zeros((T + 2 * k, n + 1))  # memoryless strategy: blank, then uniform over the symbols
    p[: T + k, n] = 1.0
    p[T + k :, :n] = 1.0 / n
    loss = -np.log(p[np.arange(T + 2 * k), y]).mean()
    assert loss == pytest.approx(copy_baseline_loss(T, k, n)) == pytest.approx(k * math.log(n) / (T + 2 * k))
    with pytest.raises(ValueError, match="T"):
        copy_baseline_loss(0)
    with pytest.raises(ValueError, match="k"):
        copy_task(2, 5, k=0)


def test_agreement_task():
    vocab = Vocab(ToyEnglish.vocabulary())
    x, lengths, y, distance = agreement_task(vocab, distances=[0, 3], n_per_distance=10, seed=0)
    examples = agreement_examples(distances=[0, 3], n_per_distance=10, seed=0)
    assert x.shape == (20, lengths.max()) and y.shape == distance.shape == lengths.shape == (20,)
    assert (x[:, 0] == Vocab.bos_id).all() and (lengths == [len(e.prefix) + 1 for e in examples]).all()
    assert (y == [e.number == "pl" for e in examples]).all() and sorted(set(distance)) == [0, 3]
    assert (x[np.arange(x.shape[1])[None] >= lengths[:, None]] == 0).all()
    assert agreement_chance() == 0.5
    assert y.mean() == 0.5
    with pytest.raises(TypeError, match="Vocab"):
        agreement_task(list(ToyEnglish.vocabulary()))


def test_one_hot_and_to_torch():
    ids = np.array([[0, 2], [1, 1]])
    oh = one_hot(ids, 3)
    assert oh.shape == (2, 2, 3) and (oh.argmax(-1) == ids).all() and (oh.sum(-1) == 1).all()
    with pytest.raises(ValueError, match=r"ids must hold integers in \[0, 1\], got 2"):
        one_hot(ids, 2)
    with pytest.raises(TypeError, match="integers"):
        one_hot(oh, 3)
    x, y = to_torch(*adding_problem(3, 4, rng=0), device="cpu")
    assert x.dtype == torch.float32 and x.shape == (3, 4, 2) and y.shape == (3,)


def _mackey_glass_plain(n_steps, tau=17.0, delta=0.1, subsample=10, x0=1.2):
    """The same Euler scheme written as a plain loop over Python floats."""
    D = round(tau / delta)
    y = [x0] * (D + 1)
    for _ in range(n_steps * subsample):
        lagged = y[-1 - D]
        y.append(y[-1] + delta * (0.2 * lagged / (1 + lagged**10) - 0.1 * y[-1]))
    return np.array(y[D + subsample :: subsample])


def test_mackey_glass_equals_the_plain_euler_loop():
    np.testing.assert_allclose(mackey_glass(300), _mackey_glass_plain(300), rtol=0, atol=1e-11)
    np.testing.assert_allclose(
        mackey_glass(50, tau=30, subsample=3), _mackey_glass_plain(50, 30.0, subsample=3), atol=1e-11
    )
    np.testing.assert_allclose(mackey_glass(40, discard=10), _mackey_glass_plain(50)[10:], atol=1e-11)
    np.testing.assert_allclose(mackey_glass(40, squash=True), np.tanh(_mackey_glass_plain(40) - 1), atol=1e-11)


def test_mackey_glass_tau17_statistics_match_the_literature_series():
    y = mackey_glass(10_000)  # Lukosevicius's MackeyGlass_t17.txt: mean 0.9293, var 0.0510, [0.412, 1.322]
    assert y.shape == (10_000,) and y.dtype == np.float64
    assert y.mean() == pytest.approx(0.9293, abs=0.002)
    assert y.var() == pytest.approx(0.0510, abs=0.001)
    assert y.min() == pytest.approx(0.412, abs=0.002) and y.max() == pytest.approx(1.322, abs=0.002)
    lag1 = np.corrcoef(y[:-1], y[1:])[0, 1]
    assert lag1 > 0.95  # smooth at one time unit per step


def test_mackey_glass_checks_its_arguments():
    with pytest.raises(ValueError, match="n_steps"):
        mackey_glass(0)
    with pytest.raises(TypeError, match="subsample"):
        mackey_glass(10, subsample=1.5)
    with pytest.raises(ValueError, match="tau"):
        mackey_glass(10, tau=-1)
    with pytest.raises(ValueError, match="delta"):
        mackey_glass(10, delta=20.0)
    with pytest.raises(TypeError, match="squash"):
        mackey_glass(10, squash=1)
