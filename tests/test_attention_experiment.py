"""seqlearn.attention.experiment: attention maps are distributions over the past."""

import numpy as np
import pytest

from seqlearn.attention.experiment import attention_map
from seqlearn.attention.model import AttentionLM
from seqlearn.data import Vocab
from seqlearn.data.synthetic import ToyEnglish
from seqlearn.rnn import RNNLM

VOCAB = Vocab(ToyEnglish.vocabulary())


def test_an_attention_map_is_a_distribution_over_earlier_positions():
    model = AttentionLM(len(VOCAB), 8, 2, n_heads=2, hidden_size=8, seed=0)
    a = attention_map(model, VOCAB, ["the", "cats", "near", "the", "dog", "are"], layer=0)
    assert a.shape == (2, 7, 7) and a.dtype == np.float64
    np.testing.assert_allclose(a.sum(axis=-1), 1.0, rtol=1e-6)
    assert np.all(np.triu(a, 1) == 0)
    assert np.array_equal(
        attention_map(model, VOCAB, ["the", "cats"], layer=-1), attention_map(model, VOCAB, ["the", "cats"], layer=1)
    )


def test_bad_inputs_are_refused():
    model = AttentionLM(len(VOCAB), 8, 1, hidden_size=8)
    with pytest.raises(TypeError, match="AttentionLM"):
        attention_map(RNNLM(len(VOCAB), 4, 4), VOCAB, ["the"])
    with pytest.raises(TypeError, match="not a str"):
        attention_map(model, VOCAB, "the cat")
    with pytest.raises(ValueError, match="layer"):
        attention_map(model, VOCAB, ["the"], layer=1)
