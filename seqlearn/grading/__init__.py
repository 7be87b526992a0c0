"""What autograder test cells call, and the guard that keeps graded references out of answers.

* :mod:`seqlearn.grading.checks`: the generic machinery. :class:`FunctionCheck` describes an
  exercise (reference, fixed cases, random-case generator, hints); ``check(fn)`` runs the
  visible cases and ``check(fn, hidden=True)`` a fresh draw of hidden ones.
* :mod:`seqlearn.grading.comparison`: :func:`compare` finds the first difference between two
  results (floats with tolerances, numpy arrays, torch tensors, mappings and Counters, lists and
  tuples); :func:`~seqlearn.grading.comparison.matching_advice` names a usual mistake. The checks
  re-export them (``from seqlearn.grading.checks import compare`` works).
* :func:`reference`, :func:`student_code` and the rest of the guard, re-exported from
  :mod:`seqlearn.guard` (which the model modules import without loading the grader).
* One module per chapter with its checks, e.g. :mod:`seqlearn.grading.ngram`, and
  :data:`ASSIGNMENTS`, which says which of them grades which assignment.
* :mod:`seqlearn.grading.worker`: the sealed grader's worker script, whose codec
  (:func:`~seqlearn.grading.worker.input_arrays`) the checks use to tell an answer's own arrays
  from its inputs.

The instructor's side (nbgrader's helpers, feedback pages, the sealed grader) is in
:mod:`seqlearn.course`, which imports this package; nothing here imports it.
"""

from types import MappingProxyType

from ..guard import REFUSAL, ReferenceCallError, is_grading, reference, student_code
from . import gated, learnability, lowrank, ngram, nlm, rnn
from .checks import Case, CheckFailure, FunctionCheck, Mismatch, compare, describe_type, hidden_rngs, visible_rngs

# What the chapters' check modules build their checks with, not what a test cell calls.
_WITHHELD = {"checks": ["define_checkers", "matching_advice", "same_values"]}

ASSIGNMENTS = MappingProxyType(
    {
        "01_ngram": ngram,
        "02_neural_lm": nlm,
        "03_rnn_bptt": rnn,
        "04_lstm_gru_esn": gated,
        "05_learnability": learnability,
        "06_lowrank": lowrank,
    }
)
"""Each assignment (its nbgrader id, the folder ``solutions/<id>``) -> the module of its checks.

The one table of which reference backs which exercise: the module's ``CHECKS`` maps each
graded function to its :class:`FunctionCheck` (whose ``reference`` it is graded against),
and the assignment's test cells import that module's ``check_<name>`` functions.
"""

__all__ = [
    "ASSIGNMENTS",
    "Case",
    "CheckFailure",
    "FunctionCheck",
    "Mismatch",
    "REFUSAL",
    "ReferenceCallError",
    "compare",
    "describe_type",
    "hidden_rngs",
    "is_grading",
    "reference",
    "student_code",
    "visible_rngs",
]
