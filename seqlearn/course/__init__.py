"""The instructor's tools: the ``seqlearn`` command and what runs the course around the package.

Nothing a notebook imports lives here, and nothing outside this package imports it
(``tests/test_layering.py``): a chapter, a test cell or a model module never loads it.

* :mod:`seqlearn.course.cli`: the ``seqlearn`` command.
* :mod:`seqlearn.course.notebooks`: chapters executed headless, their quoted numbers checked
  (:class:`~seqlearn.course.notebooks.Quote`), notebooks exported to HTML.
* :mod:`seqlearn.course.book`: the website (``seqlearn book``).
* :mod:`seqlearn.course.release`: a student repository without the solutions (``seqlearn release``).
* :mod:`seqlearn.course.nbgrader_tools`: ``exercises/`` regenerated from ``solutions/``, the grading
  round trip, the preprocessors ``nbgrader_config.py`` names (hidden tests kept out of feedback).
* :mod:`seqlearn.course.feedback`: nbgrader's feedback pages with MathJax inside them.
* :mod:`seqlearn.course.sealed`: the sealed grader (``seqlearn grade``), each submission's code
  run in an isolated worker (:mod:`seqlearn.grading.worker`) and checked by the checks of
  :mod:`seqlearn.grading` in a process the student's code never touches.

Each module imports nbgrader, nbconvert or Sphinx only where it needs them; importing this
package imports none of its modules.
"""
