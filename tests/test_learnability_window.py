"""seqlearn.learnability.window vs closed forms, root finding and hand-made tables (brief 4.4, items 5, 6, 8, 9)."""

import numpy as np
import pytest
from scipy import optimize

from seqlearn.learnability.stable import ecf_alpha, sample_stable
from seqlearn.learnability.window import (
    MasterLaw,
    learnability_window,
    master_law_monte_carlo,
    required_samples,
    required_samples_continuous,
    snr,
    window_exponential,
    window_logarithmic,
    window_power,
)


def test_snr_is_the_formula_for_each_lag_and_sample_size():
    got = snr([0.5, -1.0], [2.0, 1.5], [1.0, 2.0], [4, 100])
    expected = [[0.5 * 2.0, 0.5 * 10.0], [1.0 * 4 ** (1 / 3) / 2.0, 1.0 * 100 ** (1 / 3) / 2.0]]
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert snr(0.5, 2.0, 1.0, 16.0) == pytest.approx(2.0)
    assert snr(np.ones((3, 2)), 2.0, 1.0, [1, 4, 9, 16]).shape == (3, 2, 4)


def test_required_samples_is_the_first_integer_above_the_continuous_root():
    mean = np.array([0.35, -0.07, 0.8, 0.0, 1e-4])  # roots N* away from integers
    alpha = np.array([2.0, 1.5, 1.8, 1.7, 2.0])
    sigma = np.array([1.0, 0.5, 2.0, 1.0, 1.0])
    eps = 3.0
    N_grid = np.arange(1, 100_001)
    N_star = (eps * sigma[:3] / np.abs(mean[:3])) ** (alpha[:3] / (alpha[:3] - 1))  # by hand: SNR(N*) = eps
    N_req = required_samples(mean, alpha, sigma, N_grid, eps)
    assert N_req.dtype == np.int64
    np.testing.assert_array_equal(N_req[:3], np.floor(N_star) + 1)  # SNR > eps strictly
    np.testing.assert_array_equal(N_req[3:], [-1, -1])  # no signal; beyond the grid
    cont = required_samples_continuous(mean, alpha, sigma, eps)
    np.testing.assert_allclose(cont[:3], N_star, rtol=1e-12)
    assert cont[3] == np.inf
    for i in range(3):
        assert snr(mean[i], alpha[i], sigma[i], cont[i]) == pytest.approx(eps, rel=1e-12)


def test_required_samples_on_a_coarse_unsorted_grid():
    N_req = required_samples([1.0, 1.0], 2.0, [1.0, 4.0], [1000, 10, 100], eps=2.0)  # N* = 4 and 64
    np.testing.assert_array_equal(N_req, [10, 100])


LAGS = [1, 2, 4, 8, 16, 32]
N_REQ = [10, -1, 50, 1000, 4000, -1]  # lag 2 never detectable, lag 32 never; not monotone in the lag


@pytest.mark.parametrize(
    ("N", "H_N"), [(5, 0), (10, 1), (49, 1), (50, 4), (999, 4), (1000, 8), (3999, 8), (4000, 16), (10**9, 16)]
)
def test_window_on_a_hand_made_table(N, H_N):
    assert learnability_window(LAGS, N_REQ, N) == H_N


def test_window_counts_a_non_contiguous_set_and_vectorises_over_N():
    lags = [2, 3, 5, 7, 11]
    N_req = [100, -1, 5000, 20, 0]  # lag 7 qualifies at N = 20 while 3 and 5 do not
    np.testing.assert_array_equal(learnability_window(lags, N_req, [10, 20, 100, 5000]), [0, 7, 7, 7])
    assert isinstance(learnability_window(lags, N_req, 20), int)
    assert learnability_window([1, 2], [-1, -1], [1e6]).tolist() == [0]


@pytest.mark.parametrize(
    ("window", "shape", "alpha", "expected"),
    [
        (window_exponential, 20.0, 2.0, 92.1),
        (window_exponential, 20.0, 1.5, 61.4),
        (window_power, 1.0, 2.0, 100.0),
        (window_power, 1.0, 1.5, 21.5),
    ],
)
def test_closed_forms_give_the_briefs_worked_numbers(window, shape, alpha, expected):
    assert round(float(window(1e4, shape, alpha)), 1) == expected


ENVELOPES = {  # ln f as a function of u = ln(l), and a bracket for u
    window_exponential: (lambda u, tau, A: np.log(A) - np.exp(u) / tau, 20.0, (-20.0, 10.0)),
    window_power: (lambda u, beta, A: np.log(A) - beta * u, 0.7, (-20.0, 30.0)),
    window_logarithmic: (lambda u, gamma, A: np.log(A) - gamma * np.log(u), 2.0, (1e-12, 700.0)),
}


@pytest.mark.parametrize("window", list(ENVELOPES))
@pytest.mark.parametrize(("alpha", "A", "C"), [(2.0, 1.0, 1.0), (1.5, 2.0, 3.0), (1.2, 0.8, 0.5)])
def test_closed_forms_invert_the_master_law_numerically(window, alpha, A, C):
    log_f, shape, (lo, hi) = ENVELOPES[window]
    kappa = alpha / (alpha - 1)
    for N in [1e2, 1e3, 1e4]:
        # H_N solves C f(l)^(-kappa) = N; in logs, for u = ln H_N
        u = optimize.brentq(lambda u, N=N: np.log(C) - kappa * log_f(u, shape, A) - np.log(N), lo, hi, xtol=1e-13)
        assert np.log(float(window(N, shape, alpha, A, C))) == pytest.approx(u, rel=1e-8, abs=1e-8)


def test_heavier_tails_shrink_every_window():
    N = np.geomspace(1e2, 1e6, 9)
    for window, shape in [(window_exponential, 20.0), (window_power, 1.0), (window_logarithmic, 2.0)]:
        assert np.all(window(N, shape, 1.5) < window(N, shape, 2.0))
        assert np.all(np.diff(window(N, shape, 1.5)) > 0)


def test_logarithmic_envelope_window_outgrows_every_power_of_log_N():
    N = np.geomspace(1e2, 1e8, 13)
    log_H = np.log(window_logarithmic(N, 2.0, 1.5))
    ratio = log_H / np.log(np.log(N))  # H_N = (log N)^ratio: the exponent keeps growing
    assert np.all(np.diff(ratio) > 0)
    assert ratio[-1] > 2 * ratio[0]
    # the exponential envelope's window is linear in log N, the power law's a fixed power of N
    H_exp = window_exponential(N, 20.0, 1.5)
    np.testing.assert_allclose(np.diff(H_exp) / np.diff(np.log(N)), 20.0 / 3.0, rtol=1e-12)
    H_pow = window_power(N, 1.0, 1.5)
    np.testing.assert_allclose(np.diff(np.log(H_pow)) / np.diff(np.log(N)), 1.0 / 3.0, rtol=1e-12)


@pytest.mark.parametrize(("alpha", "m_min"), [(1.6, 0.2), (2.0, 0.1)])
def test_monte_carlo_master_law_slope_is_kappa(alpha, m_min):
    m = np.geomspace(m_min, 1.0, 12)
    law = master_law_monte_carlo(alpha, m, np.arange(1, 4097), replicates=1000, rng=2026)
    assert isinstance(law, MasterLaw)
    assert np.all(law.N_req > 0)
    assert np.all(np.diff(law.N_req) <= 0)  # a larger mean never needs more samples
    assert law.kappa == pytest.approx(alpha / (alpha - 1))
    assert abs(law.slope - law.kappa) < 0.4


def test_monte_carlo_master_law_matches_the_gaussian_prediction():
    # alpha = 2, sigma = 1: the noise mean is N(0, 2 / N); detected in 90% of runs once
    # sqrt(2 / N) z_0.9 < m / 2, i.e. N > (2 sqrt(2) z_0.9 / m)^2
    from scipy import stats

    m = np.array([1.0, 0.5, 0.25])
    law = master_law_monte_carlo(2.0, m, np.arange(1, 2001), replicates=4000, rng=1)
    predicted = (2 * np.sqrt(2) * stats.norm.ppf(0.9) / m) ** 2
    np.testing.assert_allclose(law.N_req, predicted, rtol=0.15)


@pytest.mark.parametrize("alpha", [1.5, 2.0])
def test_null_calibration_declares_few_noise_lags_detectable(alpha):
    L, n, eps = 200, 2000, 20.0
    psi = sample_stable(alpha, L * n, scale=0.7, rng=9).reshape(L, n)  # pure noise: no lag has signal
    fits = [ecf_alpha(row) for row in psi]
    mean = psi.mean(axis=1)
    a_hat = np.clip([f.alpha for f in fits], 1.01, 2.0)
    s_hat = [f.sigma for f in fits]
    N_grid = np.unique(np.geomspace(10, 2 * n, 30).astype(int))  # N_max = 2 n
    false = np.mean(required_samples(mean, a_hat, s_hat, N_grid, eps) > 0)
    assert false < 0.05
    # the same noise with a lax threshold and a grid far beyond the samples: mostly "detectable"
    lax = np.mean(required_samples(mean, a_hat, s_hat, np.geomspace(10, 1000 * n, 30).astype(int), 0.1) > 0)
    assert lax > 0.5


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: snr(1.0, 1.0, 1.0, 10), ValueError, r"alpha must hold values in \(1, 2\]"),
        (lambda: snr(1.0, 2.0, 0.0, 10), ValueError, "sigma must hold values > 0"),
        (lambda: snr(1.0, 2.0, 1.0, 0), ValueError, "N must hold values > 0"),
        (lambda: snr([1.0, 2.0], [2.0, 2.0, 2.0], 1.0, 10), ValueError, "broadcast"),
        (lambda: snr("a", 2.0, 1.0, 10), TypeError, "mean must be"),
        (lambda: required_samples(1.0, 2.0, 1.0, [], 1.0), ValueError, "N_grid must hold"),
        (lambda: required_samples(1.0, 2.0, 1.0, [1.5, 2.0], 1.0), TypeError, "N_grid must be"),
        (lambda: required_samples(1.0, 2.0, 1.0, [0, 1], 1.0), ValueError, "N_grid must hold integers >= 1"),
        (lambda: required_samples(1.0, 2.0, 1.0, [1], 0.0), ValueError, "eps must be"),
        (lambda: learnability_window([1, 2], [1], 10), ValueError, "N_req must have shape"),
        (lambda: learnability_window([0, 2], [1, 1], 10), ValueError, "lags must hold"),
        (lambda: learnability_window([1, 2], [1, -2], 10), ValueError, "N_req must hold"),
        (lambda: learnability_window([1, 2], [1, 1], [[10]]), ValueError, "N must be 0-D or 1-D"),
        (lambda: window_exponential(1e4, -1.0, 2.0), ValueError, "tau must be"),
        (lambda: window_power(1e4, 1.0, 1.0), ValueError, "alpha must be"),
        (lambda: window_logarithmic(1e4, 1.0, 2.0, A=0.0), ValueError, "A must be"),
        (lambda: master_law_monte_carlo(2.0, [0.5], [1, 2]), ValueError, "at least 2 means"),
        (lambda: master_law_monte_carlo(2.0, [0.5, 1.0], [1, 2], replicates=5), ValueError, "replicates"),
        (lambda: master_law_monte_carlo(2.0, [0.5, 1.0], [1, 2], coverage=1.0), ValueError, "coverage"),
        (lambda: master_law_monte_carlo(2.0, [1e-3, 2e-3], [1, 2], rng=0), ValueError, "widen N_grid"),
    ],
)
def test_bad_input_is_refused_clearly(call, error, match):
    with pytest.raises(error, match=match):
        call()
