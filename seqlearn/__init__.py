"""seqlearn: reference implementations for a course on how sequence models remember.

Subpackages follow the chapters: :mod:`seqlearn.ngram` (n-grams and Kneser-Ney), and
shared parts: :mod:`seqlearn.data`, :mod:`seqlearn.device`, :mod:`seqlearn.training`,
:mod:`seqlearn.grading`, :mod:`seqlearn.viz`. Importing :mod:`seqlearn` imports none of
them, so ``import seqlearn`` is cheap and has no side effects.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
