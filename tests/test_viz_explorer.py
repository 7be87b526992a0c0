"""An explorer run before the cells it draws with says to run them first."""

import matplotlib.pyplot as plt
import pytest

from seqlearn.viz import explorer


def _draw_using(name: str):
    """A draw function of a notebook whose cell defining ``name`` has not run (its globals lack it)."""
    namespace: dict = {}
    exec(f"def draw(a):\n    return {name} + a\n", namespace)
    return namespace["draw"], namespace


def test_a_name_not_defined_yet_raises_at_once_saying_run_the_cells_above():
    draw, _ = _draw_using("H_BIG")
    with pytest.raises(NameError, match=r"name 'H_BIG' is not defined: run the cells above first"):
        explorer(draw, a=(0, 4, 1))


def test_once_the_cells_have_run_the_same_function_draws():
    draw, namespace = _draw_using("H_BIG")
    namespace["H_BIG"] = 10
    widget = explorer(draw, a=(0, 4, 1))
    assert widget.result == 12  # the middle of the slider, plus H_BIG


def test_a_name_deleted_later_says_the_same_when_the_explorer_redraws():
    draw, namespace = _draw_using("H_BIG")
    namespace["H_BIG"] = 10
    widget = explorer(draw, a=(0, 4, 1))
    del namespace["H_BIG"]
    with pytest.raises(NameError, match="run the cells above first"):
        widget._repr_mimebundle_()  # the static image of the default state
    plt.close("all")


def test_other_errors_of_draw_are_left_alone():
    def draw(a):
        raise ZeroDivisionError("not a missing cell")

    widget = explorer(draw, a=(0, 4, 1))  # interactive shows it beside the sliders, as before
    with pytest.raises(ZeroDivisionError, match="not a missing cell"):
        widget._repr_mimebundle_()
