"""seqlearn.validation: the kind of an argument is a TypeError, its value a ValueError, and the
message names the argument, what is expected and what came."""

import math
import re

import numpy as np
import pytest

from seqlearn import validation as v


@pytest.mark.parametrize(
    ("value", "low", "high", "expected"),
    [(3, 1, None, 3), (np.int64(0), 0, 5, 0), (5, None, 5, 5), (-7, None, None, -7)],
)
def test_integer_accepts_ints_in_range(value, low, high, expected):
    out = v.integer(value, "n", low=low, high=high)
    assert out == expected and type(out) is int


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (2.0, TypeError, "n must be an int >= 1, got float (2.0)"),
        (True, TypeError, "n must be an int >= 1, got bool (True)"),
        ("3", TypeError, "n must be an int >= 1, got str ('3')"),
        (0, ValueError, "n must be an int >= 1, got 0"),
    ],
)
def test_integer_refuses(value, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        v.integer(value, "n", low=1)


def test_integer_names_both_bounds():
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 3\], got 4"):
        v.integer(4, "k", low=1, high=3)


@pytest.mark.parametrize(
    ("kwargs", "good", "bad"),
    [
        ({"low": 0, "low_open": True}, [1e-300, 5], [0, -1]),
        ({"low": 0, "high": 1}, [0, 1, 0.5], [-1e-12, 1.0000001]),
        ({"low": 0, "high": 1, "high_open": True}, [0, 0.999], [1]),
        ({}, [-1e300, 0, np.float32(2.5)], [math.nan, math.inf, -math.inf]),
    ],
)
def test_real_intervals(kwargs, good, bad):
    for x in good:
        assert v.real(x, "x", **kwargs) == float(x)
    for x in bad:
        with pytest.raises(ValueError, match="x must be a finite real number"):
            v.real(x, "x", **kwargs)


def test_real_messages():
    with pytest.raises(ValueError, match=r"^lr must be a finite real number > 0, got 0$"):
        v.real(0, "lr", low=0, low_open=True)
    with pytest.raises(TypeError, match=r"^lr must be a finite real number > 0, got str \('fast'\)$"):
        v.real("fast", "lr", low=0, low_open=True)
    with pytest.raises(TypeError, match="got bool"):
        v.real(False, "lr")
    with pytest.raises(ValueError, match=r"in \(0, 1\]"):
        v.real(0, "lam", low=0, high=1, low_open=True)


def test_probability_flag_choice():
    assert v.probability(0.25, "p") == 0.25
    with pytest.raises(ValueError, match=r"p must be a finite real number in \[0, 1\], got 1.5"):
        v.probability(1.5, "p")
    assert v.flag(np.bool_(True), "direct") is True
    with pytest.raises(TypeError, match=r"direct must be True or False, got int \(1\)"):
        v.flag(1, "direct")
    assert v.choice("tanh", "phi", ["tanh", "relu"]) == "tanh"
    with pytest.raises(ValueError, match=r"phi must be one of \['tanh', 'relu'\], got 'TANH'"):
        v.choice("TANH", "phi", ["tanh", "relu"])
    with pytest.raises(TypeError, match="phi must be one of"):
        v.choice(None, "phi", ["tanh"])


def test_real_array():
    out = v.real_array([[1, 2], [3, 4]], "W", ndim=2, shape=(2, None))
    assert out.dtype == np.float64 and out.shape == (2, 2)
    with pytest.raises(ValueError, match=r"W must be finite, got nan at index \(1, 0\)"):
        v.real_array([[1, 2], [np.nan, 4]], "W")
    with pytest.raises(ValueError, match=r"W must be 1-D or 2-D, got an array of shape \(2, 2, 1\)"):
        v.real_array(np.zeros((2, 2, 1)), "W", ndim=(1, 2))
    with pytest.raises(ValueError, match=r"W must have shape \(3, any\), got \(2, 2\)"):
        v.real_array(np.zeros((2, 2)), "W", shape=(3, None))
    with pytest.raises(TypeError, match="W must be an array of real numbers, got an array of dtype bool"):
        v.real_array([True, False], "W")
    with pytest.raises(TypeError, match="W must be an array of real numbers, got str"):
        v.real_array("1 2 3", "W")
    with pytest.raises(TypeError, match="not a rectangular array"):
        v.real_array([[1, 2], [3]], "W")
    with pytest.raises(TypeError, match="dtype complex128"):
        v.real_array([1j], "W")


def test_int_array_and_token_ids():
    assert v.int_array([0, 3], "ids", low=0).dtype == np.int64
    with pytest.raises(TypeError, match="ids must be an array of integers, got an array of dtype float64"):
        v.int_array([0.0, 1.0], "ids")
    with pytest.raises(ValueError, match=r"ids must hold integers >= 0, got -1"):
        v.int_array([3, -1], "ids", low=0)
    with pytest.raises(ValueError, match=r"stream must hold token ids in \[0, 9\] \(a vocabulary of 10\), got 10"):
        v.token_ids([0, 10], "stream", 10)
    assert v.token_ids(np.array([], dtype=np.int32), "stream", 10).shape == (0,)
    with pytest.raises(ValueError, match="vocab_size must be an int >= 1, got 0"):
        v.token_ids([0], "stream", 0)


def test_probability_vector():
    p = v.probability_vector([0.25, 0.75], "p")
    assert p.sum() == 1
    with pytest.raises(ValueError, match=r"its entries sum to 0\.9"):
        v.probability_vector([0.4, 0.5], "p")
    with pytest.raises(ValueError, match=r"got an entry -0\.5"):
        v.probability_vector([1.5, -0.5], "p")
    with pytest.raises(ValueError, match="empty"):
        v.probability_vector([], "p")


def test_seed():
    assert v.seed(None) is None and v.seed(np.uint8(3)) == 3
    with pytest.raises(ValueError, match="seed must be an int >= 0, got -1"):
        v.seed(-1)
