"""Comparison for the autograder: the first difference between an expected and a returned value, in words.

:func:`compare` walks both values together (floats with tolerances, numpy arrays, torch tensors,
mappings and Counters, lists and tuples) and returns the first :class:`Mismatch`: what kind of
difference (type, shape, dtype, length, keys, value), where (the path of indices and keys to it),
expected and got. A mismatch on a hidden case is told without anything the input could spell out
(:meth:`Mismatch.describe`; see :mod:`seqlearn.grading.checks`, "What a failure says").
:func:`same_values` and :func:`matching_advice` are how a chapter's checks recognise a usual
mistake: the result equals what the mistake computes and not what the reference does.
"""

from __future__ import annotations

import math
import numbers
from collections import Counter, OrderedDict, defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["Mismatch", "compare", "describe_type", "matching_advice", "same_values"]


def _clip(x: Any, limit: int = 80) -> str:
    """``repr(x)``, cut to ``limit`` characters."""
    text = repr(_plain(x))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_type(x: Any) -> str:
    """A short description of the type (and shape, dtype, length) of ``x``, for messages."""
    if _is_tensor(x):
        return f"a torch.Tensor of shape {tuple(x.shape)} and dtype {x.dtype}"
    if isinstance(x, np.ndarray):
        return f"a numpy array of shape {x.shape} and dtype {x.dtype}"
    if x is None:
        return "None"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of length {len(x)}"
    cls = type(x)
    name = cls.__name__ if cls.__module__ in ("builtins", "collections") else f"{cls.__module__}.{cls.__name__}"
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


_NAMED_TYPES = frozenset(
    {type(None), bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset, range}
    | {Counter, OrderedDict, defaultdict, deque, Fraction}
)
"""Types a hidden case may name in a result: no one chose their names after the input."""


def _kind(x: Any, own: bool = False) -> str:
    """The type of ``x`` in words that say nothing of its value, for hidden cases: no shape, length or dtype.

    A result's class is named only if it is a builtin, collections, numpy or torch one (a class of the
    student's own can be named after the input); ``own``: ``x`` is the reference's, whose class is named.
    """
    if _is_tensor(x):
        return "a torch.Tensor"
    if isinstance(x, np.ndarray):
        return "a numpy array"
    cls = type(x)
    numpy_scalar = issubclass(cls, np.generic) and getattr(np, cls.__name__, None) is cls
    if not (own or numpy_scalar or cls in _NAMED_TYPES):
        return "an object of a type of its own"
    return f"a {cls.__name__}" if isinstance(x, (list, tuple)) else describe_type(x)


def _dtype_name(dtype: np.dtype) -> str:
    """A numeric dtype's name; of another dtype (whose name can hold a length, or field names) only its kind."""
    return str(dtype) if dtype.kind in "biufc" else f"a dtype of kind {dtype.kind!r}"


def _shape_difference(expected: tuple, got: tuple) -> str:
    """How ``got`` differs from the ``expected`` shape, naming no size (sizes follow the input)."""
    if len(got) != len(expected):
        return f"expected {len(expected)} dimension(s), got {len(got)}"
    axis = next(i for i, (e, g) in enumerate(zip(expected, got)) if e != g)
    return f"axis {axis} is {'shorter' if got[axis] < expected[axis] else 'longer'} than expected"


def _is_tensor(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach") and hasattr(x, "shape")


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


@dataclass(frozen=True)
class Mismatch:
    """The first difference between an expected and a returned value.

    Parameters
    ----------
    problem : str
        What differs: ``"type"``, ``"shape"``, ``"dtype"``, ``"length"``, ``"missing keys"``,
        ``"extra keys"`` or ``"value"``.
    expected, got : str
        Short descriptions of the expected and the returned thing.
    path : tuple
        Where, from the outside in: ``("index", i)`` for sequences and arrays, ``("key", k)``
        for mappings. Keys come from the input, so they are withheld for hidden cases.
    keys : tuple
        For missing/extra keys, a few examples (withheld for hidden cases).
    hidden_detail : str
        What a hidden case says in place of ``expected`` and ``got``: the grader's own words, which
        carry neither value nor anything that follows from the input ("expected a number, got a
        numpy array", "axis 0 is shorter than expected"); empty where nothing can be said.
    """

    problem: str
    expected: str
    got: str
    path: tuple = ()
    keys: tuple = field(default=())
    hidden_detail: str = ""

    def where(self, hidden: bool = False) -> str:
        """``result[...]...`` naming the differing part (mapping keys withheld if ``hidden``)."""
        text = "the result"
        for kind, item in self.path:
            if kind == "key":
                text += "[<a key>]" if hidden else f"[{item!r}]"
            else:
                text += f"[{item}]"
        return text

    def describe(self, hidden: bool = False) -> str:
        """One sentence saying what differs; when ``hidden``, safe to show for hidden cases: what kind of
        thing differs, where, and :attr:`hidden_detail`, never a value or a count."""
        where = self.where(hidden)
        if self.problem in ("missing keys", "extra keys"):
            verb = "lacks" if self.problem == "missing keys" else "has"
            which = "it should have" if self.problem == "missing keys" else "it should not have"
            if hidden:
                return f"{where} {verb} key(s) {which} (keys withheld)"
            examples = ", e.g. " + ", ".join(_clip(k) for k in self.keys)
            return f"{where} {verb} {self.got} key(s) {which}{examples}"
        if hidden:
            detail = f": {self.hidden_detail}" if self.hidden_detail else " (the values are withheld in hidden cases)"
            return f"{where} has the wrong {self.problem}{detail}"
        if self.problem == "value":
            return f"{where} has the wrong value: expected {self.expected}, got {self.got}"
        return f"{where} has the wrong {self.problem}: expected {self.expected}, got {self.got}"


def compare(expected: Any, got: Any, *, rtol: float = 1e-9, atol: float = 1e-12) -> Mismatch | None:
    """The first difference between ``expected`` and ``got``, or ``None`` if they agree.

    Floats (Python, numpy), numpy arrays and torch tensors agree within
    ``|got - expected| <= atol + rtol * |expected|`` (NaN matches NaN, infinities must match
    exactly); ints, bools and strings must be equal. Arrays and tensors must match in
    type, shape and dtype kind (float, int, bool, complex). Mappings must have the same keys
    (a ``Counter``'s zero counts are ignored) and agreeing values; lists and tuples must have
    the same length and agreeing items, and where a tuple is expected a list does not do
    (a list where a list is expected may come back as a tuple).
    """
    if rtol < 0 or atol < 0:
        raise ValueError(f"tolerances must be >= 0, got rtol={rtol}, atol={atol}")
    return _compare(expected, got, (), rtol, atol)


def _compare(expected, got, path, rtol, atol) -> Mismatch | None:
    if _is_tensor(expected):
        return _compare_tensor(expected, got, path, rtol, atol)
    if isinstance(expected, np.ndarray):
        return _compare_array(expected, got, path, rtol, atol)
    if isinstance(expected, (bool, np.bool_)):
        return _compare_exact(expected, got, path, (bool, np.bool_), "a bool")
    if _is_real(expected):
        return _compare_number(expected, got, path, rtol, atol)
    if isinstance(expected, Mapping):
        return _compare_mapping(expected, got, path, rtol, atol)
    if isinstance(expected, (list, tuple)):
        return _compare_sequence(expected, got, path, rtol, atol)
    return _compare_exact(expected, got, path, type(expected), describe_type(expected))


def _compare_exact(expected, got, path, types, type_name) -> Mismatch | None:
    if not isinstance(got, types):
        detail = f"expected {_kind(expected, own=True)}, got {_kind(got)}"
        return Mismatch("type", type_name, describe_type(got), path, hidden_detail=detail)
    if got != expected:
        return Mismatch("value", _clip(expected), _clip(got), path)
    return None


def _compare_number(expected, got, path, rtol, atol) -> Mismatch | None:
    if _is_tensor(got) or (isinstance(got, np.ndarray)):
        hint = " (use .item() to get the number)"
        detail = f"expected a number, got {_kind(got)}{hint}"
        return Mismatch("type", "a number", describe_type(got) + hint, path, hidden_detail=detail)
    if not _is_real(got):
        return Mismatch(
            "type", "a number", describe_type(got), path, hidden_detail=f"expected a number, got {_kind(got)}"
        )
    if isinstance(expected, numbers.Integral) and isinstance(got, numbers.Integral):
        ok = int(got) == int(expected)
    else:
        try:
            ok = _close(float(expected), float(got), rtol, atol)
        except OverflowError:  # an integer beyond every float equals no float
            ok = False
    if not ok and isinstance(got, np.floating) and _lower_precision(np.dtype(np.float64), got.dtype):
        low = _LOW_PRECISION.format(got=f"a numpy {got.dtype}", want="float64")
        return Mismatch("dtype", "float64", low, path, hidden_detail=f"expected float64, got {low}")
    return None if ok else Mismatch("value", _clip(expected), _clip(got), path)


def _plain(x):
    """A Python int/float for a numpy scalar, so messages read ``0.25``, not ``np.float64(0.25)``."""
    return x.item() if isinstance(x, np.generic) else x


def _close(expected: float, got: float, rtol: float, atol: float) -> bool:
    if math.isnan(expected) or math.isnan(got):
        return math.isnan(expected) and math.isnan(got)
    if math.isinf(expected) or math.isinf(got):
        return expected == got
    return abs(got - expected) <= atol + rtol * abs(expected)


def _compare_mapping(expected, got, path, rtol, atol) -> Mismatch | None:
    if not isinstance(got, Mapping):
        want = f"a mapping ({type(expected).__name__} or dict)"
        return Mismatch("type", want, describe_type(got), path, hidden_detail=f"expected {want}, got {_kind(got)}")
    if isinstance(expected, Counter):
        expected = {k: v for k, v in expected.items() if v != 0}
        got = {k: v for k, v in got.items() if not (_is_real(v) and v == 0)}
    for problem, keys in (("missing keys", expected.keys() - got.keys()), ("extra keys", got.keys() - expected.keys())):
        if keys:
            return Mismatch(problem, "0", str(len(keys)), path, tuple(sorted(keys, key=repr)[:3]))
    for key in sorted(expected, key=repr):
        mismatch = _compare(expected[key], got[key], (*path, ("key", key)), rtol, atol)
        if mismatch:
            return mismatch
    return None


def _compare_sequence(expected, got, path, rtol, atol) -> Mismatch | None:
    wanted = tuple if isinstance(expected, tuple) else (list, tuple)
    if not isinstance(got, wanted):
        advice = " (return a tuple, e.g. tuple(result) or (a, b, c))" if isinstance(got, list) else ""
        detail = f"expected a {type(expected).__name__}, got {_kind(got)}{advice}"
        want = f"a {type(expected).__name__} of length {len(expected)}"
        return Mismatch("type", want, describe_type(got) + advice, path, hidden_detail=detail)
    if len(got) != len(expected):
        detail = f"it is {'shorter' if len(got) < len(expected) else 'longer'} than expected"
        return Mismatch("length", str(len(expected)), str(len(got)), path, hidden_detail=detail)
    for i, (e, g) in enumerate(zip(expected, got)):
        mismatch = _compare(e, g, (*path, ("index", i)), rtol, atol)
        if mismatch:
            return mismatch
    return None


def _compare_tensor(expected, got, path, rtol, atol) -> Mismatch | None:
    if not _is_tensor(got):
        detail = f"expected a torch.Tensor, got {_kind(got)}"
        return Mismatch("type", describe_type(expected), describe_type(got), path, hidden_detail=detail)
    if tuple(got.shape) != tuple(expected.shape):
        want, shape = tuple(expected.shape), tuple(got.shape)
        return Mismatch("shape", str(want), str(shape), path, hidden_detail=_shape_difference(want, shape))
    if got.dtype != expected.dtype:
        detail = f"expected {expected.dtype}, got {got.dtype}"  # torch's dtypes: a fixed set of names
        return Mismatch("dtype", str(expected.dtype), str(got.dtype), path, hidden_detail=detail)
    return _compare_values(_tensor_to_numpy(expected), _tensor_to_numpy(got), path, rtol, atol)


def _tensor_to_numpy(t) -> np.ndarray:
    t = t.detach().cpu()
    if not t.dtype.is_complex and t.dtype.is_floating_point:
        t = t.double()
    return t.numpy()


def _compare_array(expected, got, path, rtol, atol) -> Mismatch | None:
    if not isinstance(got, np.ndarray):
        hint = " (convert with .detach().cpu().numpy())" if _is_tensor(got) else ""
        detail = f"expected a numpy array, got {_kind(got)}{hint}"
        return Mismatch("type", describe_type(expected), describe_type(got) + hint, path, hidden_detail=detail)
    if got.shape != expected.shape:
        detail = _shape_difference(expected.shape, got.shape)
        return Mismatch("shape", str(expected.shape), str(got.shape), path, hidden_detail=detail)
    if got.dtype.kind != expected.dtype.kind and not {got.dtype.kind, expected.dtype.kind} <= {"i", "u"}:
        want = f"{expected.dtype} (or another of kind {expected.dtype.kind!r})"
        detail = f"expected {want}, got {_dtype_name(got.dtype)}"
        return Mismatch("dtype", want, str(got.dtype), path, hidden_detail=detail)
    mismatch = _compare_values(expected, got, path, rtol, atol)
    if mismatch is not None and _lower_precision(expected.dtype, got.dtype):
        low = _LOW_PRECISION.format(got=got.dtype, want=expected.dtype)
        return Mismatch("dtype", str(expected.dtype), low, path, hidden_detail=f"expected {expected.dtype}, got {low}")
    return mismatch


_LOW_PRECISION = "{got}, whose lower precision makes the values differ (compute in {want})"


def _lower_precision(expected: np.dtype, got: np.dtype) -> bool:
    """Whether ``got`` is a float (or complex) type of fewer bits than ``expected``, of the same kind."""
    return expected.kind in "fc" and got.kind == expected.kind and got.itemsize < expected.itemsize


def _compare_values(expected: np.ndarray, got: np.ndarray, path, rtol, atol) -> Mismatch | None:
    if expected.dtype.kind in "fc" or got.dtype.kind in "fc":
        ok = np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == expected
    if np.all(ok):
        return None
    bad = tuple(int(i) for i in np.argwhere(~np.asarray(ok))[0])
    index = ", ".join(map(str, bad)) if bad else ""
    n_bad = int(np.size(ok) - np.count_nonzero(ok))
    return Mismatch(
        "value",
        repr(expected[bad].item()),
        f"{got[bad].item()!r} ({n_bad} of {np.size(ok)} entries differ)",
        (*path, ("index", index)) if bad else path,
    )


def same_values(got, expected, rtol: float = 1e-9, atol: float = 1e-12, equal_nan: bool = False) -> bool:
    """Whether ``got`` is a float array (or number) of ``expected``'s shape, equal to it within tolerances."""
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    return got.shape == expected.shape and bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=equal_nan))


def matching_advice(candidates, got, expected, same: Callable = same_values) -> str | None:
    """The advice of every candidate ``(advice, value)`` that ``got`` equals while ``expected`` does not.

    How the checks name a typical mistake: each candidate is what one mistake computes; advice
    repeated by several candidates is given once, in order, joined by ``"; or "``.
    """
    advice = [text for text, value in candidates if same(got, value) and not same(value, expected)]
    return "; or ".join(dict.fromkeys(advice)) or None
