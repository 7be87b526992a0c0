"""A Markov source of sentences whose entropy rate is known exactly.

:class:`MarkovSource` draws sentences from an order-``k`` Markov chain: a random one over a Zipfian
vocabulary (the constructor), or a first-order chain with given tables (:meth:`MarkovSource.first_order`).
Either way its entropy rate is exact (:meth:`MarkovSource.entropy_rate`), so a language model's
perplexity can be compared with the best perplexity any model can reach
(:meth:`MarkovSource.perplexity_floor`). Randomness comes from an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from scipy import linalg, special
from scipy.sparse import linalg as splinalg

from ..validation import generator, integer, probability_vector, real, real_array
from .vocab import BOS, EOS, UNK, Vocab

__all__ = ["MarkovSource"]


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
    r"""Sentences from a random order-``k`` Markov chain with Zipfian marginals (or a given first-order one).

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
        self.zipf_exponent: float | None = real(zipf_exponent, "zipf_exponent", low=0.0)
        self.context_strength: float | None = real(context_strength, "context_strength", low=0.0)
        self.mean_length = real(mean_length, "mean_length", low=0.0, low_open=True)
        self.seed: int | None = integer(seed, "seed", low=0)
        entries = (V + 1) ** (k + 1)
        if entries > MAX_TABLE_ENTRIES:
            raise ValueError(
                f"vocab_size={V} with order={k} needs (V+1)^(order+1) = {entries:.3g} table entries; "
                f"the limit is {MAX_TABLE_ENTRIES:.0e} (80 MB): lower vocab_size or order"
            )
        table = self._transition_table(np.random.default_rng(self.seed), self.zipf_exponent, self.context_strength)
        self._set_table([f"w{r}" for r in range(V)], table)

    @classmethod
    def first_order(cls, words: Sequence[str], start, transition) -> MarkovSource:
        r"""A first-order source with given tables instead of drawn ones.

        :math:`w_1 \sim` ``start``, then each word :math:`w_t` draws the next token (a word or ``</s>``)
        from its row of ``transition``. The Zipf parameters describe no such source: ``zipf_exponent``,
        ``context_strength`` and ``seed`` are ``None``, and ``mean_length`` is the exact mean number of
        words per sentence (:meth:`mean_sentence_length`).

        Parameters
        ----------
        words : sequence of str
            The :math:`W` distinct words, none of them ``<s>``, ``</s>`` or ``<unk>``.
        start : array_like, shape ``(W,)``
            :math:`P(w_1 = w \mid \texttt{<s>})`, a probability vector (no sentence is empty).
        transition : array_like, shape ``(W, W + 1)``
            :math:`P(w_{t+1} \mid w_t)`, each row a probability vector, the last column ``</s>``.

        Raises
        ------
        ValueError
            If a table is not a distribution of the right shape, the words are not distinct, or some
            sentence would never end (a set of words that ``</s>`` cannot be reached from).
        """
        if isinstance(words, str):
            raise TypeError("words must be a sequence of str, not a str")
        words = list(words)
        if not all(isinstance(w, str) for w in words) or len(set(words)) != len(words) or not words:
            raise ValueError(f"words must be distinct strings, at least one, got {words}")
        reserved = sorted(set(words) & {BOS, EOS, UNK})
        if reserved:
            raise ValueError(f"words must not hold the reserved tokens {reserved}")
        W = len(words)
        start = probability_vector(start, "start")
        if start.shape != (W,):
            raise ValueError(f"start must have shape ({W},), one entry per word, got {start.shape}")
        transition = real_array(transition, "transition", ndim=2, shape=(W, W + 1))
        for i, row in enumerate(transition):
            probability_vector(row, f"transition[{i}]")
        source = cls.__new__(cls)
        source.vocab_size, source.order = W, 1
        source.zipf_exponent = source.context_strength = source.seed = None
        source._set_table(words, np.vstack([transition, np.r_[start, 0.0]]))  # the context <s> is row W
        try:
            visits = source.expected_visits("direct")
        except linalg.LinAlgError:
            visits = np.array([np.inf])
        if not (np.isfinite(visits).all() and visits.sum() < 1e12):
            raise ValueError("transition has words from which </s> is never reached: some sentences never end")
        source.mean_length = float(visits.sum() - 1.0)
        return source

    def _set_table(self, words: list[str], P: np.ndarray) -> None:
        """Take ``P`` (``(n_contexts, V + 1)``) as the outcome table over ``words``."""
        self.words = words
        self.outcomes = self.words + [EOS]
        self._rank = {w: r for r, w in enumerate(self.words)}
        self.P = P
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
        if self.seed is None:
            return f"MarkovSource.first_order(<{self.vocab_size} words: {' '.join(self.words[:6])}...>)"
        return (
            f"MarkovSource(vocab_size={self.vocab_size}, order={self.order}, "
            f"zipf_exponent={self.zipf_exponent}, context_strength={self.context_strength}, "
            f"mean_length={self.mean_length}, seed={self.seed})"
        )

    def _transition_table(self, rng: np.random.Generator, zipf_exponent: float, context_strength: float) -> np.ndarray:
        """``P[c, o]`` of shape ``(n_contexts, V+1)``; row ``c`` is the context's index."""
        V, k, A = self.vocab_size, self.order, self.n_outcomes
        P = np.zeros((A**k, A))
        logits = P[:, :V]  # (n_contexts, V), a view: P is filled in place
        x = logits.reshape((A,) * k + (V,), copy=False)  # x(c, w); axes: oldest .. newest symbol, word
        scale = context_strength / math.sqrt(k) if k else 0.0
        for j in range(1, k):  # g_j depends on the last j context symbols: the trailing axes
            x += scale * rng.standard_normal((A,) * j + (V,))
        for a in range(A if k else 0):  # g_k, drawn one oldest symbol at a time to save memory
            x[a] += scale * rng.standard_normal((A,) * (k - 1) + (V,))
        logits -= zipf_exponent * np.log(np.arange(1, V + 1))  # log z(w_r) = -a log(r + 1)
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
            raise ValueError(
                f"{token!r} is not a word of this source (its words: {' '.join(self.words[:6])} ...)"
            ) from None

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
