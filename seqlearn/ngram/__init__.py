"""Chapter 1: n-gram language models, from counting to modified Kneser-Ney.

:mod:`~seqlearn.ngram.basics` has the textbook formulas in plain Python (the references the
exercises are graded against); :mod:`~seqlearn.ngram.counts` counts n-grams of whole
corpora with numpy; :mod:`~seqlearn.ngram.models` holds the models (MLE, add-k, absolute
discounting, interpolated and modified Kneser-Ney, and the backoff model of an ARPA file),
:mod:`~seqlearn.ngram.jelinek_mercer` linear interpolation tuned by EM,
:mod:`~seqlearn.ngram.katz` Katz backoff with Good-Turing discounts,
:mod:`~seqlearn.ngram.stupid_backoff` Brants et al.'s unnormalised scores,
which share the API of :class:`~seqlearn.ngram.base.LanguageModel`;
:mod:`~seqlearn.ngram.analysis` has the measurements the chapter makes (sparsity,
held-out counts, learning curves, agreement);
:mod:`~seqlearn.ngram.backoff` is the compact backoff model (sorted n-gram keys, log10
probabilities and backoffs) that fitted and loaded models are scored with;
:mod:`~seqlearn.ngram.arpa` writes and parses ARPA files, :mod:`~seqlearn.ngram.npz` the
package's own binary format; :mod:`~seqlearn.ngram.cli` is the
``seqlearn ngram`` command.
"""

from .analysis import (
    SourceCrossEntropy,
    SparsityRow,
    agreement_scorer,
    held_out_counts,
    learning_curve,
    source_cross_entropy,
    sparsity,
    split_stream,
    truncate_stream,
    unseen_mask,
    word_count,
)
from .arpa import format_log10, parse_arpa, write_arpa
from .backoff import BackoffTables
from .base import Estimator, LanguageModel, PerplexityReport, as_stream, check_order
from .basics import add_k_prob, continuation_counts, count_ngrams, kn_bigram_prob, mkn_discounts, perplexity
from .counts import NGramCounts, NGramIndex, adjusted_counts, count_of_counts
from .jelinek_mercer import JelinekMercer
from .katz import KatzBackoff, good_turing_counts, katz_discounts
from .models import (
    METHODS,
    MLE,
    AbsoluteDiscounting,
    AddK,
    BackoffModel,
    DiscountEstimationError,
    InterpolatedModel,
    KneserNey,
    ModifiedKneserNey,
    kn_discount,
    make_model,
    mkn_discounts_from_counts,
    read_arpa,
    read_npz,
)
from .stupid_backoff import StupidBackoff

# The tables' internals (sentinels, key packing) and the ARPA files' log10(0) stay in their modules.
_WITHHELD = {"arpa": ["LOG10_ZERO"], "counts": ["KeyTable", "NO_CONTEXT", "UNSEEN", "context_totals", "take"]}

__all__ = [
    # textbook formulas (graded references)
    "count_ngrams",
    "add_k_prob",
    "perplexity",
    "continuation_counts",
    "kn_bigram_prob",
    "mkn_discounts",
    # vectorised counting
    "NGramIndex",
    "NGramCounts",
    "adjusted_counts",
    "count_of_counts",
    # models
    "LanguageModel",
    "Estimator",
    "PerplexityReport",
    "InterpolatedModel",
    "DiscountEstimationError",
    "MLE",
    "AddK",
    "AbsoluteDiscounting",
    "KneserNey",
    "ModifiedKneserNey",
    "JelinekMercer",
    "KatzBackoff",
    "good_turing_counts",
    "katz_discounts",
    "StupidBackoff",
    "BackoffModel",
    "BackoffTables",
    "METHODS",
    "make_model",
    "kn_discount",
    "mkn_discounts_from_counts",
    "as_stream",
    "check_order",
    # measurements of Chapter 1
    "SparsityRow",
    "sparsity",
    "unseen_mask",
    "held_out_counts",
    "learning_curve",
    "truncate_stream",
    "split_stream",
    "word_count",
    "agreement_scorer",
    "SourceCrossEntropy",
    "source_cross_entropy",
    # ARPA files
    "read_arpa",
    "write_arpa",
    "parse_arpa",
    "format_log10",
    # seqlearn's binary format
    "read_npz",
]
