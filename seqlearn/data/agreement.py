r"""Long-distance agreement: :class:`~seqlearn.data.synthetic.ToyEnglish` with subjects far from their verbs.

:class:`~seqlearn.data.synthetic.ToyEnglish` draws its training distances (tokens between the
subject's head noun and the main verb) from :math:`P(d) \propto e^{-d/\lambda}` on ``0..12``: a
network can learn agreement where subject and verb are close, and an Elman network then carries
the number to 24 and beyond. :class:`LongAgreement` stretches the distances: a fraction
``short_fraction`` of the sentences keeps ToyEnglish's short distances (where agreement is cheap to
learn), the rest have a distance drawn uniformly from ``0..max_distance``, so that a sentence's
verb may sit 80 tokens and a dozen attractor nouns after its subject,

.. math::
    P(d) = s\, \frac{e^{-d/\lambda}\, [d \le d_s]}{\sum_{d' \le d_s} e^{-d'/\lambda}}
         + (1 - s)\, \frac{1}{d_{\max} + 1}, \qquad d = 0, \dots, d_{\max},

with :math:`s` ``short_fraction``, :math:`\lambda` ``distance_scale`` and :math:`d_s` ``short_max``.
Every sentence is built by :meth:`ToyEnglish.agreement_examples
<seqlearn.data.synthetic.ToyEnglish.agreement_examples>`, so its main verb agrees with its
subject by construction, half the subjects at each distance are singular and half plural, and
:func:`binned_accuracy` groups the accuracies of :func:`~seqlearn.data.synthetic.agreement_accuracy`
into bins of distance.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..validation import generator, integer, probability, real
from .synthetic import AgreementExample, ToyEnglish

__all__ = ["LongAgreement", "binned_accuracy"]


class LongAgreement:
    r"""Sentences of :class:`~seqlearn.data.synthetic.ToyEnglish` at long subject-verb distances.

    Parameters
    ----------
    max_distance : int
        :math:`d_{\max} \ge 0`, the longest distance of the training text.
    short_fraction : float
        :math:`s \in [0, 1]`, the share of sentences at ToyEnglish's short distances.
    distance_scale : float
        :math:`\lambda > 0` of the short distances.
    short_max : int, optional
        :math:`d_s`, the longest short distance, at most ``max_distance`` (default: 12, ToyEnglish's,
        or ``max_distance`` if that is shorter).
    attractor_rate : float
        Probability that a noun between subject and verb has the other number.
    """

    def __init__(
        self,
        max_distance: int = 80,
        short_fraction: float = 0.5,
        distance_scale: float = 3.0,
        short_max: int | None = None,
        attractor_rate: float = 0.5,
    ):
        self.max_distance = integer(max_distance, "max_distance", low=0)
        self.short_fraction = probability(short_fraction, "short_fraction")
        self.distance_scale = real(distance_scale, "distance_scale", low=0.0, low_open=True)
        d_s = min(12, self.max_distance) if short_max is None else short_max
        self.short_max = integer(d_s, "short_max", low=0, high=self.max_distance)
        self.toy = ToyEnglish(attractor_rate, self.distance_scale, self.short_max)

    def __repr__(self) -> str:
        return (
            f"LongAgreement(max_distance={self.max_distance}, short_fraction={self.short_fraction}, "
            f"distance_scale={self.distance_scale}, short_max={self.short_max}, "
            f"attractor_rate={self.toy.attractor_rate})"
        )

    def distance_probs(self) -> np.ndarray:
        r""":math:`P(d)` for :math:`d = 0, \dots, d_{\max}`, shape ``(max_distance + 1,)``."""
        p = np.full(self.max_distance + 1, (1.0 - self.short_fraction) / (self.max_distance + 1))
        p[: self.short_max + 1] += self.short_fraction * self.toy.distance_probs()
        return p

    def sample_examples(self, n_sentences: int, rng=None) -> list[AgreementExample]:
        """``n_sentences`` annotated sentences with distances drawn from :meth:`distance_probs`, shuffled.

        The number of sentences at each distance is multinomial; at each distance half the
        subjects are singular and half plural (one more singular for an odd count).
        """
        n = integer(n_sentences, "n_sentences", low=1)
        rng = generator(rng)
        counts = rng.multinomial(n, self.distance_probs())  # (max_distance + 1,)
        examples = [
            example
            for d in np.flatnonzero(counts)
            for example in self.toy.agreement_examples([int(d)], int(counts[d]), seed=rng)
        ]
        return [examples[i] for i in rng.permutation(len(examples))]

    def sample(self, n_sentences: int, rng=None) -> list[list[str]]:
        """Training text: :meth:`sample_examples` as sentences (lists of tokens), the verb in place."""
        return [[*ex.prefix, ex.correct, *ex.suffix] for ex in self.sample_examples(n_sentences, rng)]

    def agreement_examples(self, distances: Iterable[int], n_per_distance: int = 50, seed=0) -> list[AgreementExample]:
        """An evaluation set of ``n_per_distance`` items at each of ``distances`` (any distances ``>= 0``).

        :meth:`ToyEnglish.agreement_examples <seqlearn.data.synthetic.ToyEnglish.agreement_examples>`
        with this language's attractor rate; use a ``seed`` other than the training text's.
        """
        return self.toy.agreement_examples(distances, n_per_distance, seed)


def binned_accuracy(
    accuracy: Mapping[int, float], examples: Sequence[AgreementExample], width: int = 10
) -> dict[int, float]:
    r"""Accuracy per bin of distances :math:`[b, b + w)`, weighting each distance by its number of examples.

    Parameters
    ----------
    accuracy : mapping int -> float
        Accuracy per distance, as :func:`~seqlearn.data.synthetic.agreement_accuracy` returns it.
    examples : sequence of AgreementExample
        The examples it was computed on (their distances give the weights).
    width : int
        :math:`w \ge 1`, the width of a bin.

    Returns
    -------
    dict
        ``{b: accuracy}`` for each bin start :math:`b` (a multiple of :math:`w`) that holds examples, increasing.
    """
    width = integer(width, "width", low=1)
    counts = Counter(ex.distance for ex in examples)
    if not counts:
        raise ValueError("examples is empty")
    if set(accuracy) != set(counts):
        raise ValueError(
            f"accuracy has distances {sorted(accuracy)} but the examples {sorted(counts)}: "
            "pass the examples the accuracy was computed on"
        )
    right: dict[int, float] = defaultdict(float)
    total: dict[int, int] = defaultdict(int)
    for d, n in counts.items():
        right[d // width * width] += accuracy[d] * n
        total[d // width * width] += n
    return {b: right[b] / total[b] for b in sorted(total)}
