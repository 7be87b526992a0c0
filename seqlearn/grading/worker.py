"""The sealed grader's worker: runs one submission's code, answers calls, nothing else.

This file is run as a script (``python -I -S worker.py CONFIG``) in an isolated process
started by :mod:`seqlearn.course.sealed`; it imports nothing from seqlearn (the package is
not even on its path, apart from the few modules an answer may use), and the grader imports
it only for :func:`encode` and :func:`decode`, the wire format both sides share.

Protocol: one JSON object per line. The grader writes requests to the worker's stdin; the
worker answers on a private duplicate of its stdout, whose file descriptors 1 and 2 are
pointed at ``/dev/null`` before any student code runs (what the student prints is dropped).

* ``{"op": "exec", "source": str, "name": str}`` runs a cell of the program in the
  notebook's namespace; answer ``{"ok": true}`` or ``{"ok": false, "error": ...}``.
* ``{"op": "capture", "key": str, "names": [str]}`` remembers the objects the names are
  bound to now (a test cell's position in the notebook); answer ``{"found": {name: kind}}``.
* ``{"op": "call", "key": str, "name": str, "args": ..., "kwargs": ...}`` calls a captured
  function on encoded arguments; answer ``{"ok": true, "result": ...}`` or an error.

Values travel in a small tagged JSON codec (:func:`encode`, :func:`decode`): no pickle.
An error is ``{"type": <exception class name>, "message": <first 2000 characters>}``: the
grader trusts neither.
"""

from __future__ import annotations

import base64
import builtins
import fractions
import io
import json
import os
import sys
from collections import Counter

__all__ = ["CodecError", "decode", "encode"]

MAX_DEPTH = 64
MAX_ITEMS = 1_000_000
MAX_ARRAY_BYTES = 64 * 2**20
MAX_TEXT = 2**20
MESSAGE_CHARS = 2000
TENSOR_DTYPES = (
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
)


class CodecError(ValueError):
    """A value that cannot travel (unsupported, too big, too deep, malformed)."""


# ----------------------------------------------------------------------------- codec


def _is_tensor(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach") and hasattr(x, "shape")


def _npy(array) -> str:
    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    if buffer.tell() > MAX_ARRAY_BYTES:
        raise CodecError("an array is too large to send back")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def input_arrays(x, depth: int = 0) -> list:
    """The numpy arrays in ``x`` (through lists, tuples and mappings), in the order both sides see them."""
    if type(x).__module__ == "numpy" and type(x).__name__ == "ndarray":
        return [x]
    if depth > MAX_DEPTH:
        return []
    if isinstance(x, dict):
        return [a for v in x.values() for a in input_arrays(v, depth + 1)]
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in input_arrays(v, depth + 1)]
    return []


def encode(x, depth: int = 0, aliases: list | None = None):
    """``x`` as JSON-able tagged lists (``CodecError`` if it holds anything else or is too big).

    An array sharing memory with ``aliases[i]`` (the call's input arrays) is tagged ``alias`` ``i``.
    """
    if depth > MAX_DEPTH:
        raise CodecError("the value is nested too deeply")
    if x is None or (isinstance(x, bool) and type(x) is bool):
        return x
    if type(x).__module__ == "numpy":
        import numpy as np

        if isinstance(x, np.ndarray):
            if x.dtype.hasobject or x.dtype.kind not in "biufc":
                raise CodecError(f"arrays of dtype {x.dtype} are not supported")
            for i, a in enumerate(aliases or ()):
                if x.size and a.size and np.shares_memory(x, a):
                    return ["alias", i, _npy(x)]
            return ["ndarray", _npy(x)]
        if isinstance(x, np.generic) and x.dtype.kind in "biufc":
            return ["npscalar", _npy(np.asarray(x))]
    if _is_tensor(x):
        dtype = str(x.dtype).removeprefix("torch.")
        if dtype not in TENSOR_DTYPES:
            raise CodecError(f"tensors of dtype {dtype} are not supported")
        t = x.detach().cpu()
        t = t.float() if dtype in ("bfloat16",) else t
        return ["tensor", dtype, _npy(t.numpy())]
    if isinstance(x, bool):
        return bool(x)
    if isinstance(x, int):
        return ["int", str(int(x))]
    if isinstance(x, float):
        return ["float", repr(float(x))]
    if isinstance(x, fractions.Fraction):
        return ["fraction", str(x.numerator), str(x.denominator)]
    if isinstance(x, str):
        if len(x) > MAX_TEXT:
            raise CodecError("a string is too long")
        return ["str", str(x)]
    if isinstance(x, Counter):
        return ["Counter", [[encode(k, depth + 1), encode(v, depth + 1, aliases)] for k, v in x.items()]]
    if isinstance(x, dict):
        return ["dict", [[encode(k, depth + 1), encode(v, depth + 1, aliases)] for k, v in x.items()]]
    if isinstance(x, (list, tuple)):
        if len(x) > MAX_ITEMS:
            raise CodecError("a sequence is too long")
        return ["tuple" if isinstance(x, tuple) else "list", [encode(v, depth + 1, aliases) for v in x]]
    name = "".join(c for c in type(x).__name__ if c.isalnum() or c in "_.")[:60] or "object"
    return ["opaque", name]


def _array(text):
    import numpy as np

    if not isinstance(text, str) or len(text) > MAX_ARRAY_BYTES * 4 // 3 + 8:
        raise CodecError("malformed array")
    try:
        array = np.load(io.BytesIO(base64.b64decode(text, validate=True)), allow_pickle=False)
    except Exception as exc:
        raise CodecError(f"malformed array ({type(exc).__name__})") from None
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "biufc":
        raise CodecError("malformed array")
    return array


def _equal(a, b) -> bool:
    """Whether two arrays of one shape and dtype hold the same values (NaN equal to NaN)."""
    import numpy as np

    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


class Opaque:
    """What a value of an unsupported type decodes to: only its (sanitised) type name survives."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<a {self.name} object>"


def _opaque(name) -> Opaque:
    text = "".join(c for c in str(name) if c.isalnum() or c in "_.")[:60] or "object"
    cls = type(text.rsplit(".", 1)[-1] or "object", (Opaque,), {"__module__": "builtins"})
    return cls(text)


def decode(x, depth: int = 0, budget: list | None = None, aliases: list | None = None):
    """The value :func:`encode` made; every node is checked (``CodecError`` if malformed).

    An ``alias`` ``i`` becomes ``aliases[i]`` itself when it has the shape, dtype and values sent (else
    a copy: a view of it, ``x[::-1]`` or a square ``W.T``, shares its memory but not its values).
    """
    budget = budget if budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        raise CodecError("the value is nested too deeply or has too many parts")
    if x is None or isinstance(x, bool):
        return x
    if not isinstance(x, list) or not x or not isinstance(x[0], str):
        raise CodecError("malformed value")
    tag, rest = x[0], x[1:]
    if tag == "int" and len(rest) == 1 and isinstance(rest[0], str) and len(rest[0]) <= 4000:
        try:
            return int(rest[0])
        except ValueError:
            raise CodecError("malformed int") from None
    if tag == "float" and len(rest) == 1 and isinstance(rest[0], str) and len(rest[0]) <= 40:
        try:
            return float(rest[0])
        except ValueError:
            raise CodecError("malformed float") from None
    if tag == "fraction" and len(rest) == 2 and all(isinstance(r, str) and len(r) <= 4000 for r in rest):
        try:
            return fractions.Fraction(int(rest[0]), int(rest[1]))
        except (ValueError, ZeroDivisionError):
            raise CodecError("malformed fraction") from None
    if tag == "str" and len(rest) == 1 and isinstance(rest[0], str) and len(rest[0]) <= MAX_TEXT:
        return rest[0]
    if tag in ("list", "tuple") and len(rest) == 1 and isinstance(rest[0], list):
        items = [decode(v, depth + 1, budget, aliases) for v in rest[0]]
        return tuple(items) if tag == "tuple" else items
    if tag in ("dict", "Counter") and len(rest) == 1 and isinstance(rest[0], list):
        pairs = []
        for pair in rest[0]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise CodecError("malformed mapping")
            key = decode(pair[0], depth + 1, budget)
            try:
                hash(key)
            except TypeError:
                raise CodecError("a mapping key is not hashable") from None
            pairs.append((key, decode(pair[1], depth + 1, budget, aliases)))
        return Counter(dict(pairs)) if tag == "Counter" else dict(pairs)
    if tag == "ndarray" and len(rest) == 1:
        return _array(rest[0])
    if tag == "alias" and len(rest) == 2 and type(rest[0]) is int:
        array = _array(rest[1])
        known = aliases[rest[0]] if aliases and 0 <= rest[0] < len(aliases) else None
        same = known is not None and known.shape == array.shape and known.dtype == array.dtype
        return known if same and _equal(known, array) else array
    if tag == "npscalar" and len(rest) == 1:
        array = _array(rest[0])
        if array.shape != ():
            raise CodecError("malformed numpy scalar")
        return array[()]
    if tag == "tensor" and len(rest) == 2 and rest[0] in TENSOR_DTYPES:
        import torch

        return torch.from_numpy(_array(rest[1]).copy()).to(getattr(torch, rest[0]))
    if tag == "opaque" and len(rest) == 1:
        return _opaque(rest[0])
    raise CodecError(f"unknown tag {str(tag)[:20]!r}")


# ----------------------------------------------------------------------------- the worker


def _error(exc: BaseException) -> dict:
    name = type(exc).__name__
    try:
        message = str(exc)[:MESSAGE_CHARS]
    except BaseException:
        message = ""
    error: dict = {"type": name if isinstance(name, str) else "Exception", "message": message}
    where, tb = None, exc.__traceback__
    while tb is not None:  # the innermost frame of the notebook's own code
        if tb.tb_frame.f_code.co_filename.startswith(CELL_NAMES):
            where = (tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    if where is not None:
        error["line"], error["function"] = where
    return error


CELL_NAMES = ("<answer ", "<cell ", "<added cell")
"""How the grader names the cells it sends (``compile``'s file name): the student's code is there."""


class _ImportBlocker:
    """Meta-path finder: seqlearn modules outside the allowed ones do not exist here, and say why."""

    def __init__(self, allowed):
        self.allowed = frozenset(allowed)

    def find_spec(self, name, path=None, target=None):
        if (name == "seqlearn" or name.startswith("seqlearn.")) and name not in self.allowed:
            raise ModuleNotFoundError(
                f"No module named {name!r}: under sealed grading only {sorted(self.allowed)} of seqlearn "
                "are available, and references refuse to run during grading. Write the computation yourself.",
                name=name,
            )
        return None


def _drop_privileges(config: dict) -> None:
    uid, gid = config.get("uid"), config.get("gid")
    if uid is None:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: no setuid binary gives privileges back
    os.setgroups([])
    os.setgid(int(gid if gid is not None else uid))
    os.setuid(int(uid))
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("could not drop privileges")


def _silence_output() -> io.TextIOWrapper:
    """A private channel for answers; fds 1 and 2 (and sys.stdout/err) go to /dev/null."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (lives as long as the worker)
    return channel


def _display(*args, **kwargs) -> None:
    """IPython's ``display`` in the notebook; nothing to display to here."""


class _Shell:
    """What ``%magic`` and ``%%magic`` lines become (``get_ipython().run_line_magic(...)``): the magics an
    answer cell may start with run their code (``%%time``, ``%timeit``, ``%%capture``); display and
    configuration magics do nothing; any other is an error of that cell, as a missing magic is in IPython."""

    RUN = ("time", "timeit", "capture", "prun")
    IGNORED = ("matplotlib", "load_ext", "reload_ext", "autoreload", "config", "precision", "pprint", "who", "whos")

    def __init__(self, namespace: dict):
        self.namespace = namespace

    def run_cell_magic(self, name: str, line: str, cell: str):
        if name in self.RUN:
            exec(compile(cell, "<answer magic>", "exec"), self.namespace)
            return None
        raise NameError(f"the cell magic %%{name} is not available under sealed grading")

    def run_line_magic(self, name: str, line: str, *args, **kwargs):
        if name in self.RUN and line.strip():
            mode = "eval" if _is_expression(line) else "exec"
            return eval(compile(line, "<answer magic>", mode), self.namespace)
        if name in self.IGNORED or name in self.RUN:
            return None
        raise NameError(f"the magic %{name} is not available under sealed grading")

    def system(self, *args, **kwargs):
        raise NameError("shell commands (!...) are not available under sealed grading")

    getoutput = system


def _is_expression(source: str) -> bool:
    try:
        compile(source, "<answer magic>", "eval")
    except SyntaxError:
        return False
    return True


def _limit_processes(config: dict) -> None:
    """RLIMIT_NPROC in the sandbox's user namespace: it counts the sandbox's processes, not the grading user's."""
    limit = config.get("processes")
    if limit is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_NPROC, (int(limit), int(limit)))


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    _drop_privileges(config)
    _limit_processes(config)
    sys.path[:] = [p for p in sys.path if p.startswith(tuple(config["stdlib"]))] + list(config["path"])
    sys.meta_path.insert(0, _ImportBlocker(config["allowed"]))
    sys.dont_write_bytecode = True
    os.chdir(config["cwd"])
    channel = _silence_output()
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins, "display": _display}
    shell = _Shell(namespace)
    namespace["get_ipython"] = lambda: shell
    captured: dict = {}
    requests = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")
    sys.stdin = open(os.devnull)  # noqa: SIM115 (input() in an answer reads nothing)
    channel.write(json.dumps({"ready": True, "uid": os.getuid()}) + "\n")
    for line in requests:
        request = json.loads(line)
        channel.write(json.dumps(_answer(request, namespace, captured)) + "\n")
    return 0


def _answer(request: dict, namespace: dict, captured: dict) -> dict:
    op = request["op"]
    if op == "exec":
        try:
            exec(compile(request["source"], request["name"], "exec"), namespace)
        except BaseException as exc:  # the student's error: the cell failed, the program goes on
            return {"ok": False, "error": _error(exc)}
        return {"ok": True}
    if op == "capture":
        found = {}
        for name in request["names"]:
            obj = namespace.get(name, _MISSING)
            captured[(request["key"], name)] = obj
            found[name] = "missing" if obj is _MISSING else "callable" if callable(obj) else "other"
        return {"found": found}
    if op == "call":
        function = captured.get((request["key"], request["name"]))
        try:
            args = decode(request["args"])
            kwargs = decode(request["kwargs"])
            arrays = input_arrays([args, kwargs])
            result = function(*args, **kwargs)  # type: ignore[misc]
        except BaseException as exc:
            return {"ok": False, "error": _error(exc)}
        try:  # the arguments as the call left them: the grader checks they were not changed
            return {"ok": True, "result": encode(result, aliases=arrays), "after": encode([args, kwargs])}
        except BaseException as exc:
            return {"ok": False, "error": {"type": "CodecError", "message": str(exc)[:200]}}
    return {"ok": False, "error": {"type": "ValueError", "message": f"unknown op {op!r}"}}


_MISSING = object()

if __name__ == "__main__":
    sys.exit(main(sys.argv))
