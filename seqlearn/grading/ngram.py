"""Autograder checks of the Chapter 1 exercises (n-grams and Kneser-Ney).

Each ``check_<name>(student_fn, hidden=False)``, made from :data:`CHECKS`, grades the
student's implementation of the function of the same name in :mod:`seqlearn.ngram.basics`
(the graded reference) and raises :class:`~seqlearn.grading.checks.CheckFailure` with an
explanation on the first wrong case. Visible cases are the notebook's worked examples plus
random cases from fixed seeds; hidden cases are drawn at grading time (see
:mod:`seqlearn.grading.checks` for the seed policy).

Random inputs are small corpora over a fixed list of words, with Zipf-like frequencies so
that words repeat, and occasionally an empty sentence.

The experiment, ``order_sweep`` (held-out perplexity of add-k models of orders 1, 2, ...), is graded by
properties of its curve on sentences drawn from a first-order Markov source with a known entropy rate
(:meth:`seqlearn.data.markov.MarkovSource.first_order`), not by equality with :func:`order_sweep`: no value
below the source's floor (:data:`FLOOR_SLACK`), a fall from order 1 to 2 and a rise at the highest order, and
the same values for the two halves of the test scored apart and pooled (tried on the worked example).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from types import MappingProxyType

import numpy as np

from ..data.markov import MarkovSource
from ..data.vocab import BOS, EOS
from ..guard import reference
from ..ngram.basics import add_k_prob, continuation_counts, count_ngrams, kn_bigram_prob, mkn_discounts, perplexity
from .checks import Case, FunctionCheck, compare, define_checkers
from .learnability import PlantedCase, PropertyCheck

__all__ = ["CHECKS", "EXAMPLE_SWEEP", "FLOOR_SLACK", "order_sweep", "random_source"]

WORDS = ("the", "cat", "dog", "sat", "ran", "on", "a", "mat", "big", "red", "saw", "and")
UNSEEN_WORD = "zebra"
EXAMPLE = [["the", "cat", "sat"], ["the", "dog"]]


# ----------------------------------------------------------------------------- random corpora


def random_sentences(rng: np.random.Generator, max_sentences: int = 5, max_len: int = 6) -> list[list[str]]:
    """1..max_sentences sentences of 0..max_len tokens over a random subset of :data:`WORDS`."""
    vocab = rng.permutation(WORDS)[: rng.integers(2, len(WORDS) + 1)].tolist()
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    lengths = rng.integers(0, max_len + 1, size=rng.integers(1, max_sentences + 1))
    lengths[rng.random(lengths.size) < 0.8] |= 1  # empty sentences stay rare
    return [[str(w) for w in rng.choice(vocab, size=k, p=weights / weights.sum())] for k in lengths]


def _types(sentences) -> list[str]:
    return sorted({w for s in sentences for w in s})


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _counts(sentences, n: int) -> Counter:
    return count_ngrams(sentences, n)


# ----------------------------------------------------------------------------- count_ngrams


def _count_ngrams_case(rng: np.random.Generator) -> Case:
    return Case({"sentences": random_sentences(rng), "n": int(rng.integers(1, 5))})


def _count_ngrams_hint(case: Case, expected: Counter, got) -> str | None:
    if not all(isinstance(gram, tuple) for gram in got):
        return "the keys must be tuples of n tokens, e.g. ('the', 'cat'), not strings or lists"
    if (BOS,) in got:
        return "('<s>',) is not a unigram: <s> is a context that is never predicted, so it is never counted alone"
    if any(BOS in gram[1:] or EOS in gram[:-1] for gram in got):
        return "<s> can only open an n-gram and </s> only close one: pad each sentence separately"
    if sum(got.values()) != sum(expected.values()):
        return "a padded sentence of length L has L - n + 1 n-grams: pad with exactly one <s> and one </s>"
    return None


COUNT_NGRAMS = FunctionCheck(
    name="count_ngrams",
    reference=count_ngrams,
    random_case=_count_ngrams_case,
    fixed_cases=(
        Case({"sentences": EXAMPLE, "n": 2}, label="the worked example"),
        Case({"sentences": EXAMPLE, "n": 1}, label="unigrams of the worked example"),
        Case({"sentences": [[]], "n": 2}, label="an empty sentence"),
    ),
    hint="pad each sentence as <s> w_1 ... w_k </s>, count every window of n tokens as a tuple, "
    "skip the unigram ('<s>',), and return a collections.Counter",
    targeted_hint=_count_ngrams_hint,
    branch=lambda case: case.inputs["n"],
)


# ----------------------------------------------------------------------------- add_k_prob


def _add_k_case(rng: np.random.Generator) -> Case:
    sentences = random_sentences(rng)
    n = int(rng.integers(1, 4))
    counts = _counts(sentences, n)
    contexts = sorted({gram[:-1] for gram in counts})
    if rng.random() < 0.2 or not contexts:  # an unseen context (the only kind if no n-gram fits)
        contexts = [tuple(_pick(rng, [*WORDS, UNSEEN_WORD]) for _ in range(n - 1))]
    words = [*_types(sentences), EOS, UNSEEN_WORD]
    k = float(_pick(rng, [1.0, 0.5, 0.1, round(float(rng.uniform(0.01, 2.0)), 3)]))
    inputs = {
        "context": _pick(rng, contexts),
        "word": _pick(rng, words),
        "counts": counts,
        "k": k,
        "vocab_size": len(_types(sentences)) + 2,  # the words, </s> and <unk>
    }
    return Case(inputs)


def _add_k_hint(case: Case, expected: float, got) -> str | None:
    counts, context, k = case.inputs["counts"], tuple(case.inputs["context"]), case.inputs["k"]
    numerator = counts.get((*context, case.inputs["word"]), 0) + k
    history_count = _context_count(counts, context)
    if history_count and math.isclose(got, numerator / history_count):
        return "add k |V| to the denominator: every word of the vocabulary received k extra counts"
    if math.isclose(got, (numerator - k) / (history_count + k * case.inputs["vocab_size"])):
        return "add k to the numerator too"
    return None


def _add_k_inputs(context: tuple, word: str, k: float) -> dict:
    """Inputs of a worked example: the bigram counts of :data:`EXAMPLE` and |V| = 6."""
    return {"context": context, "word": word, "counts": _counts(EXAMPLE, 2), "k": k, "vocab_size": 6}


def _context_count(counts, context: tuple) -> int:
    return sum(c for gram, c in counts.items() if gram[:-1] == context)


ADD_K_PROB = FunctionCheck(
    name="add_k_prob",
    reference=add_k_prob,
    random_case=_add_k_case,
    fixed_cases=(
        Case(_add_k_inputs(("the",), "cat", k=1.0), label="the worked example"),
        Case(_add_k_inputs(("cat",), "dog", k=1.0), label="an unseen bigram"),
        Case(_add_k_inputs(("dog",), "the", k=0.5)),
    ),
    hint="P(w | h) = (c(h w) + k) / (c(h •) + k |V|), where c(h •) sums the counts of all n-grams that start with "
    "the context h (it is 0 for an unseen context) and the counts may lack h w",
    targeted_hint=_add_k_hint,
)


# ----------------------------------------------------------------------------- perplexity


def _perplexity_case(rng: np.random.Generator) -> Case:
    probs = rng.uniform(0.001, 1.0, size=rng.integers(1, 30))
    log_probs = np.log(probs).tolist()
    if rng.random() < 0.1:
        log_probs[int(rng.integers(len(log_probs)))] = -math.inf
    return Case({"log_probs": log_probs})


def _perplexity_hint(case: Case, expected: float, got) -> str | None:
    if isinstance(got, float) and math.isfinite(expected) and got > 0:
        if math.isclose(got, 1.0 / expected, rel_tol=1e-6):
            return "mind the sign: perplexity is exp of MINUS the average log-probability"
        if math.isclose(got, math.log(expected), rel_tol=1e-6):
            return "return exp(...) of the average negative log-probability, not the average itself"
    return None


PERPLEXITY = FunctionCheck(
    name="perplexity",
    reference=perplexity,
    random_case=_perplexity_case,
    fixed_cases=(
        Case({"log_probs": [math.log(1 / 2), math.log(1 / 4), math.log(1 / 8)]}, label="the worked example"),
        Case({"log_probs": [math.log(0.25), -math.inf]}, label="a token of probability zero"),
        Case({"log_probs": []}, label="no tokens"),
    ),
    hint="PP = exp(-(1/T) * sum_t log P(w_t | h_t)) with natural logs; raise ValueError for an empty list",
    targeted_hint=_perplexity_hint,
)


# ----------------------------------------------------------------------------- continuation_counts


def _continuation_case(rng: np.random.Generator) -> Case:
    return Case({"counts": _counts(random_sentences(rng), int(rng.integers(2, 4)))})


def _continuation_hint(case: Case, expected: Counter, got) -> str | None:
    orders = {len(gram) for gram in case.inputs["counts"]}
    if not all(isinstance(key, tuple) for key in got) or any(len(key) in orders for key in got):
        return "the keys are the (n-1)-gram suffixes u = gram[1:] (tuples), not whole n-grams or single words"
    if sum(got.values()) == sum(case.inputs["counts"].values()) != sum(expected.values()):
        return "count distinct left neighbours (types), not occurrences: add 1 per n-gram type, not c(v u)"
    return None


CONTINUATION_COUNTS = FunctionCheck(
    name="continuation_counts",
    reference=continuation_counts,
    random_case=_continuation_case,
    fixed_cases=(Case({"counts": _counts(EXAMPLE, 2)}, label="the worked example"),),
    hint="N1+(• u) is the number of distinct words v with c(v u) > 0; key the result by the suffix tuple gram[1:]",
    targeted_hint=_continuation_hint,
)


# ----------------------------------------------------------------------------- kn_bigram_prob


def _kn_case(rng: np.random.Generator) -> Case:
    sentences = random_sentences(rng)
    types = _types(sentences)
    d = float(_pick(rng, [0.75, 0.5, 1.0, round(float(rng.uniform(0.0, 1.0)), 3)]))
    inputs = {
        "context": _pick(rng, [BOS, *types, *types, UNSEEN_WORD]),
        "word": _pick(rng, [*types, *types, EOS, UNSEEN_WORD]),
        "bigram_counts": _counts(sentences, 2),
        "d": d,
    }
    return Case(inputs)


def _kn_inputs(context: str, word: str, d: float) -> dict:
    """Inputs of a worked example: the bigram counts of :data:`EXAMPLE`."""
    return {"context": context, "word": word, "bigram_counts": _counts(EXAMPLE, 2), "d": d}


def _kn_hint(case: Case, expected: float, got) -> str | None:
    if _context_count(case.inputs["bigram_counts"], (case.inputs["context"],)) == 0:
        return "for a context never seen, c(v •) = 0: return P_cont(w) alone"
    return None


KN_BIGRAM_PROB = FunctionCheck(
    name="kn_bigram_prob",
    reference=kn_bigram_prob,
    random_case=_kn_case,
    fixed_cases=(
        Case(_kn_inputs("the", "cat", d=0.5), label="the worked example"),
        Case(_kn_inputs("the", "sat", d=0.5), label="an unseen bigram"),
        Case(_kn_inputs(UNSEEN_WORD, "cat", d=0.75), label="an unseen context"),
    ),
    hint="P_KN(w | v) = max(c(v w) - d, 0) / c(v •) + d N1+(v •) / c(v •) * P_cont(w), with "
    "P_cont(w) = N1+(• w) / N1+(• •) from the continuation counts it is given; use P_cont(w) alone when c(v •) = 0",
    targeted_hint=_kn_hint,
    given={"continuation": lambda inputs: continuation_counts(inputs["bigram_counts"])},
)


# ----------------------------------------------------------------------------- mkn_discounts


def _mkn_case(rng: np.random.Generator) -> Case:
    if rng.random() < 0.5:
        counts = _counts(random_sentences(rng, max_sentences=40, max_len=8), int(rng.integers(1, 3)))
        return Case({"count_of_counts": Counter(counts.values())})
    n = np.sort(rng.integers(0, 60, size=4))[::-1]
    keys = [1, 2, 3, 4] if rng.random() < 0.8 else [1, 2, 3]
    return Case({"count_of_counts": {r: int(n[r - 1]) for r in keys}})


def _mkn_branch(case: Case) -> str:
    """Which outcome the specification decides for a case: discounts, or which ValueError."""
    n1, n2, n3 = (case.inputs["count_of_counts"].get(r, 0) for r in (1, 2, 3))
    if min(n1, n2, n3) == 0:
        return "some n_r is zero"
    try:
        mkn_discounts(case.inputs["count_of_counts"])
    except ValueError:
        return "a discount outside [0, r]"
    return "discounts"


MKN_DISCOUNTS = FunctionCheck(
    name="mkn_discounts",
    reference=mkn_discounts,
    random_case=_mkn_case,
    fixed_cases=(
        Case({"count_of_counts": {1: 10, 2: 4, 3: 2, 4: 1}}, label="the worked example"),
        Case({"count_of_counts": {1: 7, 2: 3, 3: 1}}, label="no n-gram seen 4 times"),
        Case({"count_of_counts": {1: 5, 2: 0, 3: 1, 4: 1}}, label="n_2 = 0"),
        Case({"count_of_counts": {1: 10, 2: 1, 3: 10}}, label="D2 < 0: outside [0, 2]"),
        Case({"count_of_counts": {1: 10, 2: 4, 3: 1, 4: 10}}, label="D3+ < 0: outside [0, 3]"),
    ),
    hint="Y = n1 / (n1 + 2 n2), D1 = 1 - 2Y n2/n1, D2 = 2 - 3Y n3/n2, D3+ = 3 - 4Y n4/n3; a missing r counts "
    "as n_r = 0; raise ValueError if n1, n2 or n3 is 0 or if some D_r is outside [0, r]; return the tuple "
    "(D1, D2, D3+)",
    branch=_mkn_branch,
)


# ----------------------------------------------------------------------------- order_sweep (an experiment)


def random_source(rng: np.random.Generator, n_words: int = 6, end: float = 0.1) -> MarkovSource:
    """A source over ``n_words`` of :data:`WORDS` whose rows are sparse (Dirichlet 0.3): the previous word says
    much about the next, and sentences have ``1 / end`` words on average."""
    words = tuple(str(w) for w in rng.permutation(WORDS)[:n_words])
    rows = rng.dirichlet(np.full(n_words, 0.3), size=n_words + 1)  # (1 + W, W): <s>, then the words
    transition = np.column_stack([(1.0 - end) * rows[1:], np.full(n_words, end)])
    return MarkovSource.first_order(words, rows[0], transition)


@reference
def order_sweep(train, test, orders, k, vocab_size, counts=None) -> list[float]:
    r"""Held-out perplexity of the add-k n-gram model of each order: the experiment of Exercises 1.

    For each order :math:`n`, every predicted token :math:`w_t` of the padded test sentences (the words and
    ``</s>``) is scored by :math:`P_{\text{add-}k}(w_t \mid h_t)` with the counts of order :math:`n`, where
    :math:`h_t` is the :math:`n - 1` tokens before it in its sentence, or all of them when there are fewer (no
    n-gram starts with so short a context: the estimate is :math:`1/|V|`).

    Parameters
    ----------
    train, test : list of sentences (lists of str)
    orders : list of int >= 1
    k : float > 0;  vocab_size : int, :math:`|V|`
    counts : mapping of n to the n-gram counts of ``train``, default :func:`count_ngrams` of each order

    Returns
    -------
    list of float, the perplexity of each order
    """
    if counts is None:
        counts = {n: count_ngrams(train, n) for n in orders}
    result = []
    for n in orders:
        histories: Counter = Counter()
        for gram, c in counts[n].items():
            histories[gram[:-1]] += c  # c(h .) of every context at once
        log_probs = []
        for sentence in test:
            padded = [BOS, *sentence, EOS]
            for t in range(1, len(padded)):
                h = tuple(padded[max(0, t - n + 1) : t])
                seen = counts[n].get((*h, padded[t]), 0)  # 0 for a context shorter than n - 1, as c(h .)
                log_probs.append(math.log((seen + k) / (histories.get(h, 0) + k * vocab_size)))
        result.append(perplexity(log_probs))
    return result


FLOOR_SLACK = 0.7
"""A held-out perplexity may lie this factor below the source's floor (the test sentences are a finite sample: in
500 draws of the cases the reference's lowest perplexity was at least 0.88 times the floor)."""


SWEEP_ORDERS = (1, 2, 3, 4, 5)


def _sweep_case(rng: np.random.Generator, n_train: int | None = None, k: float | None = None) -> PlantedCase:
    """Training and test sentences of a fresh source, the floor planted: 30-60 training sentences, 30 test ones."""
    source = random_source(rng)
    train = source.sample(n_sentences=int(rng.integers(30, 61)) if n_train is None else n_train, rng=rng)
    test = source.sample(n_sentences=30, rng=rng)
    k = float(rng.choice([0.5, 1.0])) if k is None else k
    inputs = {"train": train, "test": test, "orders": list(SWEEP_ORDERS), "k": k}
    return PlantedCase({**inputs, "vocab_size": len(source.words) + 2}, planted=source.perplexity_floor())


EXAMPLE_SWEEP = dataclasses.replace(
    _sweep_case(np.random.default_rng(0), n_train=60, k=1.0), label="the worked example"
)
"""The notebook's worked example: the source of ``random_source(np.random.default_rng(0))``, 60 training and 30
test sentences drawn after it with the same generator, k = 1."""


def _pooled(parts: list[tuple[int, list[float]]]) -> list[float]:
    r"""The perplexities of the union of test sets scored apart: :math:`\exp(\sum_i N_i \log PP_i / \sum_i N_i)`,
    :math:`N_i` the predicted tokens of part :math:`i`, one value per order."""
    tokens = sum(N for N, _ in parts)
    return [math.exp(sum(N * math.log(ppl[j]) for N, ppl in parts) / tokens) for j in range(len(parts[0][1]))]


def _sweep_judge(run, case: PlantedCase, got) -> tuple[str, str | None] | None:
    """Above the floor (with slack), falling from order 1 to 2 and rising at the last, and (on the worked example)
    the same as the test's two halves scored apart and pooled: no context reaches across a sentence."""
    ppl = [float(p) for p in got]
    if min(ppl) < FLOOR_SLACK * case.planted:
        return "a held-out perplexity lies below the perplexity of the source itself, which no model can beat", (
            "score the test sentences, not the training ones, and take PP = exp(-mean log P): the minus sign too"
        )
    if not (ppl[0] > ppl[1] and ppl[-1] > min(ppl)):
        return "the curve does not fall from order 1 to order 2 and rise again at the highest order", (
            "the model of order n uses the counts of order n and a context of the n - 1 tokens before each word "
            "(fewer at the start of a sentence); on this source the bigram model is far better than the unigram, "
            "and the highest orders have mostly unseen contexts"
        )
    if case.label != EXAMPLE_SWEEP.label:
        return None  # the halves are tried on the worked example only: each run costs
    inputs = dict(case.inputs)
    half = len(inputs["test"]) // 2
    parts = []
    for test in (inputs["test"][:half], inputs["test"][half:]):
        again, error = run(Case({**inputs, "test": test}))
        if error is not None or not isinstance(again, list | tuple) or len(again) != len(ppl):
            return "scoring half of the test sentences failed or returned something else", None
        parts.append((sum(len(sentence) + 1 for sentence in test), [float(p) for p in again]))
    if compare(got, _pooled(parts), rtol=1e-9, atol=1e-12) is not None:
        return "the two halves of the test sentences, scored apart and pooled, give other perplexities", (
            "pad each test sentence on its own (<s> ... </s>): a context never reaches into the previous sentence"
        )
    return None


ORDER_SWEEP = PropertyCheck(
    name="order_sweep",
    reference=order_sweep,
    random_case=_sweep_case,
    fixed_cases=(EXAMPLE_SWEEP,),
    n_visible=1,
    n_hidden=2,
    hint="for each order n, the perplexity (Part 3) of the add-k probabilities (Part 2) of every word and </s> of "
    "the test sentences under the counts of order n it is given (counts[n]); a list with one float per order",
    judge=_sweep_judge,
    given={"counts": lambda inputs: {n: count_ngrams(inputs["train"], n) for n in inputs["orders"]}},
)


CHECKS = MappingProxyType(
    {
        check.name: check
        for check in (
            COUNT_NGRAMS,
            ADD_K_PROB,
            PERPLEXITY,
            CONTINUATION_COUNTS,
            KN_BIGRAM_PROB,
            MKN_DISCOUNTS,
            ORDER_SWEEP,
        )
    }
)
"""The exercise name -> its :class:`~seqlearn.grading.checks.FunctionCheck` (read-only)."""

__all__ += define_checkers(globals(), CHECKS)  # check_<name> for each exercise, for the test cells
