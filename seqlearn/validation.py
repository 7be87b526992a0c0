"""Argument checks shared by the whole package: one rule, one wording.

The rule: a ``TypeError`` when an argument is of the wrong kind (a float where an int is
expected, a string where an array is, a bool where a number is), a ``ValueError`` when it
is of the right kind but not acceptable (out of range, the wrong shape, NaN). Every message
names the argument, says what is expected and shows what came::

    order must be an int >= 1, got 0
    lr must be a real number > 0, got str ('fast')
    p must be a probability vector (entries >= 0 summing to 1), its entries sum to 0.9

Each check returns the value converted to the plain type it stands for (``int``, ``float``,
an ``np.ndarray``), so a caller writes ``order = integer(order, "order", low=1)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "integer",
    "real",
    "probability",
    "flag",
    "choice",
    "real_array",
    "int_array",
    "probability_vector",
    "token_ids",
    "seed",
    "generator",
]


def _shown(value) -> str:
    """How a wrong-kind value is shown: its type, and its repr when that is short."""
    text = repr(value)
    return f"{type(value).__name__} ({text})" if len(text) <= 40 else type(value).__name__


def _interval(low, high, low_open: bool, high_open: bool) -> str:
    """'>= 1', '> 0', '<= 5', 'in [0, 1]', 'in (0, 1]', or '' when unbounded."""
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return ""


def _inside(x, low, high, low_open: bool, high_open: bool) -> bool:
    above = low is None or (x > low if low_open else x >= low)
    below = high is None or (x < high if high_open else x <= high)
    return above and below


def integer(value, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` in ``[low, high]`` (either bound optional); bools are not ints."""
    expected = " ".join(filter(None, ["an int", _interval(low, high, False, False)]))
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be {expected}, got {_shown(value)}")
    if not _inside(value, low, high, False, False):
        raise ValueError(f"{name} must be {expected}, got {value}")
    return int(value)


def real(
    value,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a finite ``float`` in the interval given by ``low``/``high`` (``*_open``: excluded)."""
    expected = " ".join(filter(None, ["a finite real number", _interval(low, high, low_open, high_open)]))
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be {expected}, got {_shown(value)}")
    x = float(value)
    if not math.isfinite(x) or not _inside(x, low, high, low_open, high_open):
        raise ValueError(f"{name} must be {expected}, got {x:g}")
    return x


def probability(value, name: str) -> float:
    """``value`` as a ``float`` in [0, 1]."""
    return real(value, name, low=0.0, high=1.0)


def flag(value, name: str) -> bool:
    """``value`` if it is a ``bool`` (numpy's included): no 0/1, no strings."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {_shown(value)}")
    return bool(value)


def choice(value, name: str, options: Iterable[str]) -> str:
    """``value`` if it is one of ``options`` (strings)."""
    options = list(options)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {options}, got {_shown(value)}")
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def _array(x, name: str, kinds: str, what: str) -> np.ndarray:
    """``np.asarray(x)`` if its dtype kind is among ``kinds`` ('i', 'u', 'f'); ``TypeError`` otherwise."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be {what}, got {_shown(x)}")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError):
        raise TypeError(f"{name} must be {what}, got {type(x).__name__} that is not a rectangular array") from None
    if arr.dtype.kind not in kinds and not (arr.size == 0 and arr.dtype.kind in "iuf"):  # [] is float64
        raise TypeError(f"{name} must be {what}, got an array of dtype {arr.dtype}")
    return arr


def _check_shape(arr: np.ndarray, name: str, ndim: int | Sequence[int] | None, shape) -> None:
    """``ValueError`` unless ``arr`` has ``ndim`` dimensions (one of them) and the ``shape`` (None: any)."""
    allowed = [ndim] if isinstance(ndim, int) else ndim
    if allowed is not None and arr.ndim not in allowed:
        wanted = " or ".join(f"{d}-D" for d in allowed)
        raise ValueError(f"{name} must be {wanted}, got an array of shape {arr.shape}")
    if shape is not None and (
        len(shape) != arr.ndim or any(s is not None and s != a for s, a in zip(shape, arr.shape))
    ):
        wanted = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {wanted}, got {arr.shape}")


def real_array(x, name: str, *, ndim: int | Sequence[int] | None = None, shape=None) -> np.ndarray:
    """``x`` as a float64 array of finite numbers with ``ndim`` dimensions and ``shape`` (None: any size)."""
    arr = _array(x, name, "iuf", "an array of real numbers")
    _check_shape(arr, name, ndim, shape)
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        where = f" at index {bad}" if bad else ""
        raise ValueError(f"{name} must be finite, got {arr[bad]}{where}")
    return arr


def int_array(
    x,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    shape=None,
    low: int | None = None,
    high: int | None = None,
) -> np.ndarray:
    """``x`` as an int64 array with entries in ``[low, high]`` (either bound optional)."""
    arr = _array(x, name, "iu", "an array of integers")
    _check_shape(arr, name, ndim, shape)
    arr = arr.astype(np.int64, copy=False)
    if arr.size:
        outside = [v for v in (int(arr.min()), int(arr.max())) if not _inside(v, low, high, False, False)]
        if outside:
            raise ValueError(f"{name} must hold integers {_interval(low, high, False, False)}, got {outside[0]}")
    return arr


def probability_vector(p, name: str, *, atol: float = 1e-9) -> np.ndarray:
    """``p`` as a 1-D float64 array with entries >= 0 that sum to 1 (within ``atol``)."""
    arr = real_array(p, name, ndim=1)
    expected = f"{name} must be a probability vector (entries >= 0 summing to 1)"
    if arr.size == 0:
        raise ValueError(f"{expected}, got an empty array")
    if arr.min() < 0:
        raise ValueError(f"{expected}, got an entry {arr.min():g}")
    if abs(arr.sum() - 1.0) > atol:
        raise ValueError(f"{expected}, its entries sum to {arr.sum():.12g}")
    return arr


def token_ids(x, name: str, vocab_size: int, *, ndim: int | Sequence[int] | None = None) -> np.ndarray:
    """``x`` as an int64 array of token ids, each in ``[0, vocab_size)``."""
    vocab_size = integer(vocab_size, "vocab_size", low=1)
    arr = int_array(x, name, ndim=ndim)
    if arr.size and (arr.min() < 0 or arr.max() >= vocab_size):
        bad = arr.min() if arr.min() < 0 else arr.max()
        raise ValueError(
            f"{name} must hold token ids in [0, {vocab_size - 1}] (a vocabulary of {vocab_size}), got {bad}"
        )
    return arr


def seed(value, name: str = "seed") -> int | None:
    """``value`` if it is None or an int >= 0 (a seed for ``np.random.default_rng`` or torch)."""
    return None if value is None else integer(value, name, low=0)


def generator(rng, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` from ``rng``: a generator (returned as is), a seed >= 0, or
    None for fresh OS entropy (not reproducible: pass a seed for that)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer))):
        raise TypeError(f"{name} must be a numpy.random.Generator, an int seed >= 0 or None, got {_shown(rng)}")
    return np.random.default_rng(seed(rng, name))
