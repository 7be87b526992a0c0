"""Autograder checks of the Chapter 2 exercises (Bengio's neural probabilistic language model).

Each ``check_<name>(student_fn, hidden=False)``, made from :data:`CHECKS`, grades the
student's implementation of the function of the same name in :mod:`seqlearn.nlm.basics` (the
graded reference) and raises :class:`~seqlearn.grading.checks.CheckFailure` with an
explanation on the first wrong case. Visible cases are the notebook's worked examples plus
random cases from fixed seeds; hidden cases are drawn fresh at each grading run (see
:mod:`seqlearn.grading.checks` for the seed policy).

Random inputs follow the chapter's conventions: token ids 0, 1, 2 are ``<unk>``, ``<s>`` and
``</s>`` and words follow; a corpus is one flat stream ``<s> w_1 ... w_k </s> <s> ...``;
arrays are NumPy arrays (int64 ids, float64 parameters).

The targeted hints recognise the usual mistakes by recomputing them: windows that cross
sentence boundaries or lack the ``<s>`` padding, a model without its tanh, biases or direct
connections, a loss averaged over padding or computed with an overflowing softmax, a mixture
weight outside [0, 1].

The experiment, ``overfit_curve`` (training and held-out perplexity of the log-linear model of the context
words, trained by gradient descent from zero weights), is graded by properties rather than by equality with
:func:`overfit_curve`: both curves start at :math:`|V|` (a uniform model), neither ever goes below the
perplexity of its own data's empirical conditional distribution (:func:`empirical_floor`, which no model of
the context can beat), the training curve never rises without weight decay and falls overall, the held-out
curve ends above the training curve, and weight decay ends with a higher training perplexity.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from types import MappingProxyType

import numpy as np

from ..data.vocab import Vocab
from ..guard import reference
from ..nlm.basics import (
    best_interpolation_weight,
    context_windows,
    masked_cross_entropy,
    nlm_logits,
    perplexity_from_loss,
)
from .checks import Case, FunctionCheck, define_checkers, same_values
from .learnability import PlantedCase, PropertyCheck

__all__ = [
    "random_stream",
    "EXAMPLE_STREAM",
    "EXAMPLE_CURVE",
    "CHECKS",
    "WEIGHT_DECAY",
    "empirical_floor",
    "markov_stream",
    "overfit_curve",
]

UNK_ID, BOS_ID, EOS_ID = Vocab.unk_id, Vocab.bos_id, Vocab.eos_id
FIRST_WORD_ID = 3

EXAMPLE_STREAM = np.array([BOS_ID, 3, 4, 5, EOS_ID, BOS_ID, 3, 6, EOS_ID], dtype=np.int64)
"""``the cat sat`` / ``the dog`` with ids the=3, cat=4, sat=5, dog=6: the notebook's corpus."""


_same = functools.partial(same_values, rtol=1e-6, atol=1e-9)


# ----------------------------------------------------------------------------- random streams


def random_stream(rng: np.random.Generator, max_sentences: int = 5, max_len: int = 7) -> np.ndarray:
    """An encoded corpus ``<s> w_1 ... w_k </s> <s> ...`` of 1..max_sentences sentences (int64).

    Words are ids from a vocabulary of 6..15 types (ids 3 and up), with Zipf-like frequencies
    and an occasional ``<unk>``; sentences have 0..max_len words (an empty one is rare).
    """
    vocab_size = int(rng.integers(FIRST_WORD_ID + 3, 16))
    words = np.arange(FIRST_WORD_ID, vocab_size)
    weights = 1.0 / np.arange(1, len(words) + 1)
    lengths = rng.integers(0, max_len + 1, size=rng.integers(1, max_sentences + 1))
    lengths[rng.random(lengths.size) < 0.85] |= 1  # empty sentences stay rare
    pieces = []
    for k in lengths:
        ids = rng.choice(words, size=k, p=weights / weights.sum())
        ids[rng.random(k) < 0.05] = UNK_ID
        pieces.append(np.concatenate([[BOS_ID], ids, [EOS_ID]]))
    return np.concatenate(pieces).astype(np.int64)


# ----------------------------------------------------------------------------- context_windows


def _context_windows_case(rng: np.random.Generator) -> Case:
    return Case({"stream": random_stream(rng), "n": int(rng.integers(1, 6))})


def _windows_across_sentences(stream: np.ndarray, n: int) -> np.ndarray:
    """The contexts of the mistake of sliding one window over the whole stream (padded only at its start)."""
    padded = np.concatenate([np.full(n - 1, BOS_ID), stream])
    positions = np.flatnonzero(stream != BOS_ID)
    return np.array([padded[t : t + n - 1] for t in positions]).reshape(len(positions), n - 1)


def _padding(stream: np.ndarray, n: int) -> np.ndarray:
    """(T, n - 1) bool: which context positions lie before the sentence's ``<s>`` (filled with ``<s>``)."""
    positions = np.flatnonzero(stream != BOS_ID)
    start = np.maximum.accumulate(np.where(stream == BOS_ID, np.arange(len(stream)), 0))
    back = positions[:, None] - np.arange(n - 1, 0, -1)[None, :]
    return back < start[positions][:, None]


def _context_windows_hint(case: Case, expected, got) -> str | None:
    stream, n = case.inputs["stream"], case.inputs["n"]
    want_contexts, want_targets = expected
    if isinstance(got, (tuple, list)) and len(got) != 2:
        return "return a pair (contexts, targets): two arrays, not a list of windows"
    contexts, targets = (np.asarray(x) for x in got)
    if contexts.shape == want_targets.shape and targets.shape == want_contexts.shape:
        return "return the pair in the order (contexts, targets)"
    if contexts.shape == (len(want_targets), n):
        return "a context holds the n - 1 tokens before the target, not the target itself: shape (T, n - 1)"
    if contexts.size == 0 and contexts.shape == want_contexts.shape and contexts.dtype.kind not in "iu":
        return "for n = 1 the contexts are an empty integer array of shape (T, 0): np.zeros((T, 0), dtype=np.int64)"
    if targets.ndim == 1 and np.any(targets == BOS_ID):
        return "<s> is never a target: skip the positions where the stream holds <s> (id 1), but keep </s>"
    if targets.ndim == 1 and len(targets) < len(want_targets):
        return (
            "every token after <s> is a target, even the first word of a sentence whose context is incomplete: "
            "fill the missing context positions with <s> (id 1) instead of skipping the token"
        )
    if contexts.shape != want_contexts.shape:
        return None
    if np.array_equal(contexts, _windows_across_sentences(stream, n)):
        return (
            "your windows cross sentence boundaries: a context never reaches into the previous sentence; "
            "the positions before the sentence's own <s> are filled with <s> (id 1)"
        )
    if n > 2 and np.array_equal(contexts, want_contexts[:, ::-1]):
        return "order each context oldest first: contexts[i] = (w_{t-n+1}, ..., w_{t-1}), the last column is w_{t-1}"
    padding = _padding(stream, n)
    if np.array_equal(contexts[~padding], want_contexts[~padding]) and not np.all(contexts[padding] == BOS_ID):
        return "fill the positions before the start of a sentence with the id of <s>, which is 1 (not 0 or -1)"
    return None


CONTEXT_WINDOWS = FunctionCheck(
    name="context_windows",
    reference=context_windows,
    random_case=_context_windows_case,
    fixed_cases=(
        Case({"stream": EXAMPLE_STREAM, "n": 3}, label="the worked example"),
        Case({"stream": EXAMPLE_STREAM, "n": 2}, label="bigram windows of the worked example"),
        Case({"stream": EXAMPLE_STREAM, "n": 5}, label="windows longer than a sentence"),
        Case({"stream": np.array([BOS_ID, EOS_ID, BOS_ID, 3, 4, EOS_ID]), "n": 3}, label="an empty sentence"),
        Case({"stream": EXAMPLE_STREAM, "n": 1}, label="n = 1: empty contexts"),
    ),
    hint="every token except <s> is a target w_t; its context is the n - 1 tokens before it, oldest first, with "
    "the positions before the sentence's own <s> filled with <s> (id 1), so a window never reaches into the "
    "previous sentence; return (contexts, targets), integer arrays of shapes (T, n - 1) and (T,)",
    targeted_hint=_context_windows_hint,
    branch=lambda case: case.inputs["n"],
)


# ----------------------------------------------------------------------------- nlm_logits

EXAMPLE_PARAMS = {
    "C": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
    "H": np.array([[0.5, 0.0, 0.0, 0.5], [0.0, 1.0, -1.0, 0.0]]),
    "d": np.array([0.0, 0.5]),
    "U": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]),
    "b": np.array([0.0, 0.0, -1.0]),
}
EXAMPLE_W = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
"""The notebook's model: |V| = 3, m = 2, n = 3, h = 2 (and its direct connections)."""


def _nlm_inputs(contexts, W=None, **params) -> dict:
    inputs = {"contexts": np.asarray(contexts, dtype=np.int64), **(params or EXAMPLE_PARAMS)}
    if W is not None:
        inputs["W"] = W
    return inputs


def _nlm_case(rng: np.random.Generator) -> Case:
    vocab_size, m, k, h, batch = (int(rng.integers(lo, hi)) for lo, hi in ((4, 12), (2, 5), (1, 4), (2, 7), (1, 6)))
    params = {
        "C": rng.normal(0.0, 1.0, size=(vocab_size, m)),
        "H": rng.normal(0.0, 0.7, size=(h, k * m)),
        "d": rng.normal(0.0, 0.5, size=h),
        "U": rng.normal(0.0, 1.0, size=(vocab_size, h)),
        "b": rng.normal(0.0, 0.5, size=vocab_size),
    }
    W = rng.normal(0.0, 0.5, size=(vocab_size, k * m)) if rng.random() < 0.6 else None
    contexts = rng.integers(0, vocab_size, size=(batch, k))
    inputs = _nlm_inputs(contexts, W, **params)
    return Case(inputs, keywords=("W",) if W is not None else ())


def _nlm_variants(contexts, C, H, d, U, b, W=None) -> dict[str, np.ndarray]:
    """Logits computed with each usual mistake, keyed by the advice that fixes it."""
    contexts = np.asarray(contexts)

    def embed(ctx):
        return C[ctx].reshape(len(ctx), -1)

    x, x_reversed = embed(contexts), embed(contexts[:, ::-1])
    direct = 0.0 if W is None else x @ W.T
    hidden = np.tanh(d + x @ H.T) @ U.T
    variants = {
        "apply tanh to the hidden pre-activation: the hidden layer is tanh(d + H x), not d + H x": (
            b + direct + (d + x @ H.T) @ U.T
        ),
        "add the hidden bias d inside the tanh: tanh(d + H x)": b + direct + np.tanh(x @ H.T) @ U.T,
        "d belongs inside the tanh: tanh(d + H x), not tanh(H x) + d": b + direct + (np.tanh(x @ H.T) + d) @ U.T,
        "add the output bias b: y = b + W x + U tanh(d + H x)": direct + hidden,
        "concatenate the embeddings oldest word first: x = [C[w_{t-n+1}]; ...; C[w_{t-1}]], "
        "which is C[contexts].reshape(B, -1)": (
            b + (0.0 if W is None else x_reversed @ W.T) + np.tanh(d + x_reversed @ H.T) @ U.T
        ),
    }
    if W is not None:
        variants["add the direct connections W x when W is given: y = b + W x + U tanh(d + H x)"] = b + hidden
    return variants


def _nlm_hint(case: Case, expected: np.ndarray, got) -> str | None:
    got = np.asarray(got, dtype=float)
    if got.shape == expected.shape[::-1] and (got.shape != expected.shape or _same(got.T, expected)):
        return "the logits have one row per context: shape (B, |V|), e.g. x @ H.T rather than H @ x.T"
    if got.shape != expected.shape:
        return None
    shifted = np.exp(expected - expected.max(axis=1, keepdims=True))
    if _same(got, shifted / shifted.sum(axis=1, keepdims=True)):
        return "return the logits y themselves, before the softmax"
    for advice, variant in _nlm_variants(**case.inputs).items():
        if _same(got, variant):
            return advice
    return None


NLM_LOGITS = FunctionCheck(
    name="nlm_logits",
    reference=nlm_logits,
    random_case=_nlm_case,
    fixed_cases=(
        Case(_nlm_inputs([[0, 2]]), label="the worked example"),
        Case(_nlm_inputs([[0, 2]], EXAMPLE_W), keywords=("W",), label="the worked example with direct connections"),
        Case(_nlm_inputs([[0, 2], [1, 1], [2, 0]]), label="a batch of three contexts"),
    ),
    hint="x = C[contexts].reshape(B, -1) concatenates the embeddings (oldest word first); "
    "y = b + W x + U tanh(d + H x) row by row, i.e. y = b + x @ W.T + np.tanh(d + x @ H.T) @ U.T; "
    "leave out the W x term when W is None; return the (B, |V|) array of logits",
    targeted_hint=_nlm_hint,
    rtol=1e-6,
    atol=1e-9,
)


# ----------------------------------------------------------------------------- masked_cross_entropy

_MASK_DTYPES = (np.float64, np.int64, np.bool_)


def _masked_ce_case(rng: np.random.Generator) -> Case:
    vocab_size, steps = int(rng.integers(2, 9)), int(rng.integers(1, 7))
    shape = (steps,) if rng.random() < 0.35 else (int(rng.integers(1, 5)), steps)
    lengths = rng.integers(0, steps + 1, size=shape[:-1] or (1,))
    lengths[int(rng.integers(len(lengths)))] = max(1, int(rng.integers(1, steps + 1)))  # some real token
    mask = (np.arange(steps) < lengths[:, None]).reshape(shape)
    scale = float(rng.choice([1.0, 3.0, 10.0, 1000.0], p=[0.35, 0.25, 0.2, 0.2]))
    logits = rng.normal(0.0, scale, size=(*shape, vocab_size))
    targets = np.where(mask, rng.integers(0, vocab_size, size=shape), 0)
    return Case({"logits": logits, "targets": targets, "mask": mask.astype(rng.choice(_MASK_DTYPES))})  # type: ignore[arg-type]


def _token_nll(logits, targets) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=-1))
    return log_z - np.take_along_axis(shifted, targets[..., None], axis=-1)[..., 0]


def _masked_ce_hint(case: Case, expected: float, got) -> str | None:
    got = float(got)
    if not math.isfinite(got):
        return (
            "with large logits np.exp overflows (e^1000 is inf) and a softmax probability can underflow to 0 "
            "(log 0 is -inf): compute the log-softmax directly as (y_w - max y) - log sum_v exp(y_v - max y), "
            "rather than exponentiating the raw logits or taking the log of a probability"
        )
    nll = _token_nll(np.asarray(case.inputs["logits"], dtype=float), np.asarray(case.inputs["targets"]))
    mask = np.asarray(case.inputs["mask"], dtype=float)
    if math.isclose(got, float((mask * nll).sum() / mask.size), rel_tol=1e-6):
        return "divide by the number of real tokens, mask.sum(), not by the number of positions: padding must not count"
    if math.isclose(got, float(nll.mean()), rel_tol=1e-6):
        return "average over the real tokens only: multiply each token's loss by the mask and divide by mask.sum()"
    if math.isclose(got, float((mask * nll).sum()), rel_tol=1e-6):
        return "return the mean over the real tokens, not the sum"
    if math.isclose(got, -expected, rel_tol=1e-6):
        return "mind the sign: the loss is the NEGATIVE log-probability of the target, a number >= 0"
    return None


def _ce_inputs(logits, targets, mask) -> dict:
    return {"logits": np.array(logits, dtype=float), "targets": np.array(targets), "mask": np.array(mask)}


MASKED_CROSS_ENTROPY = FunctionCheck(
    name="masked_cross_entropy",
    reference=masked_cross_entropy,
    random_case=_masked_ce_case,
    fixed_cases=(
        Case(
            _ce_inputs([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]], [0, 2, 1], [1, 1, 0]),
            label="the worked example",
        ),
        Case(
            _ce_inputs(
                [[[1.0, 2.0], [0.5, -0.5]], [[3.0, 0.0], [0.0, 0.0]]], [[1, 0], [0, 0]], [[True, True], [True, False]]
            ),
            label="a batch of two sequences, the second padded",
        ),
        Case(
            _ce_inputs([[1000.0, 0.0, -1000.0], [1000.0, 1000.0, 999.0]], [0, 2], [1.0, 1.0]),
            label="large logits (a naive exp overflows)",
        ),
        Case(_ce_inputs([[0.5, 0.1], [0.2, 0.3]], [0, 1], [0, 0]), label="only padding"),
    ),
    hint="L = sum_t m_t (-log softmax(y_t)[w_t]) / sum_t m_t, summed over every position t; logits have shape "
    "(..., |V|) and targets and mask the leading shape (...); subtract each row's maximum before exponentiating; "
    "raise ValueError when the mask selects no token; return a float",
    targeted_hint=_masked_ce_hint,
    rtol=1e-7,
    atol=1e-9,
)


# ----------------------------------------------------------------------------- perplexity_from_loss


def _perplexity_case(rng: np.random.Generator) -> Case:
    mean_nll = 0.0 if rng.random() < 0.1 else float(rng.uniform(0.0, 8.0))
    return Case({"mean_nll": mean_nll})


def _perplexity_hint(case: Case, expected: float, got) -> str | None:
    loss, got = case.inputs["mean_nll"], float(got)
    for value, advice in (
        (2.0**loss, "the loss is in nats (natural logarithms): the perplexity is e^L; 2^L is for a loss in bits"),
        (10.0**loss, "the loss is in nats (natural logarithms): the perplexity is e^L, not 10^L"),
        (math.exp(-loss), "mind the sign: the perplexity is e^{+L}, which is >= 1"),
        (loss, "return the perplexity e^L, not the loss itself"),
    ):
        if not math.isclose(value, expected) and math.isclose(got, value, rel_tol=1e-9):
            return advice
    return None


PERPLEXITY_FROM_LOSS = FunctionCheck(
    name="perplexity_from_loss",
    reference=perplexity_from_loss,
    random_case=_perplexity_case,
    fixed_cases=(
        Case({"mean_nll": math.log(100.0)}, label="the worked example"),
        Case({"mean_nll": 0.0}, label="a perfect model"),
        Case({"mean_nll": -0.5}, label="a negative loss"),
        Case({"mean_nll": math.nan}, label="a NaN loss"),
    ),
    hint="PP = e^L for a mean negative log-likelihood L in nats per token; raise ValueError if L is negative or NaN",
    targeted_hint=_perplexity_hint,
)


# ----------------------------------------------------------------------------- best_interpolation_weight


def _interpolation_case(rng: np.random.Generator) -> Case:
    steps = int(rng.integers(3, 41))
    log_p_b = rng.uniform(-7.0, -0.1, size=steps)
    delta = rng.normal(rng.uniform(-1.5, 1.5), rng.uniform(0.5, 2.5), size=steps)
    p_a, p_b = np.minimum(np.exp(log_p_b + delta), 1.0), np.exp(log_p_b)
    if rng.random() < 0.1:
        (p_a if rng.random() < 0.5 else p_b)[int(rng.integers(steps))] = 0.0  # one model misses a token
    return Case({"p_a": p_a, "p_b": p_b})


def _interpolation_hint(case: Case, expected: float, got) -> str | None:
    got = float(got)
    p_a, p_b = np.asarray(case.inputs["p_a"], dtype=float), np.asarray(case.inputs["p_b"], dtype=float)
    if math.isnan(got):
        return "NaN usually comes from 0/0: evaluate the slope only at lambda where lambda p_a + (1 - lambda) p_b > 0"
    if not 0.0 <= got <= 1.0:
        return (
            "lambda is a mixture weight and must lie in [0, 1]: the best weight is 1 when l'(1) >= 0 and 0 when "
            "l'(0) <= 0, so search only inside [0, 1] (the unconstrained stationary point may lie outside)"
        )
    interior = 0.0 < expected < 1.0
    if got in (0.0, 1.0) and got == float(p_a.mean() > p_b.mean()):
        return (
            "maximise the mean LOG-probability (minimise perplexity), not the mean probability, which is linear "
            "in lambda"
        )
    if math.isclose(got, 1.0 - expected, abs_tol=1e-6):
        return "lambda weights the first model: the mixture is lambda p_a + (1 - lambda) p_b"
    if not interior and 0.0 < got < 1.0 and abs(got - expected) > 1e-3:
        return "the best weight can lie at an end of [0, 1]: check the signs of l'(0) and l'(1) before searching inside"
    if abs(got - expected) < 1e-2:
        return "close, but not accurate enough: narrow the interval (e.g. bisection) until it is shorter than 1e-9"
    return None


INTERPOLATION_EXAMPLE = {"p_a": np.array([0.9, 0.2]), "p_b": np.array([0.3, 0.5])}

BEST_INTERPOLATION_WEIGHT = FunctionCheck(
    name="best_interpolation_weight",
    reference=best_interpolation_weight,
    random_case=_interpolation_case,
    fixed_cases=(
        Case(INTERPOLATION_EXAMPLE, label="the worked example"),
        Case(
            {"p_a": np.array([0.5, 0.4, 0.3]), "p_b": np.array([0.1, 0.2, 0.1])}, label="p_a is better on every token"
        ),
        Case(
            {"p_a": np.array([0.05, 0.2, 0.01]), "p_b": np.array([0.1, 0.3, 0.02])},
            label="p_b is better on every token",
        ),
        Case(
            {"p_a": np.array([0.2, 0.1, 0.4, 0.3]), "p_b": np.array([0.5, 0.3, 0.6, 0.0])}, label="p_b misses a token"
        ),
        Case({"p_a": np.array([0.2, 0.1, 0.4]), "p_b": np.array([0.5, 0.3])}, label="arrays of different lengths"),
    ),
    hint="maximise l(lambda) = mean_t log(lambda p_a,t + (1 - lambda) p_b,t) over [0, 1]: l is concave, so return 0 "
    "if l'(0) <= 0, 1 if l'(1) >= 0, and otherwise bisect on the sign of "
    "l'(lambda) = mean_t (p_a,t - p_b,t) / (lambda p_a,t + (1 - lambda) p_b,t) to within 1e-9; raise ValueError if "
    "the arrays differ in length",
    targeted_hint=_interpolation_hint,
    rtol=1e-6,
    atol=1e-6,
)


# ----------------------------------------------------------------------------- overfit_curve (an experiment)


def markov_stream(rng: np.random.Generator, start, rows, n_sentences: int, end: float = 0.15) -> np.ndarray:
    """An encoded stream of ``n_sentences`` sentences of a first-order chain over the words ``3, 4, ...``.

    The first word is drawn from ``start`` (W,), each next one from the row (W,) of ``rows`` of the word before,
    and every word ends its sentence with probability ``end`` (at least one word per sentence).
    """
    W, pieces = len(start), []
    for _ in range(n_sentences):
        words = [int(rng.choice(W, p=start))]
        while rng.random() >= end:
            words.append(int(rng.choice(W, p=rows[words[-1]])))
        pieces.append([BOS_ID, *(FIRST_WORD_ID + w for w in words), EOS_ID])
    return np.concatenate(pieces).astype(np.int64)


def _one_hot_contexts(contexts: np.ndarray, vocab_size: int) -> np.ndarray:
    """x = [e_{c_1}; ...; e_{c_{n-1}}]: (N, (n - 1) |V|), the embeddings of Part 2 with C = I."""
    N, width = contexts.shape
    x = np.zeros((N, width * vocab_size))
    x[np.arange(N)[:, None], np.arange(width) * vocab_size + contexts] = 1.0
    return x


def _log_softmax(y: np.ndarray) -> np.ndarray:
    shifted = y - y.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


@reference
def overfit_curve(train, test, n, vocab_size, epochs, lr, weight_decay, windows=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Training and held-out perplexity of a log-linear window model over epochs of gradient descent.

    The model is Part 2's with one-hot embeddings (:math:`C = I`) and no hidden layer, :math:`y = b + W x` with
    :math:`x = [e_{c_1}; \dots; e_{c_{n-1}}]`, from :math:`W = 0`, :math:`b = 0`. Each epoch is one step of
    gradient descent on the mean cross-entropy :math:`L` of the training windows with weight decay on :math:`W`:

    .. math:: W \leftarrow W - \eta\Big(\tfrac1N \textstyle\sum_i (\hat p_i - e_{w_i})\, x_i^\top + \lambda W\Big),
              \qquad b \leftarrow b - \eta\, \tfrac1N \textstyle\sum_i (\hat p_i - e_{w_i}),

    :math:`\hat p_i = \mathrm{softmax}(y_i)`. The perplexities :math:`e^{L}` of both streams are recorded before
    the first step and after each one.

    Parameters
    ----------
    train, test : 1-D int arrays, encoded streams ``<s> w_1 ... </s> <s> ...``
    n : int >= 1, the order (contexts of n - 1 tokens);  vocab_size : int, :math:`|V|`
    epochs : int >= 0;  lr : float, :math:`\eta`;  weight_decay : float, :math:`\lambda`
    windows : the pairs (contexts, targets) of ``train`` and ``test``, default :func:`context_windows`'s

    Returns
    -------
    train_ppl, test_ppl : (epochs + 1,) float arrays
    """
    if windows is None:
        windows = (context_windows(train, n), context_windows(test, n))
    (c_train, w_train), (c_test, w_test) = windows
    x_train, x_test = _one_hot_contexts(c_train, vocab_size), _one_hot_contexts(c_test, vocab_size)
    W, b = np.zeros((vocab_size, x_train.shape[1])), np.zeros(vocab_size)
    curves: tuple[list[float], list[float]] = ([], [])
    for epoch in range(epochs + 1):
        for curve, x, w in zip(curves, (x_train, x_test), (w_train, w_test)):
            log_p = _log_softmax(x @ W.T + b)  # (N, |V|)
            curve.append(math.exp(-log_p[np.arange(len(w)), w].mean()))
        if epoch == epochs:
            break
        g = np.exp(_log_softmax(x_train @ W.T + b))  # (N, |V|) p_hat, then dL/dy = p_hat - e_w
        g[np.arange(len(w_train)), w_train] -= 1.0
        W -= lr * (g.T @ x_train / len(w_train) + weight_decay * W)
        b -= lr * g.mean(axis=0)
    return np.array(curves[0]), np.array(curves[1])


def empirical_floor(contexts, targets) -> float:
    r"""The perplexity :math:`e^{\hat H}` of the empirical conditional distribution of the targets given their contexts.

    :math:`\hat H = -\frac1N \sum_i \log \hat P(w_i \mid c_i)` with :math:`\hat P(w \mid c) = N(c, w) / N(c)`; by
    Gibbs' inequality no model of :math:`P(w \mid c)` has a lower perplexity on these windows.
    """
    contexts, targets = np.asarray(contexts), np.asarray(targets)
    rows = np.column_stack([contexts, targets])  # (N, n): a context and its target
    _, pair_of, pair_counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    _, context_of, context_counts = np.unique(contexts, axis=0, return_inverse=True, return_counts=True)
    p_hat = pair_counts[pair_of.ravel()] / context_counts[context_of.ravel()]
    return float(np.exp(-np.mean(np.log(p_hat))))


WEIGHT_DECAY = 0.05
"""The weight decay the judge runs an answer with, besides the case's own (0): in 300 draws the reference's final
training perplexity rose by at least 9% with it."""

CURVE_EPOCHS, CURVE_LR = 100, 1.0
"""Steps of gradient descent and their size: the Hessian of L is at most n / 2 (the softmax's at most 1/2, the
features x with the bias have |x|^2 = n), so with n <= 3 a step of 1 < 2 / (n / 2) never raises the training loss."""


def _curve_case(rng: np.random.Generator, n: int | None = None, n_train: int | None = None) -> PlantedCase:
    """A chain over 5-7 words with sparse rows (Dirichlet 0.3): 5-10 training and 30 held-out sentences (with 8-15
    the held-out curve of a correct answer sometimes ended below the training curve: 3 draws in 200)."""
    W = int(rng.integers(5, 8))
    rows, start = rng.dirichlet(np.full(W, 0.3), size=W), rng.dirichlet(np.ones(W))
    n_train = int(rng.integers(5, 11)) if n_train is None else n_train
    train, test = markov_stream(rng, start, rows, n_train), markov_stream(rng, start, rows, 30)
    n = int(rng.choice([2, 3])) if n is None else n
    inputs = {"train": train, "test": test, "n": n, "vocab_size": FIRST_WORD_ID + W}
    inputs |= {"epochs": CURVE_EPOCHS, "lr": CURVE_LR, "weight_decay": 0.0}
    return PlantedCase(inputs)  # the floors are computed by the judge: drawing a case stays cheap


EXAMPLE_CURVE = dataclasses.replace(_curve_case(np.random.default_rng(0), n=2, n_train=10), label="the worked example")
"""The notebook's worked example: the chain, 10 training and 30 held-out sentences of ``_curve_case`` with seed 0,
bigram windows (n = 2)."""


def _curve_problem(case: PlantedCase, train_ppl: np.ndarray, test_ppl: np.ndarray) -> tuple[str, str] | None:
    """The first property the curves of one run break (weight decay 0), or None."""
    V = case.inputs["vocab_size"]
    if not (_same(train_ppl[0], V) and _same(test_ppl[0], V)):
        return f"before the first step the perplexities are not |V| = {V}", (
            "start from W = 0 and b = 0: every word then has probability 1/|V|, and PP = exp(-mean log P) = |V|; "
            "record the perplexities before the first step"
        )
    floor_train, floor_test = (
        empirical_floor(*context_windows(case.inputs[s], case.inputs["n"])) for s in ("train", "test")
    )
    if train_ppl.min() < floor_train * (1 - 1e-9) or test_ppl.min() < floor_test * (1 - 1e-9):
        return "a perplexity lies below that of the data's own conditional frequencies, which no model can beat", (
            "score each stream with its own windows: PP = exp(-mean over its targets of log softmax(y)[w])"
        )
    if np.any(np.diff(train_ppl) > 1e-9 * train_ppl[:-1]) or not train_ppl[-1] < train_ppl[0]:
        return "the training perplexity rose, or did not fall, over the epochs", (
            "step against the gradient of the mean cross-entropy: dL/dy_i = softmax(y_i) - e_{w_i}, "
            "dL/dW = mean_i (softmax(y_i) - e_{w_i}) x_i^T, dL/db = mean_i (softmax(y_i) - e_{w_i})"
        )
    if not test_ppl[-1] > train_ppl[-1]:
        return "the held-out perplexity did not end above the training perplexity", (
            "train on the training windows only and score the held-out stream with its own windows"
        )
    return None


def _curve_judge(run, case: PlantedCase, got) -> tuple[str, str | None] | None:
    """The properties of the run without weight decay, then a run with :data:`WEIGHT_DECAY`."""
    problem = _curve_problem(case, *(np.asarray(curve, dtype=float) for curve in got))
    if problem is not None:
        return problem
    decayed, error = run(Case({**case.inputs, "weight_decay": WEIGHT_DECAY}))
    if error is not None:
        return f"with weight_decay={WEIGHT_DECAY} it raised {type(error).__name__}: {error}", None
    if not float(np.asarray(decayed[0])[-1]) > float(np.asarray(got[0])[-1]):
        return f"with weight_decay={WEIGHT_DECAY} the final training perplexity is not higher than without it", (
            "weight decay adds lambda W to the gradient of W at every step, pulling W towards 0"
        )
    return None


OVERFIT_CURVE = PropertyCheck(
    name="overfit_curve",
    reference=overfit_curve,
    random_case=_curve_case,
    fixed_cases=(EXAMPLE_CURVE,),
    n_visible=2,
    n_hidden=2,
    hint="x = the one-hot vectors of the n - 1 context ids side by side, y = b + W x from W = 0, b = 0; record "
    "exp(mean NLL) of the training and of the held-out windows (given as windows), then each epoch "
    "W -= lr * (mean_i (softmax(y_i) - e_{w_i}) x_i^T + weight_decay * W) and "
    "b -= lr * mean_i (softmax(y_i) - e_{w_i}) on the training windows; return the pair (train_ppl, test_ppl) "
    "of arrays of epochs + 1 floats",
    judge=_curve_judge,  # no branch=: the two seeded cases have n = 2 and n = 3, and 400 draws cost seconds
    given={"windows": lambda inputs: tuple(context_windows(inputs[s], inputs["n"]) for s in ("train", "test"))},
)


CHECKS = MappingProxyType(
    {
        check.name: check
        for check in (
            CONTEXT_WINDOWS,
            NLM_LOGITS,
            MASKED_CROSS_ENTROPY,
            PERPLEXITY_FROM_LOSS,
            BEST_INTERPOLATION_WEIGHT,
            OVERFIT_CURVE,
        )
    }
)
"""The exercise name -> its :class:`~seqlearn.grading.checks.FunctionCheck` (read-only)."""

__all__ += define_checkers(globals(), CHECKS)  # check_<name> for each exercise, for the test cells
