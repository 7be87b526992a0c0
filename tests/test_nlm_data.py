import numpy as np
import pytest
import torch

from seqlearn.data.markov import MarkovSource
from seqlearn.data.vocab import Vocab, encode_sentences
from seqlearn.ngram import ModifiedKneserNey
from seqlearn.nlm import WindowBatches, basics

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def corpus():
    sentences = MarkovSource(20, 1, mean_length=4, seed=0).sample(n_sentences=300, rng=1)
    sentences[5] = []  # an empty sentence: <s> </s>
    vocab = Vocab.build(sentences)
    return encode_sentences(sentences, vocab), vocab


def collect(batches):
    contexts, targets = zip(*batches)
    return torch.cat(contexts).numpy(), torch.cat(targets).numpy()


def test_hand_example():
    # <s> a b c </s> <s> d </s>
    stream = np.array([1, 3, 4, 5, 2, 1, 6, 2])
    contexts, targets = collect(WindowBatches(stream, 3, batch_size=4, device="cpu"))
    assert contexts.tolist() == [[1, 1], [1, 3], [3, 4], [4, 5], [1, 1], [1, 6]]
    assert targets.tolist() == [3, 4, 5, 2, 6, 2]


@pytest.mark.parametrize("n", [2, 3, 4, 7])
@pytest.mark.parametrize("batch_size", [1, 64, 100_000])
def test_sequential_batches_are_the_reference_windows(corpus, n, batch_size):
    stream, _ = corpus
    batches = WindowBatches(stream, n, batch_size=batch_size, device="cpu")
    contexts, targets = collect(batches)
    want_contexts, want_targets = basics.context_windows(stream, n)
    np.testing.assert_array_equal(contexts, want_contexts)
    np.testing.assert_array_equal(targets, want_targets)
    assert len(batches) == -(-len(targets) // batch_size) == len(list(batches))
    assert batches.n_targets == len(targets)


def test_targets_align_with_chapter_1_token_logprobs(corpus):
    stream, vocab = corpus
    kn = ModifiedKneserNey(3, fallback_discounts=(0.5, 1, 1.5)).fit(stream, vocab)
    _, targets = collect(WindowBatches(stream, 3, batch_size=50, device="cpu"))
    assert targets.shape == kn.token_logprobs(stream).shape
    np.testing.assert_array_equal(targets, stream[stream != Vocab.bos_id])


def rows(contexts, targets):
    return sorted(map(tuple, np.column_stack([contexts, targets]).tolist()))


def test_shuffled_batches_are_a_seeded_permutation_of_the_windows(corpus):
    stream, _ = corpus
    want = basics.context_windows(stream, 4)
    a = WindowBatches(stream, 4, batch_size=33, shuffle=True, seed=5, device="cpu")
    epoch1, epoch2 = collect(a), collect(a)
    assert rows(*epoch1) == rows(*epoch2) == rows(*want)
    assert not np.array_equal(epoch1[1], want[1]) and not np.array_equal(epoch1[1], epoch2[1])
    b = WindowBatches(stream, 4, batch_size=33, shuffle=True, seed=5, device="cpu")
    np.testing.assert_array_equal(collect(b)[0], epoch1[0])
    np.testing.assert_array_equal(collect(b)[0], epoch2[0])
    c = WindowBatches(stream, 4, batch_size=33, shuffle=True, seed=6, device="cpu")
    assert not np.array_equal(collect(c)[0], epoch1[0])


def test_batch_of_indices_matches_the_reference_rows(corpus):
    stream, _ = corpus
    want_contexts, want_targets = basics.context_windows(stream, 5)
    index = torch.tensor([0, 7, 3, len(want_targets) - 1])
    contexts, targets = WindowBatches(stream, 5, device="cpu").batch(index)
    np.testing.assert_array_equal(contexts.numpy(), want_contexts[index.numpy()])
    np.testing.assert_array_equal(targets.numpy(), want_targets[index.numpy()])


def test_windows_are_not_materialised():
    source = MarkovSource(30, 1, seed=0)
    stream = encode_sentences(source.sample(n_tokens=20_000, rng=0), Vocab(source.words))
    T, n = int((stream != Vocab.bos_id).sum()), 9
    batches = WindowBatches(stream, n, device="cpu")
    owners = [v for v in vars(batches).values() if isinstance(v, torch.Tensor) and v._base is None]  # views excluded
    held = sum(t.numel() * t.element_size() for t in owners)
    assert held < 8 * len(stream) + 9 * T + 1000  # the stream, target positions (int64) and reaches (uint8)
    assert held < T * (n - 1) * 8 / 3  # a third of the (T, n-1) int64 windows


def test_works_as_training_batches_of_fit(corpus):
    from seqlearn.nlm import BengioNLM, nlm_loss
    from seqlearn.training import fit

    stream, vocab = corpus
    model = BengioNLM(len(vocab), 3, 4, 8, seed=0)
    train = WindowBatches(stream, 3, batch_size=64, shuffle=True, device="cpu")
    history = fit(
        model,
        nlm_loss,
        torch.optim.Adam(model.parameters(), 1e-2),
        train,
        WindowBatches(stream, 3, batch_size=512, device="cpu"),
        epochs=2,
        device="cpu",
        progress=False,
    )
    assert len(history.train_loss) == 2 and history.val_loss[1] < history.val_loss[0]


@pytest.mark.parametrize(
    "stream, kwargs, error, words",
    [
        (np.array([], dtype=np.int64), {}, ValueError, "empty"),
        (np.array([1, 1]), {}, ValueError, "only <s>"),
        (np.array([3, 4, 2]), {}, ValueError, "start with <s>"),
        (np.array([[1, 3, 2]]), {}, TypeError, "1-D integer"),
        (np.array([1.0, 3.0, 2.0]), {}, TypeError, "integer"),
        ([["a", "b"]], {}, TypeError, "encode_sentences"),
        (np.array([1, 3, 9, 2]), dict(vocab_size=5), ValueError, "token id 9"),
        (np.array([1, 3, 2]), dict(order=1), ValueError, "order n must be >= 2"),
        (np.array([1, 3, 2]), dict(batch_size=0), ValueError, "batch_size"),
        (np.array([1, 3, 2]), dict(order=2.5), TypeError, "order"),
    ],
)
def test_bad_input(stream, kwargs, error, words):
    args = dict(order=3, device="cpu") | kwargs
    with pytest.raises(error, match=words):
        WindowBatches(stream, **args)
