import base64

import matplotlib
import matplotlib.pyplot as plt
import pytest

from seqlearn.viz import PALETTE, apply_style, explorer, style


def test_style_is_scoped_and_not_applied_on_import():
    before = matplotlib.rcParams["axes.spines.top"]
    with style():
        assert matplotlib.rcParams["axes.spines.top"] is False
        assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][0] == PALETTE[0]
    assert matplotlib.rcParams["axes.spines.top"] == before


def test_apply_style_sets_the_palette():
    with matplotlib.rc_context():
        apply_style()
        assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"] == list(PALETTE)


def test_explorer_reruns_draw_with_control_values():
    seen = []

    def draw(order, method):
        seen.append((order, method))
        plt.close(plt.figure())

    widget = explorer(draw, order=(1, 5, 1), method=["mkn", "kn"])
    slider, dropdown = widget.children[:2]
    assert slider.continuous_update is False
    slider.value, dropdown.value = 4, "kn"
    widget.update()
    assert seen[-1] == (4, "kn")


def test_explorer_rejects_bad_input():
    with pytest.raises(TypeError):
        explorer(42, a=(0, 1))
    with pytest.raises(ValueError, match="at least one control"):
        explorer(lambda: None)


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_explorer_bundle_has_a_png_of_the_default_state_and_the_widget_view():
    seen = []

    def draw(order, method):
        seen.append((order, method))
        plt.subplots()
        plt.show()

    widget = explorer(draw, order=(1, 5, 1), method=["mkn", "kn"])
    widget.children[0].value = 5
    open_before = plt.get_fignums()
    bundle = widget._repr_mimebundle_()
    assert seen[-1] == (3, "mkn")  # the defaults: the middle of the slider, the first option
    assert base64.b64decode(bundle["image/png"]).startswith(PNG_MAGIC)
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.model_id
    assert plt.get_fignums() == open_before
    plt.close("all")


def test_explorer_bundle_has_no_png_when_draw_makes_no_figure():
    widget = explorer(lambda a: None, a=(0, 1))
    assert "image/png" not in widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in widget._repr_mimebundle_()
