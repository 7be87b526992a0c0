"""A toy English with subject-verb agreement: synthetic text on which memory can be measured.

:class:`ToyEnglish` is a small English-like grammar with subject-verb number agreement across
relative clauses and prepositional phrases ("the cat which mary saw yesterday at the park was
hungry"), with an evaluation set at controlled subject-verb distance (:func:`agreement_examples`)
and a scorer (:func:`agreement_accuracy`). The Markov source with a known entropy rate is
:class:`seqlearn.data.markov.MarkovSource`.

Randomness always comes from an explicit ``numpy.random.Generator`` (or an int seed for
one); nothing here keeps global state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..validation import generator, integer, probability, real
from .markov import _check_amount

__all__ = [
    "ToyEnglish",
    "ToySentence",
    "AgreementExample",
    "agreement_examples",
    "agreement_accuracy",
]

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
