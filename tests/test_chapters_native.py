"""Every chapter says what its output shows off the CPU kernel pins its quotes were computed with,
as on a JupyterHub image, an ARM laptop or a GPU: its trained numbers may move, but only within
the ranges and tolerances its quotes state (:class:`seqlearn.course.notebooks.Quote`). The stand-in for
"another machine" is ``SEQLEARN_PIN_KERNELS=baseline``, the oldest x86-64 code paths of MKL,
oneDNN, torch, OpenBLAS and NumPy: a floating-point path that differs from the pins' on every x86
CPU (the machine's own paths may happen to agree with the pins)."""

from pathlib import Path

import pytest

from seqlearn.course.notebooks import chapter_paths, course_root

CHAPTERS = chapter_paths(course_root(Path(__file__).parent))


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_quotes_hold_on_another_floating_point_path(path, baseline_chapter_runs):
    report = baseline_chapter_runs(path)
    print(report)
    assert report.misquoted == [], "off the pins the prose says what the chapter does not compute:\n" + "\n".join(
        report.misquoted
    )
