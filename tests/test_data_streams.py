import subprocess
import sys

import numpy as np
import pytest

from seqlearn.data import Vocab, check_stream, encode_sentences, split_sentences


def test_split_sentences_cuts_before_each_bos():
    vocab = Vocab(["a", "b"])
    sentences = [["a"], [], ["a", "b", "a"]]
    stream = encode_sentences(sentences, vocab)
    pieces = split_sentences(check_stream(stream))
    assert [p.tolist() for p in pieces] == [[1, *vocab.encode(s).tolist(), 2] for s in sentences]
    lone = split_sentences(np.array([1, 1, 3, 2, 1]))  # a lone <s> has nothing to predict
    assert [p.tolist() for p in lone] == [[1, 3, 2]]


def test_check_stream_accepts_lists_and_tensors():
    import torch

    assert check_stream([1, 3, 2]).dtype == np.int64
    np.testing.assert_array_equal(check_stream(torch.tensor([1, 3, 2])), [1, 3, 2])


@pytest.mark.parametrize(
    "stream, vocab_size, error, words",
    [
        (np.array([], dtype=np.int64), None, ValueError, "empty"),
        (np.array([1, 1]), None, ValueError, "only <s>"),
        (np.array([3, 4, 2]), None, ValueError, "start with <s>"),
        (np.array([[1, 3, 2]]), None, TypeError, "1-D integer"),
        ([["a", "b"]], None, TypeError, "encode_sentences"),
        (np.array([1, 3, 9, 2]), 5, ValueError, "token id 9"),
    ],
)
def test_check_stream_bad_input(stream, vocab_size, error, words):
    with pytest.raises(error, match=words):
        check_stream(stream, vocab_size)


@pytest.mark.integration
def test_streams_import_only_numpy():
    code = "import sys, seqlearn.data.streams; print('torch' in sys.modules, 'scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
