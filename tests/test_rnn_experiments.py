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


def tiny_long_agreement(seeds=(0, 1), workers=1):
    from seqlearn.data import Vocab
    from seqlearn.data.agreement import LongAgreement
    from seqlearn.data.synthetic import ToyEnglish
    from seqlearn.rnn.experiments import long_agreement_curves

    task = LongAgreement(max_distance=7, short_fraction=0.5, attractor_rate=0.5)
    V = len(Vocab(ToyEnglish.vocabulary()))
    factories = {"Elman": lambda seed: rnn.RNNLM(V, embedding_dim=4, hidden_size=6, seed=seed)}
    curves = long_agreement_curves(
        factories,
        seeds,
        task=task,
        n_train=40,
        n_per_distance=4,
        width=3,
        batch_size=8,
        workers=workers,
        progress=False,
    )
    return task, V, curves


def test_long_agreement_curves_match_training_and_scoring_by_hand():
    """One seed retrained with train_rnn_lm, scored one example at a time with seqlearn.lm.agreement_scorer,
    and averaged over each bin of 3 distances by hand."""
    from seqlearn.data import Vocab, encode_sentences
    from seqlearn.data.synthetic import ToyEnglish
    from seqlearn.lm import agreement_scorer

    task, V, curves = tiny_long_agreement()
    result = curves["Elman"]
    assert result.seeds == (0, 1) and result.width == 3
    assert result.bins.tolist() == [0, 3, 6] and result.accuracy.shape == (2, 3)
    vocab = Vocab(ToyEnglish.vocabulary())
    stream = encode_sentences(task.sample(40, rng=0), vocab)
    lm = rnn.RNNLM(V, embedding_dim=4, hidden_size=6, seed=1)
    rnn.train_rnn_lm(lm, stream, lr=1e-2, epochs=1, batch_size=8, clip_grad_norm=1.0, device="cpu", seed=1,
                     progress=False)  # fmt: skip
    score = agreement_scorer(lm, vocab)
    examples = task.agreement_examples(range(8), n_per_distance=4, seed=1)
    right = [score(ex.prefix, [ex.correct, ex.wrong]) for ex in examples]
    correct = np.array([c > w for c, w in right])
    distance = np.array([ex.distance for ex in examples])
    expected = [correct[(distance >= b) & (distance < b + 3)].mean() for b in (0, 3, 6)]
    np.testing.assert_allclose(result.accuracy[1], expected)
    assert result.n_params == sum(p.numel() for p in lm.parameters())
    assert result.mean_between(3) == pytest.approx(result.accuracy[:, 1:].mean())
    assert result.mean_between(0, 3) == pytest.approx(result.accuracy[:, 0].mean())
    forked = tiny_long_agreement(workers=2)[2]["Elman"]  # the same runs, two at a time
    np.testing.assert_array_equal(forked.accuracy, result.accuracy)
    assert forked.final_loss == result.final_loss


def test_long_agreement_curves_reject_bad_input():
    from seqlearn.rnn.experiments import long_agreement_curves

    factories = {"Elman": lambda seed: rnn.RNNLM(10, embedding_dim=2, hidden_size=2, seed=seed)}
    with pytest.raises(TypeError, match="task"):
        long_agreement_curves(factories, task="long")
    with pytest.raises(ValueError, match="n_train"):
        long_agreement_curves(factories, n_train=0)
    with pytest.raises(TypeError, match="width"):
        long_agreement_curves(factories, width=2.5)
    with pytest.raises(ValueError, match="seeds"):
        long_agreement_curves(factories, seeds=())


def test_distance_agreement_mean_between_names_empty_ranges():
    from seqlearn.rnn.experiments import DistanceAgreement

    result = DistanceAgreement(np.array([0, 10, 20]), 10, (0,), np.array([[1.0, 0.75, 0.5]]), 5, (1.0,))
    assert result.mean_between(10) == pytest.approx(0.625)
    assert result.mean_between(0, 20) == pytest.approx(0.875)
    with pytest.raises(ValueError, match="no bin starts"):
        result.mean_between(30)
    with pytest.raises(ValueError, match="high"):
        result.mean_between(10, 10)


def test_subject_signal_is_the_norm_of_the_autograd_jacobian_from_subject_to_verb():
    """d(h_T)/d(h_{T-d}) by float64 autograd through the model's own cell, stepped from the subject's state."""
    from seqlearn.data import Vocab
    from seqlearn.data.agreement import LongAgreement
    from seqlearn.data.synthetic import ToyEnglish
    from seqlearn.rnn.experiments import subject_signal

    vocab = Vocab(ToyEnglish.vocabulary())
    lm = rnn.RNNLM(len(vocab), embedding_dim=4, hidden_size=5, rho=1.3, seed=0).double()
    examples = LongAgreement(max_distance=6).agreement_examples([0, 2, 6], n_per_distance=2, seed=3)
    norms = subject_signal(lm, vocab, examples)
    cell = lm.rnn
    for ex, norm in zip(examples, norms):
        ids = torch.as_tensor(np.concatenate([[Vocab.bos_id], vocab.encode(list(ex.prefix))]))
        x = lm.E[ids].detach()  # (T, m)
        h = torch.zeros(5, dtype=torch.float64)
        for t in range(len(ids) - ex.distance):
            h = torch.tanh(cell.W_hh @ h + cell.W_xh @ x[t] + cell.b_h)

        T, d = len(ids), ex.distance

        def rest(h, x=x, T=T, d=d):
            for t in range(T - d, T):
                h = torch.tanh(cell.W_hh @ h + cell.W_xh @ x[t] + cell.b_h)
            return h

        J = torch.autograd.functional.jacobian(rest, h.detach()).detach().numpy()
        assert norm == pytest.approx(np.linalg.norm(J, 2), rel=1e-9)
    assert norms[0] == norms[1] == 1.0  # distance 0: no step between subject and verb


def test_subject_signal_rejects_bad_input():
    from seqlearn.data import Vocab
    from seqlearn.data.synthetic import ToyEnglish
    from seqlearn.rnn.experiments import subject_signal

    vocab = Vocab(ToyEnglish.vocabulary())
    with pytest.raises(TypeError, match="model"):
        subject_signal(object(), vocab, [])
    with pytest.raises(TypeError, match="vocab"):
        subject_signal(rnn.RNNLM(len(vocab), embedding_dim=2, hidden_size=2), "vocab", [])
    with pytest.raises(ValueError, match="examples"):
        subject_signal(rnn.RNNLM(len(vocab), embedding_dim=2, hidden_size=2), vocab, [])
