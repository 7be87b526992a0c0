import subprocess
import sys

import pytest

import seqlearn.nlm as nlm


def test_every_public_name_resolves():
    for name in nlm.__all__:
        assert getattr(nlm, name) is not None, name
    assert set(nlm.__all__) <= set(dir(nlm))


@pytest.mark.integration
def test_the_numpy_references_do_not_import_torch():
    code = "import sys, seqlearn.nlm, seqlearn.nlm.basics; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute 'BengioLM'"):
        nlm.BengioLM  # noqa: B018
