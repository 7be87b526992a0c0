"""Synthetic corpora with known statistics.

Two generators make the text every chapter can use offline:

* :class:`MarkovSource`: sentences from a random order-``k`` Markov chain over a Zipfian
  vocabulary. Its entropy rate is known exactly (:meth:`MarkovSource.entropy_rate`), so a
  language model's perplexity can be compared with the best perplexity any model can reach.
* :class:`ToyEnglish`: a small English-like grammar with subject-verb number agreement
  across relative clauses and prepositional phrases ("the cat which mary saw yesterday at
  the park was hungry"), with an evaluation set at controlled subject-verb distance
  (:func:`agreement_examples`) and a scorer (:func:`agreement_accuracy`).

Randomness always comes from an explicit ``numpy.random.Generator`` (or an int seed for
one); nothing here keeps global state.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import linalg, special
from scipy.sparse import linalg as splinalg

from ..validation import generator, integer, probability, real
from .vocab import BOS, EOS, Vocab

__all__ = [
    "MarkovSource",
    "ToyEnglish",
    "ToySentence",
    "AgreementExample",
    "agreement_examples",
    "agreement_accuracy",
]

MAX_TABLE_ENTRIES = 10_000_000  # (V+1)^(order+1) float64 entries per table: 80 MB


# ----------------------------------------------------------------------------- checks


def _check_amount(n_tokens, n_sentences) -> tuple[int | None, int | None]:
    """Exactly one of ``n_tokens`` / ``n_sentences``, as an int >= 1."""
    if (n_tokens is None) == (n_sentences is None):
        raise ValueError("give exactly one of n_tokens or n_sentences")
    if n_tokens is not None:
        return integer(n_tokens, "n_tokens", low=1), None
    return None, integer(n_sentences, "n_sentences", low=1)


# ----------------------------------------------------------------------- Markov source


class MarkovSource:
    r"""Sentences from a random order-``k`` Markov chain with Zipfian marginals.

    The outcomes are the words ``w0 .. w{V-1}`` (``w0`` the most frequent) and ``</s>``.
    A sentence starts in the context of ``k`` copies of ``<s>``; each step draws the next
    outcome from

    .. math::

        P(\texttt{</s>} \mid c) = q = \frac{1}{L + 1}, \qquad
        P(w \mid c) = (1 - q)\, \frac{z(w)\, e^{x(c, w)}}{\sum_{w'} z(w')\, e^{x(c, w')}},

    .. math::

        z(w_r) = (r + 1)^{-a}, \qquad
        x(c, w) = \frac{s}{\sqrt{k}} \sum_{j=1}^{k} g_j(c_{-j:}, w),

    where :math:`c_{-j:}` are the last ``j`` tokens of the context, the :math:`g_j` are
    independent standard normal tables drawn from ``seed``, ``s`` is ``context_strength``,
    ``a`` is ``zipf_exponent`` and ``L`` is ``mean_length``. Every order ``j <= k`` adds
    information, so an n-gram model improves with ``n`` up to ``n = k + 1`` and not beyond,
    and the word marginals stay close to Zipf's law. Sentence lengths are geometric with
    mean exactly ``L`` words. Order 0 is the i.i.d. Zipf unigram source.

    Parameters
    ----------
    vocab_size : int
        Number of word types ``V >= 1``.
    order : int
        Markov order ``k >= 0`` (the context is the last ``k`` tokens).
    zipf_exponent : float
        ``a >= 0``; the rank-frequency plot of the words has slope about ``-a``.
    context_strength : float
        ``s >= 0``, the standard deviation of the log-weights the context adds.
    mean_length : float
        ``L > 0``, the target mean number of words per sentence.
    seed : int
        Seed of the transition tables: the same arguments give the same source.

    Attributes
    ----------
    P : numpy.ndarray
        Shape ``(n_contexts, V + 1)``: ``P[c, o]``, outcome ``o`` (word rank, ``V`` for
        ``</s>``) after context ``c`` (index ``sum_j c_j (V+1)^(k-j)``, oldest symbol first,
        ``V`` standing for ``<s>``; see :meth:`context_index`).
    words : list of str
        ``["w0", ..., "w{V-1}"]``.
    outcomes : list of str
        ``words + ["</s>"]``, the order of ``P``'s columns and :meth:`next_token_probs`.

    Notes
    -----
    The tables are dense, with :math:`(V+1)^{k}` contexts times :math:`V+1` outcomes
    (``<s>`` is the extra context symbol). They are limited to ``1e7`` entries (80 MB):
    for example ``V = 3000, k = 1``, ``V = 200, k = 2`` or ``V = 50, k = 3``.
    """

    def __init__(
        self,
        vocab_size: int,
        order: int,
        zipf_exponent: float = 1.0,
        context_strength: float = 1.0,
        mean_length: float = 20.0,
        seed: int = 0,
    ):
        self.vocab_size = V = integer(vocab_size, "vocab_size", low=1)
        self.order = k = integer(order, "order", low=0)
        self.zipf_exponent = real(zipf_exponent, "zipf_exponent", low=0.0)
        self.context_strength = real(context_strength, "context_strength", low=0.0)
        self.mean_length = real(mean_length, "mean_length", low=0.0, low_open=True)
        self.seed = integer(seed, "seed", low=0)
        entries = (V + 1) ** (k + 1)
        if entries > MAX_TABLE_ENTRIES:
            raise ValueError(
                f"vocab_size={V} with order={k} needs (V+1)^(order+1) = {entries:.3g} table entries; "
                f"the limit is {MAX_TABLE_ENTRIES:.0e} (80 MB): lower vocab_size or order"
            )
        self.words = [f"w{r}" for r in range(V)]
        self.outcomes = self.words + [EOS]
        self._rank = {w: r for r, w in enumerate(self.words)}
        self.P = self._transition_table(np.random.default_rng(self.seed))  # (n_contexts, V+1)
        self._cum: np.ndarray | None = None  # cumulative rows of P, made by the first sample
        self._visits = None  # expected_visits(), made by the first call

    # --- structure -------------------------------------------------------------------

    @property
    def n_outcomes(self) -> int:
        """``V + 1``: the words and ``</s>``."""
        return self.vocab_size + 1

    @property
    def n_contexts(self) -> int:
        """``(V + 1)^k``: every context of ``k`` symbols from the words and ``<s>``."""
        return self.n_outcomes**self.order

    @property
    def start_context(self) -> int:
        """Index of the all-``<s>`` context, ``sum_j V (V+1)^j = (V+1)^k - 1``."""
        return self.n_contexts - 1

    @property
    def vocab(self) -> Vocab:
        """A :class:`~seqlearn.data.vocab.Vocab` of the words in rank order (ids ``r + 3``)."""
        return Vocab(self.words)

    def __repr__(self) -> str:
        return (
            f"MarkovSource(vocab_size={self.vocab_size}, order={self.order}, "
            f"zipf_exponent={self.zipf_exponent}, context_strength={self.context_strength}, "
            f"mean_length={self.mean_length}, seed={self.seed})"
        )

    def _log_zipf(self) -> np.ndarray:
        """``log z(w_r) = -a log(r + 1)`` for the words, shape ``(V,)``."""
        return -self.zipf_exponent * np.log(np.arange(1, self.vocab_size + 1))

    def _transition_table(self, rng: np.random.Generator) -> np.ndarray:
        """``P[c, o]`` of shape ``(n_contexts, V+1)``; row ``c`` is the context's index."""
        V, k, A = self.vocab_size, self.order, self.n_outcomes
        P = np.zeros((A**k, A))
        logits = P[:, :V]  # (n_contexts, V), a view: P is filled in place
        x = logits.reshape((A,) * k + (V,), copy=False)  # x(c, w); axes: oldest .. newest symbol, word
        scale = self.context_strength / math.sqrt(k) if k else 0.0
        for j in range(1, k):  # g_j depends on the last j context symbols: the trailing axes
            x += scale * rng.standard_normal((A,) * j + (V,))
        for a in range(A if k else 0):  # g_k, drawn one oldest symbol at a time to save memory
            x[a] += scale * rng.standard_normal((A,) * (k - 1) + (V,))
        logits += self._log_zipf()
        logits -= logits.max(axis=1, keepdims=True)
        np.exp(logits, out=logits)
        q = self.eos_prob
        logits *= (1.0 - q) / logits.sum(axis=1, keepdims=True)
        P[:, V] = q
        return P

    @property
    def eos_prob(self) -> float:
        """``q = 1 / (L + 1)``: the probability of ``</s>`` in every context."""
        return 1.0 / (self.mean_length + 1.0)

    def _shift(self, context: np.ndarray, outcome: np.ndarray) -> np.ndarray:
        """Context after emitting word ``outcome`` in ``context``: drop the oldest symbol."""
        if self.order == 0:
            return np.zeros_like(context)
        return (context % (self.n_outcomes ** (self.order - 1))) * self.n_outcomes + outcome

    def context_index(self, context: Sequence[str]) -> int:
        """Row of ``P`` for a context given as tokens; shorter contexts are ``<s>``-padded.

        Only the last ``order`` tokens count. ``<s>`` may appear only before the words.
        """
        if isinstance(context, str):
            raise TypeError("context must be a sequence of tokens, not a str")
        context = list(context)
        context = context[max(0, len(context) - self.order) :] if self.order else []
        symbols = [self.vocab_size] * (self.order - len(context))
        for t in context:
            if t == BOS:
                if any(s != self.vocab_size for s in symbols):
                    raise ValueError(f"<s> can only pad the start of a context, got {context}")
                symbols.append(self.vocab_size)
            else:
                symbols.append(self._word_rank(t))
        index = 0
        for s in symbols:  # oldest first: index = sum_j c_j (V+1)^(k-j)
            index = index * self.n_outcomes + s
        return index

    def _word_rank(self, token) -> int:
        try:
            return self._rank[token]
        except (KeyError, TypeError):
            raise ValueError(f"{token!r} is not a word of this source (words are w0..w{self.vocab_size - 1})") from None

    def next_token_probs(self, context: Sequence[str] = ()) -> np.ndarray:
        """``P(o | context)`` for the outcomes ``self.outcomes`` (words, then ``</s>``).

        Returns
        -------
        numpy.ndarray
            Shape ``(V + 1,)``, summing to 1.
        """
        return self.P[self.context_index(context)].copy()

    # --- sampling --------------------------------------------------------------------

    def sample(self, n_tokens: int | None = None, n_sentences: int | None = None, rng=None) -> list[list[str]]:
        """Draw sentences (lists of word tokens; ``</s>`` is implied, ``<s>`` not included).

        Parameters
        ----------
        n_tokens : int, optional
            Draw sentences until they hold at least this many words in total (the last
            sentence is kept whole).
        n_sentences : int, optional
            Draw exactly this many sentences. Give exactly one of the two.
        rng : numpy.random.Generator, int or None
            Randomness (see :func:`seqlearn.validation.generator`). Use different seeds for training and test.

        Returns
        -------
        list of list of str
            Sentences may be empty (``</s>`` drawn first), as the source defines.

        Notes
        -----
        All sentences of a batch are drawn in parallel: each step draws one uniform number
        per unfinished sentence and inverts the cumulative table row of its context by a
        vectorised binary search, so the cost is ``O(N log V)`` numpy work for ``N`` tokens.
        """
        ranks, lengths = self.sample_ranks(n_tokens=n_tokens, n_sentences=n_sentences, rng=rng)
        tokens = np.array(self.words, dtype=object)[ranks]
        ends = np.cumsum(lengths)
        return [s.tolist() for s in np.split(tokens, ends[:-1])]

    def sample_ranks(self, n_tokens: int | None = None, n_sentences: int | None = None, rng=None):
        """Like :meth:`sample`, as integers.

        Returns
        -------
        ranks : numpy.ndarray
            Shape ``(sum(lengths),)``: word ranks of all sentences, concatenated.
        lengths : numpy.ndarray
            Shape ``(n_sentences,)``: words per sentence.
        """
        n_tokens, n_sentences = _check_amount(n_tokens, n_sentences)
        rng = generator(rng)
        if n_sentences is not None:
            return self._sample_batch(n_sentences, rng)
        assert n_tokens is not None  # _check_amount gives exactly one of the two
        parts, total = [], 0
        while total < n_tokens:
            batch = int(1.05 * (n_tokens - total) / max(self.mean_length, 0.5)) + 16
            ranks, lengths = self._sample_batch(batch, rng)
            keep = min(int(np.searchsorted(np.cumsum(lengths), n_tokens - total)) + 1, len(lengths))
            parts.append((ranks[: lengths[:keep].sum()], lengths[:keep]))
            total += int(lengths[:keep].sum())
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _sample_batch(self, n: int, rng: np.random.Generator):
        """``n`` sentences in parallel; returns (word ranks concatenated, lengths)."""
        V = self.vocab_size
        context = np.full(n, self.start_context, dtype=np.int64)
        alive = np.arange(n)
        steps, owners, draws = [], [], []
        t = 0
        while alive.size:
            outcome = self._draw(context, rng.random(alive.size))
            steps.append(np.full(alive.size, t, dtype=np.int64))
            owners.append(alive)
            draws.append(outcome)
            go_on = outcome != V
            alive, context = alive[go_on], self._shift(context[go_on], outcome[go_on])
            t += 1
        step, owner, outcome = (np.concatenate(x) for x in (steps, owners, draws))
        lengths = np.bincount(owner, minlength=n) - 1  # every sentence ends with one </s>
        is_word = outcome != V
        start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        ranks = np.empty(int(lengths.sum()), dtype=np.int64)
        ranks[start[owner[is_word]] + step[is_word]] = outcome[is_word]
        return ranks, lengths

    def _draw(self, context: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Smallest ``o`` with ``cum[context, o] > u`` (inverse CDF), by binary search."""
        A = self.n_outcomes
        if self._cum is None:
            cum = np.cumsum(self.P, axis=1)
            cum[:, -1] = 1.0
            self._cum = cum
        flat = self._cum.ravel()
        row = context * A
        lo = np.zeros(context.size, dtype=np.int64)
        hi = np.full(context.size, A - 1, dtype=np.int64)
        for _ in range(max(1, math.ceil(math.log2(A)))):
            mid = (lo + hi) // 2
            right = flat[row + mid] <= u
            lo = np.where(right, mid + 1, lo)
            hi = np.where(right, hi, mid)
        return lo

    # --- exact probabilities ---------------------------------------------------------

    def _encode(self, sentences) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Contexts and outcomes of every predicted token (words and ``</s>``)."""
        if isinstance(sentences, str) or not isinstance(sentences, Iterable):
            raise TypeError("sentences must be a list of token lists")
        sentences = list(sentences)
        V, k, A = self.vocab_size, self.order, self.n_outcomes
        outcome_parts = []
        for i, s in enumerate(sentences):
            if isinstance(s, str):
                raise TypeError(f"sentence {i} is a str; each sentence must be a list of tokens")
            outcome_parts.append([self._word_rank(t) for t in s] + [V])
        lengths = np.array([len(part) for part in outcome_parts], dtype=np.int64)
        outcome = np.fromiter((o for part in outcome_parts for o in part), dtype=np.int64, count=int(lengths.sum()))
        owner = np.repeat(np.arange(len(sentences)), lengths)
        position = np.arange(outcome.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        context = np.zeros(outcome.size, dtype=np.int64)
        for j in range(1, k + 1):  # symbol j back has weight (V+1)^(j-1); before the start: <s>
            back = np.where(position >= j, np.roll(outcome, j), V)
            context += back * A ** (j - 1)
        return context, outcome, owner

    def token_logprobs(self, sentences) -> np.ndarray:
        """``log P(o_t | c_t)`` of every predicted token, sentence after sentence.

        Each sentence contributes its words and one ``</s>``: shape
        ``(sum_i (len(s_i) + 1),)``.
        """
        context, outcome, _ = self._encode(sentences)
        with np.errstate(divide="ignore"):
            return np.log(self.P[context, outcome])

    def logprobs(self, sentences) -> np.ndarray:
        """Exact ``log P(s_i)`` (including its ``</s>``) of each sentence, shape ``(n,)``."""
        context, outcome, owner = self._encode(sentences)
        with np.errstate(divide="ignore"):
            return np.bincount(owner, weights=np.log(self.P[context, outcome]), minlength=owner.max(initial=-1) + 1)

    def logprob(self, sentence: Sequence[str]) -> float:
        r"""Exact :math:`\log P(s) = \sum_{t=1}^{|s|+1} \log P(o_t \mid c_t)` of one sentence."""
        if isinstance(sentence, str):
            raise TypeError("sentence must be a list of tokens, not a str")
        return float(self.logprobs([sentence])[0])

    sentence_logprob = logprob

    def cross_entropy(self, sentences) -> float:
        """Mean ``-log P`` per predicted token (nats) of ``sentences`` under this source."""
        return float(-self.token_logprobs(sentences).mean())

    # --- entropy rate ----------------------------------------------------------------

    def context_entropies(self) -> np.ndarray:
        r""":math:`H(c) = -\sum_o P(o \mid c) \log P(o \mid c)` for every context, shape ``(n_contexts,)``."""
        H = np.empty(self.n_contexts)
        for start in range(0, self.n_contexts, 4096):  # blocks of rows bound the temporary memory
            H[start : start + 4096] = special.entr(self.P[start : start + 4096]).sum(axis=1)
        return H

    def _propagate(self, n: np.ndarray) -> np.ndarray:
        r"""One step of the sentence chain: :math:`n'(c') = \sum_{c, w:\ \mathrm{shift}(c, w) = c'} n(c) P(w \mid c)`.

        ``</s>`` absorbs, so mass is lost at each step. Context axes are oldest first, so
        with ``M = (V+1)^(k-1)`` the new context of ``(a, m)`` after ``w`` is ``(m, w)``.
        """
        A, V = self.n_outcomes, self.vocab_size
        if self.order == 0:
            return n * self.P[:, :V].sum(axis=1)
        M = self.n_contexts // A
        out = np.einsum("am,amo->mo", n.reshape(A, M), self.P.reshape(A, M, A))  # (M, A)
        out[:, V] = 0.0  # outcome </s> ends the sentence
        return out.ravel()

    def _system_matrix(self) -> np.ndarray:
        r"""Dense :math:`I - Q^\top` with :math:`Q[c, \mathrm{shift}(c, w)] = P(w \mid c)`, shape ``(C, C)``."""
        V, C = self.vocab_size, self.n_contexts
        M_T = np.zeros((C, C))  # built as its transpose I - Q, in C order
        if self.order == 0:
            M_T[0, 0] = -self.P[0, :V].sum()
        elif self.order == 1:  # shift(c, w) = w
            M_T[:, :V] = -self.P[:, :V]
        else:
            c = np.repeat(np.arange(C), V)
            w = np.tile(np.arange(V), C)
            M_T[c, self._shift(c, w)] = -self.P[:, :V].ravel()  # each (c, shift(c, w)) occurs once
        M_T[np.diag_indices(C)] += 1.0
        return M_T.T  # Fortran-ordered view: LAPACK factorises it in place

    def expected_visits(self, method: str = "auto") -> np.ndarray:
        r"""Expected number of visits :math:`n(c)` to each context during one sentence.

        Solves the linear system :math:`n = e_{\mathrm{start}} + Q^\top n`, where
        :math:`Q` moves between contexts by a word (``</s>`` leaves the chain). Since every
        visit predicts one token, :math:`\sum_c n(c)` is the expected number of predicted
        tokens per sentence (words plus ``</s>``).

        Parameters
        ----------
        method : {"auto", "direct", "iterative"}
            ``"direct"``: dense LU solve of the ``n_contexts x n_contexts`` system, exact
            to rounding (at most 4096 contexts). ``"iterative"``: GMRES with ``Q^T``
            applied as the shift operator :meth:`_propagate`, to a relative residual of
            about ``1e-13``. ``"auto"`` picks ``"direct"`` up to 3200 contexts (every
            order-1 source), else ``"iterative"``.
        """
        if method not in ("auto", "direct", "iterative"):
            raise ValueError(f"method must be 'auto', 'direct' or 'iterative', got {method!r}")
        if method == "auto" and self._visits is not None:
            return self._visits.copy()
        C = self.n_contexts
        b = np.zeros(C)
        b[self.start_context] = 1.0
        if method == "direct" and C > 4096:
            raise ValueError(f"method='direct' needs at most 4096 contexts, this source has {C}")
        if method == "direct" or (method == "auto" and C <= 3200):
            n = linalg.solve(self._system_matrix(), b, overwrite_a=True, overwrite_b=True)
        else:
            operator = splinalg.LinearOperator((C, C), matvec=lambda x: x - self._propagate(x), dtype=float)
            n, info = splinalg.gmres(operator, b, rtol=1e-13, atol=0.0, restart=60, maxiter=200)
            residual = np.linalg.norm(n - self._propagate(n) - b)
            if info != 0 and residual > 1e-9:
                raise RuntimeError(f"GMRES did not converge (info={info}, residual={residual:.2e})")
        n = np.maximum(n, 0.0)
        if method == "auto":
            self._visits = n.copy()
        return n

    def stationary_distribution(self, method: str = "auto") -> np.ndarray:
        r"""Long-run fraction of predicted tokens made in each context, :math:`\pi(c) = n(c) / \sum_{c'} n(c')`.

        This is the stationary distribution of the chain in which ``</s>`` jumps back to
        the start context (a renewal process: one renewal per sentence).
        """
        n = self.expected_visits(method)
        return n / n.sum()

    def entropy_rate(self, method: str = "auto") -> float:
        r"""Exact entropy per predicted token (words and ``</s>``, not ``<s>``), in nats.

        By the renewal-reward theorem, with :math:`n(c)` the expected visits to context
        :math:`c` in one sentence (:meth:`expected_visits`),

        .. math::

            H = \frac{E[-\log P(\text{sentence})]}{E[|\text{sentence}| + 1]}
              = \frac{\sum_c n(c)\, H(P(\cdot \mid c))}{\sum_c n(c)}
              = \sum_c \pi(c)\, H(P(\cdot \mid c)).

        :math:`e^{H}` (:meth:`perplexity_floor`) is the lowest perplexity any model can
        reach on text from this source.
        """
        return float(self.stationary_distribution(method) @ self.context_entropies())

    def perplexity_floor(self, method: str = "auto") -> float:
        """``exp(entropy_rate())``: the perplexity of the true source on its own text."""
        return math.exp(self.entropy_rate(method))

    def mean_sentence_length(self, method: str = "auto") -> float:
        r"""Exact expected number of words per sentence, :math:`\sum_c n(c) - 1`."""
        return float(self.expected_visits(method).sum() - 1.0)


# ----------------------------------------------------------------- toy English grammar

SG, PL = "sg", "pl"

ANIMATE_NOUNS = (
    ("cat", "cats"),
    ("dog", "dogs"),
    ("bird", "birds"),
    ("boy", "boys"),
    ("girl", "girls"),
    ("teacher", "teachers"),
    ("farmer", "farmers"),
    ("doctor", "doctors"),
)
PLACE_NOUNS = (
    ("park", "parks"),
    ("house", "houses"),
    ("garden", "gardens"),
    ("river", "rivers"),
    ("table", "tables"),
    ("tree", "trees"),
)
NAMES = ("mary", "john", "anna", "peter", "susan", "tom")
DETERMINERS = {SG: ("the", "the", "a", "this"), PL: ("the", "the", "these", "some")}
ADJECTIVES = ("big", "small", "tall", "young", "black", "white")
PREDICATE_ADJECTIVES = ("hungry", "tired", "happy", "sad", "angry", "sleepy")
PREPOSITIONS = ("near", "behind", "beside", "with", "under")
RELATIVIZERS = ("which", "that", "who")
PAST_VERBS = ("saw", "liked", "chased", "followed", "helped", "met", "called")
TIME_ADVERBS = ("yesterday", "today", "again", "recently")
PREVERBAL_ADVERBS = ("often", "never", "always", "also", "still", "usually")
COPULAS = (("is", "are"), ("was", "were"))
INTRANSITIVE_VERBS = (
    ("sleeps", "sleep"),
    ("runs", "run"),
    ("eats", "eat"),
    ("waits", "wait"),
    ("sings", "sing"),
    ("smiles", "smile"),
    ("walks", "walk"),
)
TRANSITIVE_VERBS = (
    ("likes", "like"),
    ("sees", "see"),
    ("chases", "chase"),
    ("follows", "follow"),
    ("knows", "know"),
    ("helps", "help"),
)


def _pick(r: random.Random, options):
    return options[int(r.random() * len(options))]


@dataclass(frozen=True, slots=True)
class ToySentence:
    """A :class:`ToyEnglish` sentence with its agreement annotation.

    ``tokens[head]`` is the subject's head noun (or name), ``tokens[verb]`` the main verb,
    which agrees with it in ``number``; ``distance = verb - head - 1``; ``n_attractors``
    counts nouns and names between them whose number differs from the subject's.
    """

    tokens: tuple[str, ...]
    head: int
    verb: int
    number: str
    n_attractors: int

    @property
    def distance(self) -> int:
        return self.verb - self.head - 1


@dataclass(frozen=True, slots=True)
class AgreementExample:
    """One agreement test item: does the model prefer ``correct`` over ``wrong`` after ``prefix``?

    Attributes
    ----------
    prefix : tuple of str
        The sentence up to, not including, the main verb.
    correct, wrong : str
        The main verb in the subject's number, and the same verb in the other number.
    distance : int
        Tokens strictly between the subject's head noun and the verb.
    number : {"sg", "pl"}
        The subject's number.
    n_attractors : int
        Nouns and names in that span whose number differs from the subject's.
    suffix : tuple of str
        The rest of the sentence after the verb.
    """

    prefix: tuple[str, ...]
    correct: str
    wrong: str
    distance: int
    number: str
    n_attractors: int
    suffix: tuple[str, ...] = ()


class ToyEnglish:
    r"""A tiny English-like language with long-distance subject-verb agreement.

    A sentence is ``subject [modifiers] [adverb] verb rest``: the subject is a name or
    ``det [adj] noun``; the modifiers (prepositional phrases "near the dogs", relative
    clauses "which mary saw yesterday", "that chased the boys") separate its head noun from
    the main verb, which agrees with it in number (``is/are``, ``was/were``,
    ``sleeps/sleep``, ...). Verbs inside modifiers are in the past tense, which English
    does not mark for number, so the main verb is the first number-marked verb. Nouns in
    the modifiers take the other number with probability ``attractor_rate`` (attractors).

    The number of tokens between head and verb, the distance ``d``, is drawn for the
    training text from :math:`P(d) \propto e^{-d / \lambda}` on ``0..max_distance``
    (``lambda = distance_scale``): mostly short, some long.

    Parameters
    ----------
    attractor_rate : float
        Probability in ``[0, 1]`` that a noun in the modifiers has the subject's opposite number.
    distance_scale : float
        ``lambda > 0`` of the distance distribution.
    max_distance : int
        Default largest distance in :meth:`sample`.
    """

    def __init__(self, attractor_rate: float = 0.5, distance_scale: float = 3.0, max_distance: int = 12):
        self.attractor_rate = probability(attractor_rate, "attractor_rate")
        self.distance_scale = real(distance_scale, "distance_scale", low=0.0, low_open=True)
        self.max_distance = integer(max_distance, "max_distance", low=0)

    def __repr__(self) -> str:
        return (
            f"ToyEnglish(attractor_rate={self.attractor_rate}, distance_scale={self.distance_scale}, "
            f"max_distance={self.max_distance})"
        )

    # --- lexicon ---------------------------------------------------------------------

    @staticmethod
    def vocabulary() -> tuple[str, ...]:
        """Every token the grammar can produce, sorted."""
        pairs = ANIMATE_NOUNS + PLACE_NOUNS + COPULAS + INTRANSITIVE_VERBS + TRANSITIVE_VERBS
        words = {w for pair in pairs for w in pair}
        words |= set(NAMES) | {d for ds in DETERMINERS.values() for d in ds} | set(ADJECTIVES)
        words |= set(PREDICATE_ADJECTIVES + PREPOSITIONS + RELATIVIZERS + PAST_VERBS + TIME_ADVERBS + PREVERBAL_ADVERBS)
        return tuple(sorted(words))

    @staticmethod
    def verb_forms() -> dict[str, tuple[str, str]]:
        """Every number-marked verb form mapped to its ``(singular, plural)`` pair."""
        return {w: pair for pair in COPULAS + INTRANSITIVE_VERBS + TRANSITIVE_VERBS for w in pair}

    # --- building blocks (r is a random.Random; each returns tokens and attractors) -----

    def _noun_phrase(self, r: random.Random, n_tokens: int, subject_number: str, nouns=ANIMATE_NOUNS):
        """An NP of exactly ``n_tokens`` in {1, 2, 3}: name | det noun | det adj noun."""
        if n_tokens == 1:
            return [_pick(r, NAMES)], int(subject_number == PL)
        number = subject_number if r.random() >= self.attractor_rate else (PL if subject_number == SG else SG)
        noun = _pick(r, nouns)[number == PL]
        det = _pick(r, DETERMINERS[number])
        middle = [_pick(r, ADJECTIVES)] if n_tokens == 3 else []
        return [det, *middle, noun], int(number != subject_number)

    def _prepositional_phrase(self, r, n_tokens: int, number: str):
        nouns = ANIMATE_NOUNS + PLACE_NOUNS
        np_tokens, attractors = self._noun_phrase(r, n_tokens - 1, number, nouns)
        return [_pick(r, PREPOSITIONS), *np_tokens], attractors

    def _relative_clause(self, r, n_tokens: int, number: str):
        """``rel NP verb [time]`` (object relative) or ``rel verb NP [time]``, 3 to 6 tokens."""
        splits = [(m, t) for m in (1, 2, 3) for t in (0, 1) if 2 + m + t == n_tokens]
        m, t = _pick(r, splits)
        np_tokens, attractors = self._noun_phrase(r, m, number)
        verb = _pick(r, PAST_VERBS)
        body = [*np_tokens, verb] if r.random() < 0.5 else [verb, *np_tokens]
        return [_pick(r, RELATIVIZERS), *body, *([_pick(r, TIME_ADVERBS)] if t else [])], attractors

    def _modifiers(self, r, distance: int, number: str):
        """Exactly ``distance`` tokens between head noun and verb; says if the verb must be lexical."""
        adverb = distance == 1 or (distance >= 3 and r.random() < 0.2)
        budget = distance - adverb
        tokens, attractors = [], 0
        while budget > 0:
            lengths = [n for n in range(2, 7) if budget - n == 0 or budget - n >= 2]
            n = _pick(r, lengths)
            if n == 2 or (n <= 4 and r.random() < 0.5):
                part, a = self._prepositional_phrase(r, n, number)
            else:
                part, a = self._relative_clause(r, n, number)
            tokens += part
            attractors += a
            budget -= n
        if adverb:
            tokens.append(_pick(r, PREVERBAL_ADVERBS))
        return tokens, attractors, adverb

    def _predicate(self, r, number: str, lexical: bool):
        """Main verb (agreeing) and the rest of the sentence."""
        kind = r.random()
        if not lexical and kind < 0.35:
            pair = _pick(r, COPULAS)
            return pair[number == PL], [_pick(r, PREDICATE_ADJECTIVES)]
        if kind < 0.7:
            pair = _pick(r, INTRANSITIVE_VERBS)
            rest = self._prepositional_phrase(r, 3, number)[0] if r.random() < 0.3 else []
            return pair[number == PL], rest
        pair = _pick(r, TRANSITIVE_VERBS)
        return pair[number == PL], self._noun_phrase(r, 1 + int(r.random() * 3), number)[0]

    def _sentence(self, r: random.Random, distance: int, number: str) -> ToySentence:
        if number == SG and r.random() < 0.2:
            subject = [_pick(r, NAMES)]
        else:
            subject = [_pick(r, DETERMINERS[number])]
            if r.random() < 0.3:
                subject.append(_pick(r, ADJECTIVES))
            subject.append(_pick(r, ANIMATE_NOUNS)[number == PL])
        modifiers, attractors, lexical = self._modifiers(r, distance, number)
        verb, rest = self._predicate(r, number, lexical)
        head = len(subject) - 1
        tokens = (*subject, *modifiers, verb, *rest)
        return ToySentence(tokens, head, head + distance + 1, number, attractors)

    @staticmethod
    def _python_random(rng: np.random.Generator) -> random.Random:
        """A fast per-call ``random.Random`` seeded from the numpy generator."""
        return random.Random(int(rng.integers(0, 2**63)))

    # --- public ----------------------------------------------------------------------

    def distance_probs(self, max_distance: int | None = None) -> np.ndarray:
        r""":math:`P(d) \propto e^{-d/\lambda}` for ``d = 0..max_distance``, shape ``(max_distance + 1,)``."""
        d_max = self.max_distance if max_distance is None else integer(max_distance, "max_distance", low=0)
        p = np.exp(-np.arange(d_max + 1) / self.distance_scale)
        return p / p.sum()

    def sample_annotated(
        self, n_tokens: int | None = None, n_sentences: int | None = None, max_distance: int | None = None, rng=None
    ) -> list[ToySentence]:
        """Like :meth:`sample`, with each sentence's head, verb, number and attractors."""
        n_tokens, n_sentences = _check_amount(n_tokens, n_sentences)
        probs = self.distance_probs(max_distance)
        rng = generator(rng)
        out: list[ToySentence] = []
        total = 0
        while (n_sentences is not None and len(out) < n_sentences) or (n_tokens is not None and total < n_tokens):
            batch = n_sentences if n_sentences is not None else ((n_tokens or 0) - total) // 8 + 16
            distances = rng.choice(len(probs), size=batch, p=probs).tolist()
            plural = (rng.random(batch) < 0.5).tolist()
            r = self._python_random(rng)
            for d, pl in zip(distances, plural):
                s = self._sentence(r, d, PL if pl else SG)
                out.append(s)
                total += len(s.tokens)
                if n_tokens is not None and total >= n_tokens:
                    break
        return out

    def sample(
        self, n_tokens: int | None = None, n_sentences: int | None = None, max_distance: int | None = None, rng=None
    ) -> list[list[str]]:
        """Training text: sentences (lists of lowercase tokens) with mixed distances.

        Parameters
        ----------
        n_tokens : int, optional
            Draw sentences until they hold at least this many tokens.
        n_sentences : int, optional
            Draw exactly this many sentences. Give exactly one of the two.
        max_distance : int, optional
            Largest subject-verb distance (default ``self.max_distance``).
        rng : numpy.random.Generator, int or None
            Randomness (see :func:`seqlearn.validation.generator`).
        """
        return [list(s.tokens) for s in self.sample_annotated(n_tokens, n_sentences, max_distance, rng)]

    def agreement_examples(
        self, distances: Iterable[int] = range(13), n_per_distance: int = 100, seed=0
    ) -> list[AgreementExample]:
        """An evaluation set with exactly ``n_per_distance`` items at each distance.

        Half of the items at each distance have a singular subject, half a plural one
        (one more singular when ``n_per_distance`` is odd), in random order.

        Parameters
        ----------
        distances : iterable of int
            The distances (tokens strictly between head noun and verb), each ``>= 0``.
        n_per_distance : int
            Items per distance, ``>= 1``.
        seed : int or numpy.random.Generator
            Randomness; the default gives a fixed evaluation set.
        """
        if isinstance(distances, (int, np.integer)):
            raise TypeError("distances must be an iterable of ints, e.g. range(13)")
        distances = [integer(d, "each distance", low=0) for d in distances]
        if not distances:
            raise ValueError("distances is empty")
        n = integer(n_per_distance, "n_per_distance", low=1)
        rng = generator(seed, "seed")
        forms = self.verb_forms()
        examples = []
        for d in distances:
            numbers = np.where(rng.permutation(n) < (n + 1) // 2, 0, 1).tolist()
            r = self._python_random(rng)
            for pl in numbers:
                s = self._sentence(r, d, PL if pl else SG)
                correct = s.tokens[s.verb]
                wrong = forms[correct][0] if s.number == PL else forms[correct][1]
                examples.append(
                    AgreementExample(
                        s.tokens[: s.verb], correct, wrong, s.distance, s.number, s.n_attractors, s.tokens[s.verb + 1 :]
                    )
                )
        return examples


def agreement_examples(
    distances: Iterable[int] = range(13), n_per_distance: int = 100, seed=0, attractor_rate: float = 0.5
) -> list[AgreementExample]:
    """:meth:`ToyEnglish.agreement_examples` of ``ToyEnglish(attractor_rate=attractor_rate)``."""
    return ToyEnglish(attractor_rate=attractor_rate).agreement_examples(distances, n_per_distance, seed)


def agreement_accuracy(
    score_fn: Callable[[Sequence[str], Sequence[str]], Sequence[float]],
    examples: Sequence[AgreementExample],
    by: str = "distance",
) -> dict:
    r"""Accuracy of a language model on agreement examples, per distance.

    An example counts as right when :math:`\log p(\text{correct} \mid \text{prefix}) >
    \log p(\text{wrong} \mid \text{prefix})`, and as half right on a tie (a model that
    cannot tell scores the chance level 0.5).

    Parameters
    ----------
    score_fn : callable
        ``score_fn(prefix, candidates)`` with ``prefix`` a list of tokens and
        ``candidates = [correct, wrong]``; returns their two log-probabilities (any scores
        that order them the same way will do) as the model's next token after ``prefix``.
    examples : sequence of AgreementExample
    by : {"distance", "n_attractors", "number"}
        The field to group by.

    Returns
    -------
    dict
        ``{value: accuracy}`` in increasing order of the value.
    """
    if by not in ("distance", "n_attractors", "number"):
        raise ValueError(f"by must be 'distance', 'n_attractors' or 'number', got {by!r}")
    if not callable(score_fn):
        raise TypeError(f"score_fn must be callable, got {type(score_fn).__name__}")
    examples = list(examples)
    if not examples:
        raise ValueError("examples is empty")
    right: dict = {}
    for i, ex in enumerate(examples):
        if not isinstance(ex, AgreementExample):
            raise TypeError(f"examples[{i}] is a {type(ex).__name__}, not an AgreementExample")
        scores = np.asarray(score_fn(list(ex.prefix), [ex.correct, ex.wrong]), dtype=float).ravel()
        if scores.shape != (2,) or np.isnan(scores).any():
            raise ValueError(f"score_fn must return 2 log-probabilities (no NaN) for examples[{i}], got {scores!r}")
        hit = 1.0 if scores[0] > scores[1] else 0.5 if scores[0] == scores[1] else 0.0
        right.setdefault(getattr(ex, by), []).append(hit)
    return {key: float(np.mean(right[key])) for key in sorted(right)}
