"""nbgrader configuration of the seqlearn course. The course root is the directory of this file.

* ``solutions/NN_slug/`` holds the source notebooks (solutions and hidden tests) and
  ``exercises/NN_slug/`` the released ones, generated from them: run ``seqlearn exercises``
  (or ``make exercises``), which calls ``nbgrader generate_assignment`` in a temporary course.
* Collected work goes to ``submitted/<student>/NN_slug/``; ``nbgrader autograde NN_slug`` and
  ``nbgrader generate_feedback NN_slug`` write ``autograded/`` and ``feedback/`` (none of them,
  nor ``gradebook.db``, is committed).
* ``seqlearn check-grading`` runs the whole round trip on the solution, the blank release and
  an answer that calls the references, and checks that feedback hides the hidden tests.
"""

import os

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteKernelspec

from seqlearn.course.feedback import FeedbackExporter
from seqlearn.course.nbgrader_tools import HideHiddenTests, MarkPendingGrades, RestoreHiddenTests, WrapLongLines

c = get_config()  # noqa: F821 (provided by the config loader)
course_root = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = course_root
c.CourseDirectory.course_id = "seqlearn"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(course_root, "gradebook.db")

# Seconds per cell when autograding (a submission that loops forever is interrupted there).
# nbgrader's Execute preprocessor reads the first; ExecutePreprocessor is its nbconvert base.
c.Execute.timeout = 60
c.ExecutePreprocessor.timeout = 60

# Feedback must not show the hidden tests (stock nbgrader puts them back into the
# autograded notebook and shows their code and tracebacks), wraps long lines, and says
# which written answers are not graded yet (their score reads 0 until they are).
c.GenerateFeedback.preprocessors = [MarkPendingGrades, HideHiddenTests, CSSHTMLHeaderPreprocessor, WrapLongLines]

# Each feedback page carries MathJax inside itself (its maths render offline, wherever the page is
# opened): only the page travels through the exchange, so nothing beside it could be referenced,
# and stock nbgrader loads MathJax from a CDN. See seqlearn/course/feedback.py.
c.GenerateFeedback.exporter_class = FeedbackExporter

# Autograde restores the hidden tests of unchanged test cells without reporting each of them as
# "checksum changed" (stock OverwriteCells does, for every honest submission): a warning now means
# that a student changed a locked cell.
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    RestoreHiddenTests,
    CheckCellMetadata,
]
