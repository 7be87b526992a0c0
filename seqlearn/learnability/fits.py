r"""Straight-line fits that classify envelopes and test the master law (NumPy).

* :func:`envelope_fits`: :math:`\log f` on :math:`\ell` (an exponential envelope is a line,
  slope :math:`-1/\tau`) and on :math:`\log\ell` (a power law is a line, slope :math:`-\beta`);
  the better :math:`R^2` names the class.
* :func:`unit_time_scales`: per neuron, :math:`\tau_q = -1/\text{slope}` of
  :math:`\log \overline{|\mu^{(q)}|}(\ell)` on :math:`\ell`.
* :func:`master_law_fit`: :math:`\log N_{req}(\ell)` on :math:`-\kappa_{\hat\alpha(\ell)} \log
  \hat f(\ell)`; the master law :math:`N \propto f^{-\kappa}` predicts slope 1.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..validation import int_array, integer, real_array

__all__ = ["LineFit", "fit_line", "envelope_fits", "unit_time_scales", "master_law_fit"]


class LineFit(NamedTuple):
    r"""Least squares :math:`y \approx a x + b`: ``slope`` :math:`a`, ``intercept`` :math:`b`, ``r2``, ``n`` points."""

    slope: float
    intercept: float
    r2: float
    n: int


def fit_line(x, y) -> LineFit:
    r"""Ordinary least squares of ``y`` on ``x`` (1-D, same length >= 2, ``x`` not constant)."""
    x, y = real_array(x, "x", ndim=1), real_array(y, "y", ndim=1)
    if x.shape != y.shape or x.size < 2:
        raise ValueError(f"x and y must be of one length >= 2, got {x.size} and {y.size}")
    if np.ptp(x) == 0:
        raise ValueError("x must not be constant: a line through one abscissa is undetermined")
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    total = ((y - y.mean()) ** 2).sum()
    r2 = 1.0 - (residual**2).sum() / total if total > 0 else 1.0
    return LineFit(float(slope), float(intercept), float(r2), int(x.size))


def _lags_and_envelope(lags, f) -> tuple[np.ndarray, np.ndarray]:
    lags = int_array(lags, "lags", ndim=1, low=1)
    f = real_array(f, "f", ndim=1)
    if f.shape != lags.shape:
        raise ValueError(f"f must have one value per lag ({lags.size}), got {f.size}")
    return lags, f


def envelope_fits(lags, f) -> dict[str, LineFit]:
    r"""``{"exponential": fit of log f on l, "power": fit of log f on log l}`` over the lags with :math:`f > 0`.

    Exponential :math:`f = A e^{-\ell/\tau}`: slope :math:`-1/\tau`; power law :math:`f = A
    \ell^{-\beta}`: slope :math:`-\beta`.
    """
    lags, f = _lags_and_envelope(lags, f)
    keep = f > 0
    log_f = np.log(f[keep])
    return {"exponential": fit_line(lags[keep], log_f), "power": fit_line(np.log(lags[keep]), log_f)}


def unit_time_scales(lags, mass, min_points: int = 5) -> np.ndarray:
    r"""Per-neuron time scales :math:`\tau_q = -1/\text{slope}` of :math:`\log m_q(\ell)` on :math:`\ell`.

    ``mass`` ``(n_lags, H)``: e.g. :math:`\overline{|\mu^{(q)}_\ell|}`. Neurons with fewer than
    ``min_points`` positive values, or a slope :math:`\ge 0` (no decay), get ``inf``. Returns ``(H,)``.
    """
    lags = int_array(lags, "lags", ndim=1, low=1)
    mass = real_array(mass, "mass", ndim=2)
    if mass.shape[0] != lags.size:
        raise ValueError(f"mass must have one row per lag ({lags.size}), got shape {mass.shape}")
    min_points = integer(min_points, "min_points", low=2)
    tau = np.full(mass.shape[1], np.inf)
    for q in range(mass.shape[1]):
        keep = mass[:, q] > 0
        if keep.sum() >= min_points:
            slope = fit_line(lags[keep], np.log(mass[keep, q])).slope
            tau[q] = -1.0 / slope if slope < 0 else np.inf
    return tau


def master_law_fit(f, alpha, N_req, min_points: int = 3) -> LineFit:
    r"""Fit :math:`\log N_{req}` on :math:`x = -\kappa_{\hat\alpha} \log \hat f`, per lag (slope 1 predicted).

    Lags enter when :math:`\hat f > 0`, :math:`\hat\alpha > 1.01` and :math:`N_{req} > 0`; at
    least ``min_points`` of them, with at least 2 distinct :math:`N_{req}` (else ``ValueError``).
    """
    f, alpha = real_array(f, "f", ndim=1), real_array(alpha, "alpha", ndim=1)
    N_req = int_array(N_req, "N_req", ndim=1, low=-1)
    if not (f.shape == alpha.shape == N_req.shape):
        raise ValueError(f"f, alpha and N_req must be of one length, got {f.size}, {alpha.size}, {N_req.size}")
    keep = (f > 0) & (alpha > 1.01) & (N_req > 0)
    if keep.sum() < integer(min_points, "min_points", low=2) or np.unique(N_req[keep]).size < 2:
        raise ValueError(
            f"too few lags with f > 0, alpha > 1.01 and a reached N_req ({int(keep.sum())}), "
            "or all of one N_req: no master-law fit"
        )
    x = -alpha[keep] / (alpha[keep] - 1.0) * np.log(f[keep])
    return fit_line(x, np.log(N_req[keep]))
