"""Sealed grading: a class graded in parallel, where student code cannot reach the grader.

``seqlearn grade NN_slug`` (after ``nbgrader collect``, instead of ``nbgrader autograde``)
grades every ``submitted/<student>/NN_slug/<notebook>.ipynb`` of an nbgrader course:

1. **The program.** From each submission it builds the student's program: the release
   notebook's code cells that are neither answers nor tests (taken from the release, so a
   student cannot change them), the student's answer cells (nbgrader ``solution`` cells,
   matched by ``grade_id``) and any code cells the student added, in notebook order. Test
   cells are never part of it: each one becomes a *capture* of the functions it tests at its
   place in the notebook, and is graded there, before the cells below it run (as in
   nbgrader's kernel). Invalid JSON or a notebook that cannot be read scores 0, with the
   reason recorded; nothing else is affected.
2. **The worker.** The program runs in a separate process (:mod:`seqlearn.grading.worker`,
   run as a script) in a fresh scratch directory, with a clean environment, its own session
   and process group, resource limits, a wall-clock timeout per cell and per test, its output
   sent to ``/dev/null``, and a ``sys.path`` holding only the standard library, the installed
   libraries and :data:`WORKER_MODULES` of seqlearn. How much more it is shut off from depends
   on the isolation level, detected by :func:`detect_level` (see :data:`LEVELS`).
3. **The checks.** The grading process never runs student code. For each test cell it runs the
   same :class:`~seqlearn.grading.checks.FunctionCheck` as the notebook's test cell, visible and
   hidden, on a proxy function that sends each case's arguments to the worker and decodes
   the answer (a tagged JSON codec, :func:`seqlearn.grading.worker.decode`: no pickle). The
   references run here, in the grader, and the comparison and hints are the checks' own. An
   exception raised by student code comes back as its type (builtin types only; others are
   ``Exception``); its message is never shown.
4. **The gradebook.** Scores go into nbgrader's gradebook through :class:`nbgrader.api.Gradebook`:
   autograded test cells get their ``auto_score`` (full points if every check of the cell
   passed, else 0, as nbgrader scores a test cell); written answers get nbgrader's "no
   response" zero when unchanged, and manual scores are never touched. An autograded notebook
   is written to ``autograded/<student>/NN_slug/``: the submission with the source notebook's
   test cells, whose outputs are the grader's messages (what failed and the hint, or why the
   cell could not be graded). ``nbgrader generate_feedback`` then works as after autograde,
   and its ``HideHiddenTests`` keeps the hidden tests out of the feedback.

Submissions are graded in parallel (``jobs`` grading processes, one worker per submission,
restarted after a crash or timeout with the offending cell skipped, so a crash costs only the
part it happened in).

The parts, each importing only those above it:

* :mod:`~seqlearn.course.sealed.plan`: the assignment's notebooks and test cells, and the
  student's program built from a submission (no code runs there);
* :mod:`~seqlearn.course.sealed.sandbox`: the worker process, its resource limits and the
  isolation levels;
* :mod:`~seqlearn.course.sealed.session`: one submission graded through its worker, the
  checks run in the grader;
* :mod:`~seqlearn.course.sealed.gradebook`: the results written to nbgrader's gradebook and
  the autograded notebooks;
* :mod:`~seqlearn.course.sealed.pool`: a class graded in parallel (:func:`grade_assignment`);
* :mod:`~seqlearn.course.sealed.replay`: one student's graded cell run again from its recorded
  draws, failures revealed, for the instructor (:func:`replay_submission`, ``seqlearn replay``).

The hidden cases of a submission are drawn from an entropy derived from the submission and a
course secret (:mod:`~seqlearn.course.sealed.draws`, imported by the session): a regrade of the
same submission gets the same marks.
"""

from .plan import holds_source_code, load_assignment
from .pool import grade_assignment
from .replay import replay_submission
from .sandbox import LEVELS, WORKER_MODULES, Limits, detect_level, free_uid_block, strongest_level
from .session import PartResult, SealedResult, grade_submission, read_submitted

__all__ = [
    "LEVELS",
    "WORKER_MODULES",
    "Limits",
    "PartResult",
    "SealedResult",
    "detect_level",
    "free_uid_block",
    "strongest_level",
    "grade_assignment",
    "grade_submission",
    "holds_source_code",
    "load_assignment",
    "read_submitted",
    "replay_submission",
]
