import math

import numpy as np
import pytest
import torch

from seqlearn.data.vocab import Vocab
from seqlearn.nlm import BengioNLM, nearest_neighbours, project_2d, same_label_share


@pytest.fixture
def vocab():
    return Vocab([f"v{i}" for i in range(17)])


def brute_force_neighbours(C, vocab, word, k, skip_specials):
    def cos(u, v):
        nu, nv = math.sqrt(sum(x * x for x in u)), math.sqrt(sum(x * x for x in v))
        return 0.0 if nu == 0 or nv == 0 else sum(x * y for x, y in zip(u, v)) / (nu * nv)

    w = vocab.stoi[word]
    scored = [
        (-cos(C[w], C[u]), u)
        for u in range(len(vocab))
        if u != w and not (skip_specials and vocab.itos[u] in ("<unk>", "<s>", "</s>"))
    ]
    return [(vocab.itos[u], -s) for s, u in sorted(scored)[:k]]


@pytest.mark.parametrize("skip_specials", [True, False])
@pytest.mark.parametrize("word, k", [("v0", 5), ("v7", 1), ("v16", 13)])
def test_nearest_neighbours_match_brute_force(vocab, word, k, skip_specials):
    C = np.random.default_rng(0).normal(size=(len(vocab), 4))
    C[5] = 0.0  # a zero embedding has similarity 0 to everything
    got = nearest_neighbours(C, vocab, word, k=k, skip_specials=skip_specials)
    want = brute_force_neighbours(C.tolist(), vocab, word, k, skip_specials)
    assert [w for w, _ in got] == [w for w, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-12)
    assert word not in [w for w, _ in got]


def test_neighbours_of_a_model_and_of_a_tensor(vocab):
    model = BengioNLM(len(vocab), 3, 6, 4, seed=0)
    from_model = nearest_neighbours(model, vocab, "v3", k=4)
    from_tensor = nearest_neighbours(model.C, vocab, "v3", k=4)
    assert from_model == from_tensor and len(from_model) == 4


def test_parallel_embeddings_are_nearest(vocab):
    C = np.random.default_rng(1).normal(size=(len(vocab), 3))
    C[vocab["v9"]] = 2.5 * C[vocab["v4"]]
    (word, sim), *_ = nearest_neighbours(C, vocab, "v4", k=3)
    assert word == "v9" and sim == pytest.approx(1.0)


@pytest.mark.parametrize(
    "C, word, k, error, words",
    [
        (np.ones((20, 3)), "banana", 2, ValueError, "not in the vocabulary"),
        (np.ones((20, 3)), "v0", 0, ValueError, "k must be"),
        (np.ones((20, 3)), 4, 2, TypeError, "word must be a str"),
        (np.ones((19, 3)), "v0", 2, ValueError, "19 rows"),
        (np.ones(20), "v0", 2, ValueError, r"shape \(\|V\|, m\)"),
        (np.full((20, 3), np.nan), "v0", 2, ValueError, "non-finite"),
    ],
)
def test_bad_input(vocab, C, word, k, error, words):
    with pytest.raises(error, match=words):
        nearest_neighbours(C, vocab, word, k=k)


def test_project_2d_matches_the_covariance_eigenvectors():
    rng = np.random.default_rng(2)
    C = rng.normal(size=(40, 6)) * np.array([5.0, 3.0, 1.0, 0.5, 0.2, 0.1]) + 7.0
    coords = project_2d(C)
    centred = C - C.mean(0)
    values, vectors = np.linalg.eigh(centred.T @ centred / len(C))
    top = vectors[:, np.argsort(values)[::-1][:2]]  # (m, 2) principal directions
    want = centred @ top
    for j in range(2):  # equal up to sign; the sign puts the largest-magnitude coordinate positive
        want[:, j] *= np.sign(want[np.argmax(np.abs(want[:, j])), j])
    np.testing.assert_allclose(coords, want, atol=1e-10)
    assert coords.var(0)[0] >= coords.var(0)[1]


def test_project_2d_is_deterministic_under_sign_and_type_changes():
    C = np.random.default_rng(3).normal(size=(25, 4))
    base = project_2d(C)
    np.testing.assert_allclose(project_2d(torch.tensor(C)), base, atol=1e-12)
    reflected = C * np.array([-1.0, 1.0, -1.0, 1.0])  # a reflection changes no distance
    np.testing.assert_allclose(project_2d(reflected), base, atol=1e-10)


def test_project_2d_of_a_rank_one_matrix():
    C = np.outer(np.arange(5.0), [1.0, 2.0])
    coords = project_2d(C)
    assert coords.shape == (5, 2)
    np.testing.assert_allclose(coords[:, 1], 0.0, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.diff(coords[:, 0])), math.sqrt(5.0), rtol=1e-12)


@pytest.mark.parametrize("k", [1, 3, 6])
def test_same_label_share_matches_brute_force(vocab, k):
    rng = np.random.default_rng(k)
    C = rng.normal(size=(len(vocab), 4))
    words = [f"v{i}" for i in range(3, 15)]
    labels = {w: int(rng.integers(3)) for w in words}
    shares = []
    for w in words:  # neighbours among the other labelled words only
        others = sorted(
            (-float(C[vocab[w]] @ C[vocab[u]] / np.linalg.norm(C[vocab[w]]) / np.linalg.norm(C[vocab[u]])), u)
            for u in words
            if u != w
        )
        shares.append(sum(labels[u] == labels[w] for _, u in others[:k]) / k)
    assert same_label_share(C, vocab, labels, k) == pytest.approx(np.mean(shares))


def test_same_label_share_finds_the_grouping_the_embeddings_follow(vocab):
    words = [f"v{i}" for i in range(3, 11)]  # two tight groups: v3..v6 and v7..v10
    C = np.zeros((len(vocab), 2))
    for i, w in enumerate(words):
        C[vocab[w]] = (1.0, 0.01 * i) if i < 4 else (0.01 * i, 1.0)
    by_group = {w: i < 4 for i, w in enumerate(words)}
    by_parity = {w: i % 2 for i, w in enumerate(words)}
    assert same_label_share(C, vocab, by_group, k=3) == 1.0
    assert same_label_share(C, vocab, by_parity, k=3) < 0.5
    with pytest.raises(ValueError, match="more than k"):
        same_label_share(C, vocab, by_group, k=8)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        same_label_share(C, vocab, {"zzz": 0, **by_group}, k=2)
