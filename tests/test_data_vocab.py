"""Vocabulary, tokenisation and the flat ``<s> w1 .. wk </s>`` encoding."""

import numpy as np
import pytest

from seqlearn.data.vocab import (
    _CODES,
    BOS,
    EOS,
    UNK,
    Vocab,
    _line_lengths,
    encode_sentences,
    read_sentences,
    sentence_starts,
    tokenize,
)

CORPUS = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat"]]


def test_specials_have_fixed_ids():
    v = Vocab()
    assert (v.unk_id, v.bos_id, v.eos_id) == (0, 1, 2)
    assert v.itos == [UNK, BOS, EOS] == ["<unk>", "<s>", "</s>"]
    assert len(v) == 3


def test_build_orders_by_frequency_then_alphabet():
    v = Vocab.build(CORPUS)
    # counts: the 2, cat 2, sat 2, dog 1, a 1 -> ties alphabetical
    assert v.itos[3:] == ["cat", "sat", "the", "a", "dog"]
    assert [v[t] for t in ["cat", "sat", "the", "a", "dog"]] == [3, 4, 5, 6, 7]


def test_build_is_a_function_of_the_corpus_not_its_order():
    assert Vocab.build(CORPUS) == Vocab.build(CORPUS[::-1])
    assert Vocab.build(CORPUS) != Vocab.build(CORPUS[:2])


def test_min_freq_and_max_size():
    assert Vocab.build(CORPUS, min_freq=2).itos[3:] == ["cat", "sat", "the"]
    assert Vocab.build(CORPUS, max_size=2).itos[3:] == ["cat", "sat"]
    assert Vocab.build(CORPUS, max_size=0).itos == [UNK, BOS, EOS]


def test_specials_in_the_corpus_are_not_counted_twice():
    v = Vocab.build([["<s>", "x", "</s>", "<unk>"]])
    assert v.itos == [UNK, BOS, EOS, "x"]


def test_encode_and_decode_round_trip():
    v = Vocab.build(CORPUS)
    ids = v.encode(["the", "cat", "flew"])
    assert ids.dtype == np.int64 and ids.tolist() == [5, 3, 0]
    assert v.decode(ids) == ["the", "cat", UNK]
    assert v.decode(np.array([[3, 4]])) == ["cat", "sat"]
    assert "cat" in v and "flew" not in v


def test_strict_encoding_rejects_unknown_tokens():
    v = Vocab.build(CORPUS)
    with pytest.raises(ValueError, match="flew"):
        v.encode(["cat", "flew"], strict=True)


def test_encode_sentences_makes_the_flat_stream():
    v = Vocab.build(CORPUS)
    stream = encode_sentences([["the", "cat"], [], ["dog"]], v)
    assert stream.tolist() == [1, 5, 3, 2, 1, 2, 1, 7, 2]
    assert sentence_starts(stream).tolist() == [0, 4, 6]
    assert len(stream) == sum(len(s) + 2 for s in [["the", "cat"], [], ["dog"]])


@pytest.mark.parametrize("seed", range(4))
def test_build_and_encode_equals_build_then_encode(seed):
    """Random corpora with ties in frequency, empty sentences, non-ASCII words and the specials as tokens."""
    rng = np.random.default_rng(seed)
    words = ["the", "cat", "été", "a", "Z", "b", UNK, BOS, EOS, "猫", "x" * 40]
    corpus = [list(rng.choice(words, rng.integers(0, 9))) for _ in range(rng.integers(1, 30))]
    corpus.append(["last"])
    vocab, stream = Vocab.build_and_encode(iter(corpus))
    assert vocab == Vocab.build(corpus)
    np.testing.assert_array_equal(stream, encode_sentences(corpus, vocab))
    assert stream.dtype == np.int64


WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]
"""Every character ``str.split`` splits at, line breaks (``str.splitlines``) among them."""


@pytest.mark.parametrize("seed", range(6))
def test_build_and_encode_text_equals_tokenize_then_build_and_encode(seed):
    """Random texts: every whitespace character and line break (CR LF too), blank lines, non-ASCII
    words and the specials; seeds 0-1 are ASCII, which takes the byte path."""
    rng = np.random.default_rng(seed)
    ascii_only = seed < 2
    words = ["the", "cat", "a", "Z", UNK, BOS, EOS, "x" * 40] + ([] if ascii_only else ["été", "猫", "𝄞"])
    spaces = [w for w in WHITESPACE if w.isascii() or not ascii_only] + ["\r\n", "  "]
    pieces = rng.choice(words + spaces, size=rng.integers(1, 400), p=None)
    text = "".join(pieces) + " last"
    vocab, stream = Vocab.build_and_encode_text(text)
    expected_vocab, expected_stream = Vocab.build_and_encode(tokenize(text))
    assert vocab == expected_vocab
    np.testing.assert_array_equal(stream, expected_stream)


def test_every_whitespace_code_is_in_the_texts_table():
    """``_line_lengths`` looks codes up in a table of the first ``_CODES`` characters: every whitespace
    character must be among them (checked against this Python's own ``str.isspace``)."""
    assert max(map(ord, WHITESPACE)) < _CODES
    assert _line_lengths("a\u2028b c\x85\u3000d\r\n\n e").tolist() == [1, 2, 1, 1]


def test_tokenize_and_read_sentences(tmp_path):
    text = "The cat  sat\n\n  a dog \n"
    assert tokenize(text) == [["The", "cat", "sat"], ["a", "dog"]]
    assert tokenize(text, lower=True) == [["the", "cat", "sat"], ["a", "dog"]]
    path = tmp_path / "corpus.txt"
    path.write_text("één twee\ndrie\n", encoding="utf-8")
    assert read_sentences(path) == [["één", "twee"], ["drie"]]


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: tokenize(["a b"]), TypeError, "str"),
        (lambda: Vocab([1, 2]), TypeError, "str"),
        (lambda: Vocab.build(CORPUS, min_freq=0), ValueError, "min_freq"),
        (lambda: Vocab.build(CORPUS, min_freq=1.5), TypeError, "min_freq must be an int >= 1, got float"),
        (lambda: Vocab.build(CORPUS, max_size=-1), ValueError, "max_size"),
        (lambda: Vocab.build([]), ValueError, "empty"),
        (lambda: Vocab.build("the cat"), TypeError, "str"),
        (lambda: Vocab.build(["the cat"]), TypeError, "sentence 0"),
        (lambda: Vocab.build_and_encode([[], [UNK, EOS]]), ValueError, "empty"),
        (lambda: Vocab.build_and_encode(["the cat"]), TypeError, "sentence 0"),
        (lambda: Vocab.build_and_encode([["the", 3]]), TypeError, "str"),
        (lambda: Vocab.build_and_encode_text(" \n\u2028 "), ValueError, "empty"),
        (lambda: Vocab.build_and_encode_text(b"the cat"), TypeError, "text must be a str"),
        (lambda: Vocab.build(CORPUS).encode("cat"), TypeError, "str"),
        (lambda: Vocab.build(CORPUS).decode([1.0]), TypeError, "integers"),
        (
            lambda: Vocab.build(CORPUS).decode([99]),
            ValueError,
            r"ids must hold token ids in \[0, 7\] \(a vocabulary of 8\), got 99",
        ),
        (lambda: encode_sentences([], Vocab.build(CORPUS)), ValueError, "empty"),
        (lambda: encode_sentences(["the cat"], Vocab.build(CORPUS)), TypeError, "sentence 0"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_read_sentences_refuses_text_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("one line\ncafé au lait\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.txt, line 2, column 4: byte 0xe9 is not UTF-8"):
        read_sentences(path)
