"""seqlearn.ngram.arpa_plain: the line-by-line reader, and the fast reader held equal to it.

The fast reader (:func:`seqlearn.ngram.arpa.parse_arpa`, whole columns of bytes, SWAR number
parsing) must list exactly what the plain one reads, bit for bit, on files written by
:func:`~seqlearn.ngram.arpa.write_arpa` for fitted models of orders 1 to 5 and on hand-written
files that other writers produce (missing backoffs, -99 and -inf, text around the sections).
"""

import io
import math

import numpy as np
import pytest

from seqlearn.ngram import AddK, ModifiedKneserNey, parse_arpa
from seqlearn.ngram.arpa_plain import ArpaListing, read_arpa_plain


def corpus(seed, n_sentences=120, n_words=20):
    """Sentences with sequential structure, so that every order lists n-grams of its own."""
    rng = np.random.default_rng(seed)
    successors = rng.integers(0, n_words, (n_words, 2))
    sentences = []
    for _ in range(n_sentences):
        words = [int(rng.integers(n_words))]
        for _ in range(int(rng.integers(0, 9))):
            words.append(int(successors[words[-1], rng.integers(2)]) if rng.random() < 0.7 else int(rng.integers(20)))
        sentences.append([f"w{i}" for i in words])
    return sentences


def same_bits(a: float, b: float) -> bool:
    return np.float64(a).tobytes() == np.float64(b).tobytes()


def assert_fast_reads_as_plain(text: str) -> ArpaListing:
    plain = read_arpa_plain(io.StringIO(text))
    fast = parse_arpa(io.StringIO(text))
    assert fast.order == plain.order
    assert [fast.index.size(k) for k in range(1, fast.order + 1)] == [
        sum(len(g) == k for g in plain.entries) for k in range(1, plain.order + 1)
    ]
    fast_entries = fast.entries()
    assert fast_entries.keys() == plain.entries.keys()
    for gram, (p, bo) in plain.entries.items():
        got = fast_entries[gram]
        assert same_bits(got[0], p) and same_bits(got[1], bo), (gram, got, (p, bo))
    return plain


@pytest.mark.parametrize("N", [1, 2, 3, 4, 5])
def test_the_fast_reader_lists_what_the_plain_one_reads_in_written_models(N):
    model = ModifiedKneserNey(N, discounts=(0.5, 1, 1.5)) if N > 1 else AddK(1, k=0.5)
    out = io.StringIO()
    model.fit(corpus(N)).to_arpa(out)
    plain = assert_fast_reads_as_plain(out.getvalue())
    assert plain.order == N
    assert len(plain.entries) == sum(plain.counts) > 20 * N  # every order lists n-grams


def test_a_written_model_reads_back_as_its_own_entries():
    model = ModifiedKneserNey(3, discounts=(0.5, 1, 1.5)).fit(corpus(7))
    out = io.StringIO()
    model.to_arpa(out)
    expected = model._backoff_tables().entries()
    got = read_arpa_plain(io.StringIO(out.getvalue())).entries
    assert got.keys() == expected.keys()
    assert all(same_bits(got[g][0], expected[g][0]) and same_bits(got[g][1], expected[g][1]) for g in got)


EDGE_CASES = {
    "missing backoffs, -99 and -inf": r"""\data\
ngram 1=5
ngram 2=3

\1-grams:
-1.0	<unk>
-99	<s>	-0.5
-0.30103	a
-0.6	b	-inf
-0.75	</s>	-120

\2-grams:
-0.25	<s> a
-0.125	a b	-0.5
-inf	b </s>

\end\
""",
    "text around the file, blank lines, CRLF and -0": "a comment line\nngram 9=9\n\\data\\\r\n"
    "ngram 1=4\r\n\r\n\r\n\\1-grams:\r\n-0\t<s>\r\n-0.5\tx\t0.25\r\n\r\n"
    "-0.5   </s>\n-1e-3\t<unk>\n\\end\\\ntrailing text\n",
    "a unigram model whose lines carry backoffs": r"""\data\
ngram 1=3

\1-grams:
-0.5	a	-0.1
-0.25	</s>	-0.2
-2	<unk>	0

\end\
""",
    "a 3-gram model without <s> and odd layouts of numbers": r"""\data\
ngram 1=3
ngram 2=2
ngram 3=1

\1-grams:
-.5	a	-1.5e-1
-0.2500000000000000000001	b	-3
-7.0	</s>

\2-grams:
-1E-2	a b	2.5
-0.3333333333333333	b a	0

\3-grams:
-12.125	a b a	-0.5
\end\
""",
}


@pytest.mark.parametrize("name", EDGE_CASES)
def test_the_fast_reader_lists_what_the_plain_one_reads_in_hand_written_files(name):
    assert_fast_reads_as_plain(EDGE_CASES[name])


def test_the_plain_reader_keeps_the_conventions():
    plain = read_arpa_plain(io.StringIO(EDGE_CASES["missing backoffs, -99 and -inf"]))
    assert plain.counts == [5, 3]
    assert plain.entries[("<unk>",)] == (-1.0, 0.0)  # missing backoff: weight 1
    assert plain.entries[("<s>",)] == (-math.inf, -0.5)  # -99: probability zero
    assert plain.entries[("b",)] == (-0.6, -math.inf)
    assert plain.entries[("</s>",)] == (-0.75, -math.inf)  # below -99
    assert plain.entries[("a", "b")] == (-0.125, 0.0)  # the highest order's backoff is dropped
    assert plain.entries[("b", "</s>")] == (-math.inf, 0.0)
    without_bos = read_arpa_plain(io.StringIO(EDGE_CASES["a 3-gram model without <s> and odd layouts of numbers"]))
    assert without_bos.entries[("<s>",)] == (-math.inf, 0.0)  # a special the file does not list


MALFORMED = {
    "no data line": ("ngram 1=1\n\\1-grams:\n-1\ta\n\\end\\\n", "line 4: no \\\\data\\\\"),
    "no end": ("\\data\\\nngram 1=1\n\\1-grams:\n-1\ta\n", "missing \\\\end"),
    "no counts": ("\\data\\\n\\1-grams:\n-1\ta\n\\end\\\n", "line 2: no 'ngram"),
    "bad count line": ("\\data\\\nngram 2=1\n\\1-grams:\n-1\ta\n\\end\\\n", "line 2"),
    "section out of order": ("\\data\\\nngram 1=1\nngram 2=1\n\\2-grams:\n", "line 4: unexpected section"),
    "too many fields": ("\\data\\\nngram 1=1\n\\1-grams:\n-1\ta\t0\t0\n\\end\\\n", "line 4: a 1-gram line"),
    "not a number": ("\\data\\\nngram 1=1\n\\1-grams:\n-1x\ta\n\\end\\\n", "line 4: '-1x' is not a number"),
    "NaN": ("\\data\\\nngram 1=1\n\\1-grams:\nnan\ta\n\\end\\\n", "line 4: invalid log10"),
    "positive log10 p": ("\\data\\\nngram 1=1\n\\1-grams:\n0.5\ta\n\\end\\\n", "line 4: invalid log10"),
    "count differs": ("\\data\\\nngram 1=2\n\\1-grams:\n-1\ta\n\\end\\\n", "line 5: the 1-grams section"),
    "unknown word": ("\\data\\\nngram 1=1\nngram 2=1\n\\1-grams:\n-1\ta\t0\n\\2-grams:\n-1\ta b\n\\end\\\n", "line 7"),
    "context not listed": (
        "\\data\\\nngram 1=2\nngram 2=1\nngram 3=1\n\\1-grams:\n-1\ta\t0\n-1\tb\t0\n"
        "\\2-grams:\n-1\ta b\t0\n\\3-grams:\n-1\tb a b\n\\end\\\n",
        "line 11: the context",
    ),
    "listed twice": ("\\data\\\nngram 1=2\n\\1-grams:\n-1\ta\n-2\ta\n\\end\\\n", "line 5: this n-gram is listed twice"),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_both_readers_refuse_a_malformed_file_naming_its_line(name):
    text, message = MALFORMED[name]
    with pytest.raises(ValueError, match=message):
        read_arpa_plain(io.StringIO(text))
    with pytest.raises(ValueError, match=r"malformed ARPA file, line \d+"):
        parse_arpa(io.StringIO(text))


def test_a_path_reads_as_its_text(tmp_path):
    text = EDGE_CASES["missing backoffs, -99 and -inf"]
    (tmp_path / "m.arpa").write_text(text, encoding="utf-8")
    assert read_arpa_plain(tmp_path / "m.arpa") == read_arpa_plain(io.StringIO(text))
