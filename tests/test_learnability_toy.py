"""The leaky-bank toy: its envelope, its detection map against the stable law, the master-law slope and
the window against the closed forms of :mod:`seqlearn.learnability.window`.

Tolerances come from the sampling: the empirical p-quantile of R replicate means has relative error
about delta = sqrt(p (1 - p) / R) / (q_p pdf(q_p)), which moves N_req by a factor (1 + delta)^kappa
and the window by tau delta lags. Replacing kappa_alpha by alpha (alpha = 1.5) breaks each check.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from seqlearn.learnability.stable import kappa
from seqlearn.learnability.toy import bank_envelope, sign_quantile, toy_detection
from seqlearn.learnability.window import window_exponential

BANK = np.geomspace(0.02, 0.5, 8)  # eight time scales, 49.5 ... 1.4 steps
LAGS = np.arange(1, 81)
N_GRID = np.unique(np.geomspace(1, 1e4, 70).round().astype(int))


def _bank_run(alpha: float, replicates: int = 800, seed: int = 0):
    """The bank with sigma chosen so that the shortest lag needs about 10 samples."""
    sigma = bank_envelope(BANK, LAGS[:1])[0] * 10 ** (1 / kappa(alpha)) / sign_quantile(alpha)
    return toy_detection(BANK, LAGS, N_GRID, alpha, m=1.0, sigma=sigma, replicates=replicates, rng=seed)


def _quantile_error(alpha: float, coverage: float, R: int) -> float:
    """Relative standard error of the empirical coverage-quantile of R unit S-alpha-S draws."""
    from scipy.stats import levy_stable

    q = sign_quantile(alpha, coverage)
    return math.sqrt(coverage * (1 - coverage) / R) / (q * float(levy_stable.pdf(q, alpha, 0.0)))


def test_bank_envelope_is_the_mean_retention_by_a_loop():
    s, lags = np.array([0.1, 0.3, 0.05]), np.array([1, 2, 7, 30])
    expected = [sum((1 - sq) ** ell for sq in s) / 3 for ell in lags]
    np.testing.assert_allclose(bank_envelope(s, lags), expected, rtol=1e-14)
    np.testing.assert_allclose(bank_envelope([0.1], lags), np.exp(-lags / (-1 / math.log(0.9))), rtol=1e-12)


def test_the_gaussian_quantile_and_the_constant():
    assert sign_quantile(2.0, 0.9) == pytest.approx(math.sqrt(2) * NormalDist().inv_cdf(0.9), rel=1e-6)
    assert sign_quantile(1.5, 0.9) > sign_quantile(2.0, 0.9)  # heavier tails, a wider quantile
    d = toy_detection([0.1], [1, 2], [1, 10], 1.5, m=2.0, sigma=0.5, replicates=10)
    assert d.constant() == pytest.approx((0.5 * sign_quantile(1.5, 0.9) / 2.0) ** 3)


@pytest.mark.parametrize("alpha", [2.0, 1.5])
def test_the_detection_map_is_the_stable_cdf(alpha):
    R = 2000
    d = toy_detection(BANK, [1, 5, 20, 60], np.geomspace(1, 3000, 10).round().astype(int), alpha,
                      sigma=0.5, replicates=R, rng=3)  # fmt: skip
    exact = d.theory()
    assert exact.shape == d.p_detect.shape == (4, 10) and exact.min() < 0.8 and exact.max() > 0.99
    np.testing.assert_array_less(np.abs(d.p_detect - exact), 4 * np.sqrt(exact * (1 - exact) / R) + 1.5 / R)
    # the same map with N^(1/alpha) in place of N^(1/kappa) (alpha = 1.5: 2/3 against 1/3) is far off
    if alpha < 2:
        from scipy.stats import levy_stable

        wrong = levy_stable.cdf(d.m * d.f[:, None] * d.N_grid[None, :] ** (1 / alpha) / d.sigma, alpha, 0.0)
        assert np.abs(d.p_detect - wrong).max() > 0.1


@pytest.mark.parametrize("alpha", [2.0, 1.5])
def test_the_master_law_slope_is_one(alpha):
    d = _bank_run(alpha)
    fit = d.master_law()  # over seeds 0-7 the slope scatters by 0.03 (alpha = 2) and 0.04 (alpha = 1.5)
    assert fit.slope == pytest.approx(1.0, abs=0.15) and fit.r2 > 0.97 and fit.n >= 40
    if alpha < 2:  # on -alpha log f the slope is kappa / alpha = 1 / (alpha - 1) = 2
        assert d.master_law(exponent=alpha).slope == pytest.approx(2.0, abs=0.2)


@pytest.mark.parametrize("alpha", [2.0, 1.5])
def test_the_window_is_the_exponential_closed_form(alpha):
    R, lags = 2000, np.arange(1, 61)
    d = toy_detection([0.1], lags, np.unique(np.geomspace(1, 5000, 60).round().astype(int)), alpha,
                      sigma=1 / sign_quantile(alpha), replicates=R, rng=0)  # fmt: skip  # C = 1
    tau, C = float(d.tau[0]), d.constant()
    assert abs(C - 1.0) < 1e-9
    closed = window_exponential(d.N_grid, tau, alpha, C=C)  # (tau / kappa) ln(N / C)
    inside = closed < lags[-1]
    slack = 4 * tau * _quantile_error(alpha, d.coverage, R)  # 4 standard errors, in lags
    gap = (d.window() - closed)[inside]  # integer lags: the window is floor(closed) up to sampling
    assert gap.min() >= -1 - slack and gap.max() <= slack
    assert np.abs(d.window() - d.window_theory()).max() <= 2
    if alpha < 2:  # (tau / alpha) ln(N / C): twice as wide at alpha = 1.5
        wrong = (tau / alpha * np.log(d.N_grid / C))[inside] - closed[inside]
        assert np.abs(wrong).max() > 3 * (1 + slack)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"s": [0.0, 0.2]}, ValueError, "write gates"),
        ({"s": [1.2]}, ValueError, "write gates"),
        ({"lags": [0, 1]}, ValueError, "lags"),
        ({"N_grid": []}, ValueError, "N_grid"),
        ({"alpha": 1.0}, ValueError, "alpha"),
        ({"m": 0.0}, ValueError, "m must"),
        ({"sigma": -1.0}, ValueError, "sigma"),
        ({"coverage": 0.5}, ValueError, "coverage"),
        ({"replicates": 5}, ValueError, "replicates"),
        ({"replicates": 20.0}, TypeError, "replicates"),
        ({"rng": "seed"}, TypeError, "rng"),
    ],
)
def test_bad_input_is_refused(kwargs, error, message):
    args = {"s": [0.1], "lags": [1, 2], "N_grid": [1, 10], "alpha": 1.5, "replicates": 10, **kwargs}
    with pytest.raises(error, match=message):
        toy_detection(**args)


def test_a_master_law_needs_two_lags_inside_the_grid():
    d = toy_detection([0.1], [1, 2, 3], [1, 2], 2.0, sigma=1e-3, replicates=10)  # detected at once
    assert np.all(d.N_req == 1)
    with pytest.raises(ValueError, match="inside the grid"):
        d.master_law()
