"""ARPA files: writing, reading, the backoff rule, lmplz's numbers, malformed files.

External references: ``TOY0_ARPA`` and ``TOY1_ARPA`` are KenLM's own test data
(``lm/common/test_data/toy0.arpa``, ``toy1.arpa`` in the kpu/kenlm repository), written by
``lmplz --discount_fallback -o 3`` from the two-line texts in that directory's
``generate.sh`` (repeated in the tests below); with so little text lmplz falls back to the
discounts 0.5, 1, 1.5 at every order. ``LCG_LMPLZ_*`` are lines of the ARPA file that
``lmplz -o 4`` (KenLM built from its PyPI source release 0.3.0) wrote for the corpus of
:func:`lcg_corpus`, with discounts estimated from the data: its header and every ~12th
line of each section. lmplz computes in float32 and prints about 8 significant digits, so
the comparisons use a tolerance of 1e-6 in log10. lmplz writes ``<s>`` with log10
probability 0 (it gives ``<s>`` probability 1 so that it can be scored as a sentence
opener); seqlearn writes -99 (``<s>`` is never predicted), so that one number is not compared.
"""

import io
import math

import numpy as np
import pytest

from seqlearn.ngram import (
    MLE,
    AbsoluteDiscounting,
    AddK,
    BackoffModel,
    KneserNey,
    ModifiedKneserNey,
    format_log10,
    parse_arpa,
    read_arpa,
)

TOY0_ARPA = r"""\data\
ngram 1=5
ngram 2=7
ngram 3=7

\1-grams:
-0.90309	<unk>	0
0	<s>	-0.30103
-0.46943438	a	-0.30103
-0.5720968	</s>	0
-0.5720968	b	-0.30103

\2-grams:
-0.37712017	<s> a	-0.30103
-0.37712017	a a	-0.30103
-0.2984526	b a	-0.30103
-0.58682007	a </s>	0
-0.5220179	b </s>	0
-0.41574955	<s> b	-0.30103
-0.58682007	a b	-0.30103

\3-grams:
-0.14885087	<s> a a
-0.33741078	b a a
-0.124077894	<s> b a
-0.2997394	a b a
-0.42082912	b a </s>
-0.397617	a b </s>
-0.20102891	a a b

\end\
"""

TOY1_ARPA = r"""\data\
ngram 1=6
ngram 2=7
ngram 3=6

\1-grams:
-1	<unk>	0
0	<s>	-0.30103
-0.6146491	a	-0.30103
-0.6146491	</s>	0
-0.7659168	c	-0.30103
-0.6146491	b	-0.30103

\2-grams:
-0.4301247	<s> a	-0.30103
-0.4301247	a a	-0.30103
-0.20660876	c </s>	0
-0.5404639	b </s>	0
-0.4740302	<s> c	-0.30103
-0.4301247	a b	-0.30103
-0.3422159	b b	-0.47712123

\3-grams:
-0.1638568	<s> a a
-0.09113217	<s> c </s>
-0.7462621	b b </s>
-0.1638568	a a b
-0.13823806	a b b
-0.13375957	b b b

\end\
"""

LCG_LMPLZ_HEADER = r"""\data\
ngram 1=201
ngram 2=1078
ngram 3=1443
ngram 4=1338
"""

LCG_LMPLZ_LINES = r"""-2.6678772	<unk>	0
-2.6118865	w61	-0.15328984
-2.2817473	w46	-0.19117093
-2.3665965	w100	-0.14860573
-2.4721494	w141	-0.14860573
-2.4721494	w89	-0.14860573
-2.6118865	w138	-0.14860573
-2.2817473	w23	-0.158025
-2.5836449	w152	-0.14860573
-2.5836449	w83	-0.14860573
-2.4721494	w109	-0.15612474
-2.5836449	w180	-0.1676531
-2.5836449	w0	-0.1676531
-0.71511316	w1 </s>	0
-0.6166013	w163 </s>	0
-1.2829353	<s> w4	-0.2626051
-1.4644516	w18 w8	-0.04415089
-1.1482494	w9 w27	-0.04415089
-0.95740783	w148 w46	-0.04415089
-1.3394382	w66 w30	-0.04415089
-2.7067811	<s> w114	-0.04415089
-1.0863098	w43 w131	-0.04415089
-0.9986778	w158 w75	-0.04415089
-1.3654082	w122 w121	-0.04415089
-0.66589105	w107 w122	-0.04415089
-1.4211224	w32 w98	-0.04415089
-0.8236773	<s> w1 </s>	0
-0.4114387	w3 w7 </s>	0
-0.5728631	w22 w70 </s>	0
-0.8340708	<s> w168 w13	-0.022126151
-0.5024231	w157 w6 w19	-0.022126151
-0.7352699	w7 w1 w3	-0.022126151
-0.805602	w48 w19 w58	-0.022126151
-0.8158635	w11 w4 w12	-0.022126151
-0.56197447	w10 w21 w64	-0.022126151
-1.9979293	<s> w2 w15	-0.022126151
-1.2788396	w3 w1 w195	-0.022126151
-0.96537554	<s> w36 w109	-0.022126151
-1.0018827	w108 w124 w173	-0.022126151
-0.6873473	w90 w4 w1 </s>
-0.60180473	w43 w130 w192 </s>
-0.6805061	w34 w20 w62 </s>
-1.3034389	w2 w6 w19 w4
-0.5797622	w29 w89 w8 w26
-0.7522683	<s> w25 w75 w9
-0.6266711	<s> w49 w148 w46
-1.5127428	<s> w1 w1 w7
-0.6503185	<s> w40 w3 w10
-0.7975549	w19 w58 w175 w126
-0.54366446	w11 w34 w113 w140
-1.43125	<s> w3 w9 w32
-0.20594566	w9 w61 w184 w153
"""


def lcg_corpus(n_sentences=300, V=200, seed=2024):
    """A deterministic corpus from a linear congruential generator (independent of numpy's RNG)."""
    x = seed

    def uniform():
        nonlocal x
        x = (1103515245 * x + 12345) % 2**31
        return x / 2**31

    sentences = []
    for _ in range(n_sentences):
        words = [int(V ** uniform())]
        for _ in range(int(uniform() * 10)):
            words.append((3 * words[-1] + int(uniform() * 3)) % V if uniform() < 0.6 else int(V ** uniform()))
        sentences.append([f"w{i}" for i in words])
    return sentences


def arpa_text(model):
    buffer = io.StringIO()
    model.to_arpa(buffer)
    return buffer.getvalue()


def arpa_entries(text):
    """{n-gram: (log10 p, log10 backoff)} of an ARPA text (-inf for zero)."""
    return parse_arpa(io.StringIO(text)).entries()


def assert_same_entries(expected, got, tol):
    assert set(expected) == set(got)
    for gram, (p, bo) in expected.items():
        if gram != ("<s>",):
            assert got[gram][0] == pytest.approx(p, abs=tol), gram
        assert got[gram][1] == pytest.approx(bo, abs=tol), gram


# -- lmplz --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a a b a\nb a a b\n", TOY0_ARPA), ("a a b b b b b b b\nc\n", TOY1_ARPA)],
    ids=["toy0", "toy1"],
)
def test_kenlm_toy_files(text, expected):
    sentences = [line.split() for line in text.splitlines()]
    model = ModifiedKneserNey(3, discounts=(0.5, 1.0, 1.5)).fit(sentences)
    ours = arpa_text(model)
    assert_same_entries(arpa_entries(expected), arpa_entries(ours), tol=1e-6)
    assert ours.split("\n\n")[0] == expected.split("\n\n")[0]  # the \data\ header
    assert ("<s>",) in arpa_entries(ours) and arpa_entries(ours)[("<s>",)][0] == -math.inf
    assert "\n-99\t<s>\t" in ours


def test_lmplz_with_estimated_discounts():
    model = ModifiedKneserNey(4).fit(lcg_corpus())
    ours = arpa_text(model)
    assert ours.split("\n\n")[0] + "\n" == LCG_LMPLZ_HEADER
    entries = arpa_entries(ours)
    for line in LCG_LMPLZ_LINES.strip().splitlines():
        fields = line.split("\t")
        gram = tuple(fields[1].split())
        assert entries[gram][0] == pytest.approx(float(fields[0]), abs=1e-6), line
        assert entries[gram][1] == pytest.approx(float(fields[2]) if len(fields) == 3 else 0.0, abs=1e-6), line


# -- the ARPA file reproduces the model -----------------------------------------------------------


def markov_corpus(seed, n_sentences=200, n_words=30):
    rng = np.random.default_rng(seed)
    successors = rng.integers(0, n_words, (n_words, 2))
    sentences = []
    for _ in range(n_sentences):
        words = [rng.integers(n_words)]
        for _ in range(rng.integers(0, 8)):
            words.append(successors[words[-1], rng.integers(2)] if rng.random() < 0.6 else rng.integers(n_words))
        sentences.append([f"w{i}" for i in words])
    return sentences


def random_contexts(vocab, rng, n=40):
    contexts = [(), ("<s>",), ("unknown-word",), ("w1", "<s>")]
    for _ in range(n):
        contexts.append(tuple(rng.choice(vocab.itos, size=rng.integers(1, 5))))  # mostly unseen
        contexts.append(("<s>", *rng.choice(vocab.itos[3:], size=rng.integers(0, 3))))
    return contexts


@pytest.mark.parametrize(
    "make",
    [
        lambda N: ModifiedKneserNey(N, discounts=(0.4, 1.1, 1.8)),
        lambda N: KneserNey(N, discounts=0.75),
        lambda N: AbsoluteDiscounting(N, discounts=0.6),
        lambda N: MLE(N),
    ],
    ids=["mkn", "kn", "abs", "mle"],
)
@pytest.mark.parametrize("N", [1, 2, 3, 4])
def test_arpa_query_equals_model(make, N):
    sentences = markov_corpus(N)
    model = make(N).fit(sentences)
    backoff = read_arpa(io.StringIO(arpa_text(model)))
    assert backoff.vocab_ == model.vocab_ and backoff.order == N
    rng = np.random.default_rng(0)
    for h in random_contexts(model.vocab_, rng):
        expected, got = model.next_distribution(h), backoff.next_distribution(h)
        np.testing.assert_array_equal(got == 0, expected == 0)
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0)
    test = markov_corpus(50 + N, n_sentences=30)
    np.testing.assert_allclose(backoff.token_logprobs(test), model.token_logprobs(test), rtol=1e-12)


def test_addk_arpa_only_for_unigrams(tmp_path):
    sentences = markov_corpus(1, n_sentences=20)
    unigram = AddK(1, k=0.5).fit(sentences)
    unigram.to_arpa(tmp_path / "addk.arpa")
    backoff = BackoffModel.from_arpa(tmp_path / "addk.arpa")
    np.testing.assert_allclose(backoff.next_distribution(), unigram.next_distribution(), rtol=1e-13)
    with pytest.raises(ValueError, match="not a backoff model"):
        AddK(2).fit(sentences).to_arpa(io.StringIO())


def test_mle_arpa_writes_zero_backoffs():
    text = arpa_text(MLE(2).fit([["a", "b"], ["a"]]))
    entries = arpa_entries(text)
    assert entries[("a",)] == (math.log10(2 / 5), -math.inf)  # a is a context: unseen continuations get 0
    assert "\ta\t-99\n" in text
    assert entries[("</s>",)] == (math.log10(2 / 5), 0.0)  # </s> is never a context
    assert read_arpa(io.StringIO(text)).prob("a", ["a"]) == 0


def test_write_read_write_is_stable(tmp_path):
    model = ModifiedKneserNey(3, discounts=(0.5, 1, 1.5)).fit(markov_corpus(3))
    model.to_arpa(tmp_path / "a.arpa")
    read_arpa(tmp_path / "a.arpa").to_arpa(tmp_path / "b.arpa")
    assert (tmp_path / "a.arpa").read_text() == (tmp_path / "b.arpa").read_text()


def test_a_failed_write_leaves_the_old_file_and_no_other(tmp_path, monkeypatch):
    from seqlearn.ngram import arpa

    path = tmp_path / "m.arpa"
    path.write_text("old")
    calls = []
    format_log10 = arpa.format_log10

    def failing_format(x):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("disk full")
        return format_log10(x)

    monkeypatch.setattr(arpa, "format_log10", failing_format)
    with pytest.raises(RuntimeError, match="disk full"):
        ModifiedKneserNey(2, discounts=(0.5, 1, 1.5)).fit(markov_corpus(2)).to_arpa(path)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["m.arpa"]


# -- the backoff rule on a hand-written file -------------------------------------------------------

HAND_ARPA = r"""Any text before \data\ is ignored.
\data\
ngram 1=5
ngram 2=3
ngram 3=1

\1-grams:
-1.0	<unk>
-99	<s>	-0.5
-0.5	</s>
-0.6	a	-0.2
-0.7	b	-0.3

\2-grams:
-0.3	<s> a	-0.1
-0.4	a b	-0.25
-0.2	b </s>

\3-grams:
-0.05	<s> a b

\end\
"""


def test_backoff_rule_by_hand():
    model = read_arpa(io.StringIO(HAND_ARPA))
    log10 = lambda w, h: math.log10(model.prob(w, h))  # noqa: E731
    assert log10("b", ["<s>", "a"]) == pytest.approx(-0.05)  # listed trigram
    assert log10("a", ["<s>", "a"]) == pytest.approx(-0.1 + -0.2 + -0.6)  # bo(<s> a) bo(a) p(a)
    assert log10("b", ["b", "a"]) == pytest.approx(-0.4)  # context (b a) unlisted: bo = 1, bigram a b
    assert log10("</s>", ["a", "b"]) == pytest.approx(-0.25 + -0.2)  # bo(a b) p(</s> | b)
    assert log10("a", ["a", "b"]) == pytest.approx(-0.25 + -0.3 + -0.6)
    assert model.prob("<s>", ["a"]) == 0 and model.order == 3


# -- malformed files ---------------------------------------------------------------------------------


def corrupt(old, new):
    assert old in HAND_ARPA
    return io.StringIO(HAND_ARPA.replace(old, new))


@pytest.mark.parametrize(
    ("file", "message"),
    [
        (io.StringIO("just some text\n"), r"line 1: no \\data\\"),
        (
            corrupt("ngram 2=3", "ngram 2=4"),
            r"line 19: the 2-grams section \(from line 14\) has 3 entries; the header \(line 4\) announces 4",
        ),
        (corrupt("ngram 2=3", "ngrams 2 3"), r"line 4: expected 'ngram k=count'"),
        (corrupt("ngram 2=3", "ngram 3=3"), r"line 4: expected the count of the 2-grams"),
        (corrupt("-0.4\ta b", "-0.4x\ta b"), r"line 16: '-0.4x' is not a number"),
        (corrupt("-0.4\ta b", "nan\ta b"), r"line 16: invalid log10"),
        (corrupt("-0.4\ta b", "0.4\ta b"), r"line 16: invalid log10"),
        (corrupt("-0.4\ta b\t-0.25", "-0.4\ta b c d"), r"line 16: a 2-gram line needs"),
        (corrupt("\\3-grams:", "\\4-grams:"), r"line 19: unexpected section"),
        (corrupt("\\3-grams:", "\\trigrams:"), r"line 19: unexpected section"),
        (corrupt("\\end\\", ""), r"missing \\end\\"),
        (corrupt("-0.2\tb </s>", "-0.2\tb zzz"), r"line 17: a word of this 2-gram is not among the 1-grams"),
        (corrupt("-0.05\t<s> a b", "-0.05\tb a b"), r"line 20: the context of this 3-gram is not listed"),
        (corrupt("-0.2\tb </s>", "-0.2\ta b"), r"line 17: this n-gram is listed twice"),
        (corrupt("-0.7\tb", "-0.7\ta"), r"line 12: this n-gram is listed twice"),
        (
            corrupt("\\1-grams:\n", "\\1-grams:\n-1 a\n"),
            r"line 15: the 1-grams section .* has 6 entries; the header \(line 3\) announces 5",
        ),
    ],
)
def test_malformed_arpa(file, message):
    with pytest.raises(ValueError, match=message):
        read_arpa(file)


def test_reading_a_missing_file_fails_clearly(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_arpa(tmp_path / "nothing.arpa")


# -- the vectorised writer and the streamed reader ----------------------------------------------------


def test_numbers_are_written_exactly():
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            -rng.random(20_000) * 5,
            -(10.0 ** -rng.uniform(0, 7, 5_000)),  # close to 0, down to the repr range
            -rng.random(2_000) * 99,
            [0.0, -0.0, -99.0, -100.0, -np.inf, -1e-7, 0.5, -0.1, -1.0, -10.0, np.nextafter(-10.0, 0), 12.5],
        ]
    )
    chars, start, end = format_log10(x)
    texts = [chars.ravel()[a:b].tobytes().decode() for a, b in zip(start.tolist(), end.tolist())]
    np.testing.assert_array_equal([float(t) for t in texts], np.maximum(x, -99.0))
    assert texts[-12:] == [
        "0", "0", "-99", "-99", "-99", "-1e-07", "0.5", "-0.10000000000000001", "-1", "-10",
        "-9.9999999999999982", "12.5",
    ]  # fmt: skip


def parse_fixed_point(texts: list[str]):
    """``_fixed_point`` on the tokens ``texts``, laid out as the reader lays out a block."""
    from seqlearn.ngram._arpa_kernels import _fixed_point

    buf = np.frombuffer(b"\n" + " ".join(texts).encode() + b"\n" + bytes(8), np.uint8)
    words8 = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))
    space = buf <= 32
    edges = np.flatnonzero(space[1:] != space[:-1]) + 1
    return _fixed_point(buf, words8, edges[0::2], edges[1::2])


def random_decimals(rng, n: int) -> list[str]:
    """Decimal texts [-]I[.F] with 0-2 integer digits and 0-22 decimals (leading zeros included)."""
    texts = []
    for _ in range(n):
        i, f = rng.integers(0, 3), rng.integers(0, 23)
        head = "".join(map(str, rng.integers(0, 10, i))) or ("" if f else "7")
        tail = "." + "".join(map(str, rng.integers(0, 10, f))) if f or rng.random() < 0.3 else ""
        texts.append(("-" if rng.random() < 0.5 else "") + head + tail)
    return texts


def test_fixed_point_numbers_are_read_correctly_rounded():
    """Bit for bit Python's float(): the writer's texts, random decimals, and 17-digit integers over 2^53."""
    rng = np.random.default_rng(1)
    x = np.concatenate([-rng.random(50_000) * 6, -(10.0 ** rng.uniform(-5, 2, 50_000)), [-99.0, 0.0, -1.0]])
    chars, start, end = format_log10(x)
    written = [chars.ravel()[a:b].tobytes().decode() for a, b in zip(start.tolist(), end.tolist())]
    big = [
        f"{M // 10**f}.{M % 10**f:0{f}d}"
        for M, f in zip(rng.integers(2**53, 10**17, 20_000), rng.integers(15, 18, 20_000))
    ]
    # the writer's texts all take this path; random ones with more than 18 significant digits do not
    for texts, taken in ((written, 0.9999), (random_decimals(rng, 50_000), 0.75), (big, 0.9999)):
        value, ok = parse_fixed_point(texts)
        assert ok.mean() > taken
        expected = np.array([float(t) for t in texts])
        np.testing.assert_array_equal(value[ok].view(np.int64), expected[ok].view(np.int64))


def test_other_number_layouts_are_left_to_the_full_parser():
    texts = ["-", "1e-05", "+1.5", "123", "1.5.3", "nan", "-inf", "1.2x", "0." + "1" * 23, "9007199254740993"]
    assert not parse_fixed_point(texts)[1].any()
    value, ok = parse_fixed_point([".5", "5.", "-0", "-99", "0.9007199254740993"])
    assert ok.all() and value.tolist() == [0.5, 5.0, -0.0, -99.0, 0.9007199254740993]
    assert math.copysign(1, value[2]) == -1


def test_lines_are_assembled_exactly_whatever_the_words_lengths(monkeypatch):
    """The writer's text equals lines joined in plain Python, for words of 1 to 90 characters (many longer
    than the 32 bytes the assembler moves at once, some of several UTF-8 bytes), in blocks of 7 lines."""
    from seqlearn.ngram import arpa

    rng = np.random.default_rng(3)
    sentences = markov_corpus(5)
    words = sorted({w for s in sentences for w in s})
    names = {w: "".join(rng.choice(list("xyzé€"), rng.integers(1, 91))) for w in words}
    model = ModifiedKneserNey(3, discounts=(0.5, 1, 1.5)).fit([[names[w] for w in s] for s in sentences])
    monkeypatch.setattr(arpa, "_BLOCK_LINES", 7)
    tables = model._backoff_tables()

    def number(x):
        chars, start, end = format_log10(np.array([x]))
        return chars.ravel()[start[0] : end[0]].tobytes().decode()

    expected = "\\data\\\n" + "".join(f"ngram {k}={tables.index.size(k)}\n" for k in (1, 2, 3))
    for k in (1, 2, 3):
        expected += f"\n\\{k}-grams:\n"
        for i, ids in enumerate(tables.index.words(k).tolist()):
            words = " ".join(tables.vocab.itos[j] for j in ids)
            bo = f"\t{number(tables.log10_bo[k - 1][i])}" if k < 3 else ""
            expected += f"{number(tables.log10_p[k - 1][i])}\t{words}{bo}\n"
    expected += "\n\\end\\\n"
    assert max(len(w.encode()) for w in names.values()) > 2 * 32
    assert arpa_text(model) == expected


def test_reading_in_small_blocks_gives_the_same_model(monkeypatch):
    from seqlearn.ngram import arpa

    text = arpa_text(ModifiedKneserNey(3, discounts=(0.5, 1, 1.5)).fit(markov_corpus(4)))
    whole = parse_arpa(io.StringIO(text)).entries()
    monkeypatch.setattr(arpa, "_BLOCK_BYTES", 64)  # sections and lines split across many blocks
    assert parse_arpa(io.StringIO(text)).entries() == whole
    monkeypatch.setattr(arpa, "_FIRST_ROWS", 3)  # and the columns grow many times
    assert parse_arpa(io.StringIO(text)).entries() == whole


def test_a_header_announcing_more_than_the_file_holds_is_refused_without_reserving_it():
    huge = 10**15  # 8 PB per column if it were reserved
    with pytest.raises(ValueError, match=rf"the 3-grams section \(from line 19\) has 1 entries; .* announces {huge}"):
        read_arpa(corrupt("ngram 3=1", f"ngram 3={huge}"))


def test_sections_in_any_order_give_the_same_model():
    """Our files list each section in key order (read without sorting); a shuffled file is sorted on reading."""
    text = arpa_text(ModifiedKneserNey(3, discounts=(0.5, 1, 1.5)).fit(markov_corpus(4)))
    rng = np.random.default_rng(0)
    head, *sections = text.split("\n\n")
    shuffled = [section.split("\n") for section in sections[:-1]]  # the last holds \end\
    for lines in shuffled:
        lines[1:] = [lines[1:][i] for i in rng.permutation(len(lines) - 1)]  # the entries after the mark
    text_shuffled = "\n\n".join([head, *("\n".join(lines) for lines in shuffled), sections[-1]])
    assert text_shuffled != text and sorted(text_shuffled.split("\n")) == sorted(text.split("\n"))
    assert parse_arpa(io.StringIO(text_shuffled)).entries() == parse_arpa(io.StringIO(text)).entries()


def test_other_writers_layouts_are_read():
    """Spaces for tabs, CRLF line ends, blank lines inside a section, backoffs left out, no final newline."""
    text = HAND_ARPA.replace("\t", " ").replace("\n\\2-grams:", "\n\n\\2-grams:").replace("-0.3\t<s> a\t-0.1", "")
    text = text.replace("\n", "\r\n").replace(" \r\n-0.4", " \r\n\r\n-0.4")[:-2]
    entries = parse_arpa(io.StringIO(text)).entries()
    assert entries == parse_arpa(io.StringIO(HAND_ARPA)).entries()
    assert entries[("b", "</s>")] == (-0.2, 0.0)


def test_a_bad_byte_in_a_later_block_names_its_line(tmp_path, monkeypatch):
    from seqlearn.ngram import arpa

    monkeypatch.setattr(arpa, "_BLOCK_BYTES", 32)
    path = tmp_path / "m.arpa"
    path.write_bytes(HAND_ARPA.replace("a b\t-0.25", "a b\t-0.25\xfe").encode("latin-1"))
    with pytest.raises(ValueError, match=rf"{path}, line 16, column 15: byte 0xfe is not UTF-8"):
        read_arpa(path)


@pytest.mark.parametrize("N", [1, 2, 3, 5])
def test_one_sentence_in_plain_python_equals_the_batch(N):
    sentences = markov_corpus(N, n_sentences=300)
    test = [*markov_corpus(90 + N, n_sentences=40), [], ["unknown-word", "w1"], ["w1"] * 12]
    fitted = ModifiedKneserNey(N, discounts=(0.4, 1.1, 1.8)).fit(sentences)
    for model in (fitted, read_arpa(io.StringIO(arpa_text(fitted))), MLE(N).fit(sentences), AddK(N).fit(sentences)):
        one_by_one = [model.sentence_logprob(s) for s in test]
        np.testing.assert_array_equal(one_by_one, model.sentence_logprobs(test))
    with pytest.raises(TypeError, match="list of str tokens"):
        fitted.sentence_logprob("w1 w2")
