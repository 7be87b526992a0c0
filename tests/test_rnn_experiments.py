"""The chapters' experiments over seeds and lengths: the lag-gradient grid and the task cliffs."""

import numpy as np
import pytest
import torch

import seqlearn.rnn as rnn
from seqlearn.tasks import adding_baseline_mse

pytestmark = pytest.mark.usefixtures("one_thread")


def test_lag_gradient_norms_are_the_mean_of_gradient_norm_vs_lag():
    norms = rnn.lag_gradient_norms([0.9, 1.3], [0.0, 0.5], lag=12, H=10, seeds=(0, 1))
    assert norms.shape == (2, 2)
    for j, rho in enumerate((0.9, 1.3)):
        W = rnn.random_recurrent_matrix(10, rho, seed=0)
        for i, sigma in enumerate((0.0, 0.5)):
            expected = np.mean([rnn.gradient_norm_vs_lag(W, 12, input_std=sigma, seed=s)[12] for s in (0, 1)])
            assert norms[i, j] == pytest.approx(expected, rel=1e-12)


def test_without_input_tanh_is_linear_at_the_fixed_point():
    """h stays at 0, phi'(0) = 1: the product is W_hh^l, whatever the seed."""
    W = rnn.random_recurrent_matrix(16, 1.2, seed=0)
    (norm,) = rnn.lag_gradient_norms([1.2], [0.0], lag=20, H=16).ravel()
    assert norm == pytest.approx(np.linalg.norm(np.linalg.matrix_power(W, 20), 2), rel=1e-10)


def test_input_strength_decides_between_vanishing_and_exploding_at_rho_above_one():
    weak, strong = rnn.lag_gradient_norms([1.5], [0.1, 1.0], lag=60, H=64).ravel()
    assert weak > 1 > strong


@pytest.mark.parametrize("bad", [dict(rhos=[]), dict(input_stds=[-1.0]), dict(seeds=())])
def test_lag_gradient_norms_rejects_bad_input(bad):
    args = dict(rhos=[1.0], input_stds=[0.1], lag=5, seeds=(0,)) | bad
    with pytest.raises(ValueError, match=r"rhos|input_stds"):
        rnn.lag_gradient_norms(**args)


def test_adding_cliff_table_matches_one_run_of_fit_task():
    from seqlearn.rnn import SequenceRNN, fit_task
    from seqlearn.tasks import adding_problem

    cliff = rnn.task_cliff(
        "adding", [4, 6], seeds=(0, 1), n_train=64, n_val=32, hidden_size=4, epochs=2, keep_models=True, device="cpu"
    )
    assert cliff.relative_loss.shape == (2, 2) and cliff.lengths == (4, 6) and cliff.seeds == (0, 1)
    x, y = adding_problem(64, 6, rng=1)
    xv, yv = adding_problem(32, 6, rng=10_001)
    model = SequenceRNN(2, 4, 1, seed=1)
    hist = fit_task(model, x, y, xv, yv, loss="mse", lr=1e-2, epochs=2, clip_grad_norm=1.0, device="cpu", seed=1)
    assert cliff.relative_loss[1, 1] == pytest.approx(min(hist.val_loss) / adding_baseline_mse(), rel=1e-6)
    np.testing.assert_allclose(cliff.curves[1, 1], np.array(hist.val_loss) / adding_baseline_mse(), rtol=1e-6)
    assert sorted(cliff.models) == [(0, 4), (0, 6), (1, 4), (1, 6)]
    for kept, trained in zip(cliff.models[1, 6].parameters(), model.parameters()):
        assert torch.equal(kept, trained)  # the best epoch's weights, as fit_task leaves them
    low, high = cliff.spread()
    assert np.all(low <= cliff.median()) and np.all(cliff.median() <= high)
    assert list(cliff.table()) == [4, 6] and len(cliff.table()[4]) == 2


def test_copy_cliff_runs_a_given_model_on_one_hot_copy_sequences():
    import math

    import torch

    from seqlearn.rnn import fit_task
    from seqlearn.tasks import copy_task

    made = []

    def make_model(seed):
        made.append(seed)
        return rnn.SequenceRNN(6, 5, 5, many_to_one=False, seed=seed)

    cliff = rnn.task_cliff(
        "copy", [3], seeds=(2,), make_model=make_model, n_train=32, n_val=16, epochs=1, copy_symbols=4, copy_k=2,
        device="cpu",
    )  # fmt: skip
    assert made == [2] and cliff.task == "copy"
    ids, y = copy_task(32, 3, 2, 4, rng=2)
    ids_v, y_v = copy_task(16, 3, 2, 4, rng=10_002)
    x, x_v = (torch.eye(6)[torch.as_tensor(i)] for i in (ids, ids_v))  # one-hot, (B, T + 2k, n + 2)
    hist = fit_task(rnn.SequenceRNN(6, 5, 5, many_to_one=False, seed=2), x, y, x_v, y_v, loss="ce", epochs=1,
                    device="cpu", seed=2)  # fmt: skip
    baseline = 2 * math.log(4) / (3 + 2 * 2)
    assert cliff.relative_loss[0, 0] == pytest.approx(min(hist.val_loss) / baseline, rel=1e-6)


def test_task_cliff_in_forked_workers_equals_one_process():
    args = dict(seeds=(0, 1), n_train=48, n_val=16, hidden_size=4, epochs=2, keep_models=True, device="cpu")
    one = rnn.task_cliff("adding", [4, 5], workers=1, **args)
    two = rnn.task_cliff("adding", [4, 5], workers=2, **args)
    np.testing.assert_allclose(two.relative_loss, one.relative_loss, rtol=1e-6)
    assert sorted(two.models) == sorted(one.models)
    for a, b in zip(one.models[1, 5].parameters(), two.models[1, 5].parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_task_cliff_rejects_empty_input_and_unknown_tasks():
    with pytest.raises(ValueError, match="at least one"):
        rnn.task_cliff("adding", [], seeds=(0,))
    with pytest.raises(ValueError, match="at least one"):
        rnn.task_cliff("adding", [5], seeds=())
    with pytest.raises(ValueError, match="task"):
        rnn.task_cliff("reverse", [5])
    with pytest.raises(ValueError, match="workers"):
        rnn.task_cliff("adding", [5], workers=0)


def test_truncated_bptt_agreement_equals_one_model_trained_with_bptt_k():
    from seqlearn.data import Vocab, encode_sentences
    from seqlearn.data.synthetic import ToyEnglish, agreement_accuracy, agreement_examples
    from seqlearn.lm import agreement_scorer
    from seqlearn.rnn import RNNLM, train_rnn_lm

    text = ToyEnglish().sample(n_tokens=3000, rng=0)
    vocab = Vocab.build(text)
    stream = encode_sentences(text, vocab)
    kw = dict(distances=(1, 3), n_per_distance=10, embedding_dim=8, hidden_size=8, epochs=1, device="cpu")
    result = rnn.truncated_bptt_agreement(stream, vocab, ks=(2, 5), seeds=(0, 1), **kw)
    assert result.accuracy.shape == (2, 2, 2) and result.median().shape == (2, 2)
    assert np.all((result.accuracy >= 0) & (result.accuracy <= 1))
    lm = RNNLM(len(vocab), embedding_dim=8, hidden_size=8, init="orthogonal", seed=1)
    train_rnn_lm(lm, stream, None, lr=3e-3, epochs=1, batch_size=32, bptt=5, device="cpu", seed=1, progress=False)
    expected = agreement_accuracy(agreement_scorer(lm, vocab), agreement_examples((1, 3), n_per_distance=10, seed=0))
    assert result.at(5, 3)[1] == pytest.approx(expected[3])
    assert result.at(5, 1)[1] == pytest.approx(expected[1])


def test_truncated_bptt_agreement_rejects_empty_input():
    with pytest.raises(ValueError, match="at least one"):
        rnn.truncated_bptt_agreement(np.arange(10), None, ks=())


def test_epochs_to_a_level_is_the_first_epoch_below_it_by_brute_force():
    curves = np.array(
        [[[0.9, 0.5, 0.05, 0.2], [1.0, 1.0, 0.95, 0.9]], [[0.08, 0.02, 0.01, 0.01], [0.5, 0.09, 0.3, 0.1]]]
    )
    cliff = rnn.TaskCliff("adding", (25, 50), (0, 1), curves.min(axis=2), curves)
    expected = np.full((2, 2), np.nan)
    for i, j in np.ndindex(2, 2):
        below = [e + 1 for e in range(curves.shape[2]) if curves[i, j, e] < 0.1]
        expected[i, j] = below[0] if below else np.nan
    np.testing.assert_array_equal(cliff.epochs_to(0.1), expected)  # [[3, nan], [1, 2]]
    assert np.isnan(cliff.epochs_to(0.015)).sum() == 3 and cliff.epochs_to(0.015)[1, 0] == 3
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="level must be"):
            cliff.epochs_to(bad)
