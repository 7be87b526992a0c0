r"""Finite-difference gradient checking for NumPy functions and torch modules.

Each checked entry :math:`\theta_i` of a parameter array gets the central difference

.. math::
    \hat g_i = \frac{f(\theta + \varepsilon e_i) - f(\theta - \varepsilon e_i)}{2 \varepsilon},

(error :math:`O(\varepsilon^2)`), compared with the analytic gradient :math:`g_i` by the
relative error :math:`|g_i - \hat g_i| / \max(|g_i|, |\hat g_i|, \tau)`, where the floor
:math:`\tau` keeps entries whose gradient is (numerically) zero from dividing by zero. In
float64 with :math:`\varepsilon = 10^{-6}` a correct gradient gives errors around
:math:`10^{-8}` or less; a wrong one, errors of order 1.

For large parameters, ``n_entries`` checks a random subset of each array's entries
(without replacement, from ``seed``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .validation import integer, real

__all__ = ["GradcheckReport", "relative_error", "numerical_gradient", "check_gradients", "check_module_gradients"]


@dataclass(frozen=True)
class GradcheckReport:
    """Per-parameter results of a gradient check.

    ``max_rel_error`` and ``max_abs_error`` map each parameter name to the largest error over
    its checked entries; ``n_checked`` to how many entries were checked.
    """

    max_rel_error: dict[str, float]
    max_abs_error: dict[str, float]
    n_checked: dict[str, int]
    details: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(repr=False, default_factory=dict)

    @property
    def worst(self) -> float:
        """The largest relative error over all parameters."""
        return max(self.max_rel_error.values(), default=0.0)

    def passed(self, rtol: float = 1e-6) -> bool:
        """True if every checked entry's relative error is at most ``rtol``."""
        return self.worst <= rtol

    def __str__(self) -> str:
        width = max((len(name) for name in self.max_rel_error), default=4)
        lines = [f"{'param':<{width}}  {'checked':>7}  {'max rel err':>11}  {'max abs err':>11}"]
        for name, rel in self.max_rel_error.items():
            lines.append(f"{name:<{width}}  {self.n_checked[name]:>7}  {rel:>11.2e}  {self.max_abs_error[name]:>11.2e}")
        return "\n".join(lines)


def relative_error(analytic, numeric, floor: float = 1e-10) -> np.ndarray:
    r""":math:`|a - n| / \max(|a|, |n|, \tau)` elementwise, with :math:`\tau` = ``floor``."""
    a, n = np.asarray(analytic, dtype=np.float64), np.asarray(numeric, dtype=np.float64)
    return np.abs(a - n) / np.maximum(np.maximum(np.abs(a), np.abs(n)), floor)


def _as_named(params) -> dict:
    if isinstance(params, Mapping):
        return dict(params)
    if isinstance(params, (list, tuple)):
        return {str(i): p for i, p in enumerate(params)}
    raise TypeError(f"params must be a dict or a list of arrays, got {type(params).__name__}")


def _entries(size: int, n_entries: int | None, rng: np.random.Generator) -> np.ndarray:
    """Flat indices of the entries to check: all of them, or ``n_entries`` drawn without replacement."""
    if n_entries is not None:
        n_entries = integer(n_entries, "n_entries", low=1)
    if n_entries is None or n_entries >= size:
        return np.arange(size)
    return np.sort(rng.choice(size, size=n_entries, replace=False))


def _central_differences(f: Callable[[], float], flat, indices: np.ndarray, eps: float) -> np.ndarray:
    """Central differences of ``f()`` with respect to ``flat[i]``, perturbed in place and restored."""
    numeric = np.empty(len(indices))
    for n, i in enumerate(indices):
        original = float(flat[i])
        flat[i] = original + eps
        f_plus = float(f())
        flat[i] = original - eps
        f_minus = float(f())
        flat[i] = original
        numeric[n] = (f_plus - f_minus) / (2 * eps)
    return numeric


def numerical_gradient(
    f: Callable, params, *, eps: float = 1e-6, n_entries: int | None = None, seed=0
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    r"""Central-difference gradient of a scalar function of NumPy parameter arrays.

    ``f(params) -> float`` takes a dict (or list) of arrays like ``params``. The arrays are
    copied to float64 before being perturbed, so the caller's arrays are never touched.

    Returns
    -------
    dict mapping each name (list positions become ``"0"``, ``"1"``, ...) to
    ``(flat_indices, numeric_gradient_values)``.
    """
    eps = real(eps, "eps", low=0, low_open=True)
    named = {k: np.array(v, dtype=np.float64) for k, v in _as_named(params).items()}
    as_given = named if isinstance(params, Mapping) else list(named.values())
    rng = np.random.default_rng(seed)
    result = {}
    for name, theta in named.items():
        flat = theta.reshape(-1)  # a view: perturbing it perturbs theta
        indices = _entries(flat.size, n_entries, rng)
        result[name] = (indices, _central_differences(lambda: f(as_given), flat, indices, eps))
    return result


def _report(analytic: dict, numeric: dict, floor: float) -> GradcheckReport:
    rel, abs_, counts, details = {}, {}, {}, {}
    for name, (indices, values) in numeric.items():
        a = np.asarray(analytic[name], dtype=np.float64).reshape(-1)[indices]
        err = relative_error(a, values, floor)
        rel[name] = float(err.max(initial=0.0))
        abs_[name] = float(np.abs(a - values).max(initial=0.0))
        counts[name] = len(indices)
        details[name] = (indices, a, values)
    return GradcheckReport(rel, abs_, counts, details)


def check_gradients(
    f: Callable, params, grads, *, eps: float = 1e-6, n_entries: int | None = None, seed=0, floor: float = 1e-10
) -> GradcheckReport:
    r"""Compare analytic gradients of ``f(params) -> float`` with central differences.

    Parameters
    ----------
    f : callable taking a dict (or list) of arrays shaped like ``params``, returning a scalar
    params : dict or list of arrays, the point at which to check
    grads : the analytic gradients, same names (or positions) and shapes as ``params``
    eps : the finite-difference step :math:`\varepsilon`
    n_entries : check at most this many random entries per array (None: all)
    floor : the :math:`\tau` of :func:`relative_error`

    Returns
    -------
    :class:`GradcheckReport`
    """
    named, analytic = _as_named(params), _as_named(grads)
    for name, theta in named.items():
        if name not in analytic:
            raise ValueError(f"grads has no gradient for parameter {name!r}")
        if np.shape(analytic[name]) != np.shape(theta):
            raise ValueError(
                f"the gradient of {name!r} has shape {np.shape(analytic[name])}, its parameter {np.shape(theta)}"
            )
    numeric = numerical_gradient(f, params, eps=eps, n_entries=n_entries, seed=seed)
    return _report(analytic, numeric, floor)


def check_module_gradients(
    module, loss_fn: Callable, *, eps: float = 1e-6, n_entries: int | None = None, seed=0, floor: float = 1e-10
) -> GradcheckReport:
    r"""Compare a torch module's autograd gradients with central differences.

    ``loss_fn(module)`` returns a scalar tensor. The analytic gradients come from one
    ``backward()``; then each checked entry of every parameter that requires a gradient
    is perturbed in place (under ``torch.no_grad``) and restored. The parameters must be
    float64: in float32 the differences are dominated by rounding. Works on any device.

    Returns
    -------
    :class:`GradcheckReport` keyed by ``module.named_parameters()`` names.
    """
    import torch

    params = {name: p for name, p in module.named_parameters() if p.requires_grad}
    if not params:
        raise ValueError("the module has no parameters that require a gradient")
    for name, p in params.items():
        if p.dtype != torch.float64:
            raise TypeError(f"parameter {name!r} is {p.dtype}; gradient checks need float64 (call module.double())")
    eps = real(eps, "eps", low=0, low_open=True)
    module.zero_grad(set_to_none=True)
    loss = loss_fn(module)
    if loss.numel() != 1:
        raise ValueError(f"loss_fn must return a scalar, got a tensor of shape {tuple(loss.shape)}")
    loss.backward()
    analytic = {
        name: (p.grad.detach().cpu().numpy().copy() if p.grad is not None else np.zeros(tuple(p.shape)))
        for name, p in params.items()
    }
    rng = np.random.default_rng(seed)
    numeric = {}

    def evaluate() -> float:
        return float(loss_fn(module).item())

    with torch.no_grad():
        for name, p in params.items():
            flat = p.data.view(-1) if p.is_contiguous() else None
            if flat is None:
                raise ValueError(f"parameter {name!r} is not contiguous; cannot perturb it in place")
            indices = _entries(flat.numel(), n_entries, rng)
            numeric[name] = (indices, _central_differences(evaluate, _TensorEntries(flat), indices, eps))
    return _report(analytic, numeric, floor)


class _TensorEntries:
    """Item access to a flat tensor with Python floats, so :func:`_central_differences` serves both kinds."""

    def __init__(self, flat):
        self.flat = flat

    def __getitem__(self, i):
        return self.flat[int(i)].item()

    def __setitem__(self, i, value):
        self.flat[int(i)] = value
