"""seqlearn.learnability.stable against closed forms and scipy.stats.levy_stable (the brief's 4.4, items 1 and 7)."""

import numpy as np
import pytest
from scipy import stats

from seqlearn.learnability import stable
from seqlearn.learnability.stable import (
    BootstrapCI,
    StableFit,
    bootstrap_alpha,
    ecf_alpha,
    kappa,
    mcculloch_alpha,
    sample_stable,
)

ALPHAS = [1.2, 1.5, 1.8, 2.0]


@pytest.mark.parametrize(("alpha", "expected"), [(2.0, 2.0), (1.5, 3.0), (1.25, 5.0), (1.8, 2.25)])
def test_kappa_is_alpha_over_alpha_minus_one(alpha, expected):
    assert kappa(alpha) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("alpha", [1.2, 1.5, 1.8])
def test_sampler_matches_scipy_levy_stable_in_distribution(alpha):
    x = sample_stable(alpha, 4000, scale=2.0, rng=11)
    assert x.shape == (4000,) and x.dtype == np.float64
    assert stats.kstest(x, stats.levy_stable(alpha, 0.0, scale=2.0).cdf).pvalue > 0.01


def test_sampler_endpoints_are_the_gaussian_and_the_cauchy():
    # alpha = 2: exp(-sigma^2 u^2) is N(0, 2 sigma^2); alpha = 1: a Cauchy of scale sigma
    gauss = sample_stable(2.0, 20_000, scale=1.5, rng=1)
    assert stats.kstest(gauss, stats.norm(scale=1.5 * np.sqrt(2)).cdf).pvalue > 0.01
    cauchy = sample_stable(1.0, 20_000, scale=0.5, rng=2)
    assert stats.kstest(cauchy, stats.cauchy(scale=0.5).cdf).pvalue > 0.01


def test_sampler_is_reproducible_and_takes_a_generator():
    np.testing.assert_array_equal(sample_stable(1.5, 10, rng=3), sample_stable(1.5, 10, rng=3))
    rng = np.random.default_rng(3)
    np.testing.assert_array_equal(sample_stable(1.5, 10, rng=rng), sample_stable(1.5, 10, rng=3))
    assert sample_stable(1.5, 0, rng=0).shape == (0,)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("estimator", [ecf_alpha, mcculloch_alpha])
def test_estimators_recover_alpha_and_sigma_on_20000_samples(alpha, estimator):
    x = sample_stable(alpha, 20_000, scale=1.5, rng=2026)
    fit = estimator(x)
    assert isinstance(fit, StableFit)
    assert abs(fit.alpha - alpha) < 0.05
    assert fit.sigma == pytest.approx(1.5, rel=0.05)
    assert 1.0 <= fit.alpha <= 2.0


def test_estimators_on_scipy_samples_and_the_fit_methods():
    x = stats.levy_stable.rvs(1.5, 0.0, scale=0.3, size=20_000, random_state=5)
    for fit, method in [(ecf_alpha(x), "ecf"), (mcculloch_alpha(x), "mcculloch")]:
        assert fit.method == method
        assert abs(fit.alpha - 1.5) < 0.05 and fit.sigma == pytest.approx(0.3, rel=0.05)


@pytest.mark.parametrize("alpha", [1.0125, 1.3125, 1.5375, 1.7625, 1.9875])  # between the table's nodes
def test_mcculloch_table_inverts_scipy_quantiles_between_its_nodes(alpha):
    q75, q95 = stats.levy_stable.ppf([0.75, 0.95], alpha, 0.0)
    alpha_of_nu, q75_of_alpha, _, _ = stable._mcculloch_table()
    assert float(alpha_of_nu(q95 / q75)) == pytest.approx(alpha, abs=2e-3)
    assert float(q75_of_alpha(alpha)) == pytest.approx(q75, rel=1e-3)


def test_mcculloch_endpoints_are_cauchy_and_gaussian():
    _, q75_of_alpha, nu_2, nu_1 = stable._mcculloch_table()
    assert nu_1 == pytest.approx(np.tan(0.45 * np.pi), rel=1e-12)  # Cauchy: q95 / q75 = tan(0.45 pi) / 1
    assert nu_2 == pytest.approx(stats.norm.ppf(0.95) / stats.norm.ppf(0.75), rel=1e-6)
    assert float(q75_of_alpha(2.0)) == pytest.approx(np.sqrt(2) * stats.norm.ppf(0.75), rel=1e-6)


def test_ecf_falls_back_to_mcculloch_when_too_few_points_are_usable(monkeypatch):
    x = sample_stable(1.5, 2000, rng=4)
    monkeypatch.setattr(stable, "_usable", lambda phi2: None)
    assert ecf_alpha(x) == mcculloch_alpha(x)
    assert ecf_alpha(x).method == "mcculloch"


def test_ecf_uses_the_relaxed_band_when_the_strict_one_is_thin():
    phi2 = np.array([0.0001, 0.005, 0.009, 0.96, 0.97, 0.99, 0.9995])
    np.testing.assert_array_equal(stable._usable(phi2), [False, True, True, True, True, True, False])
    assert stable._usable(np.array([0.5, 0.00001, 0.9999])) is None


def test_bootstrap_interval_covers_the_truth_and_contains_the_estimate():
    x = sample_stable(1.5, 4000, rng=7)
    ci = bootstrap_alpha(x, "ecf", n_boot=60, rng=1)
    assert isinstance(ci, BootstrapCI)
    assert ci.low <= 1.5 <= ci.high and ci.low <= ci.alpha <= ci.high
    assert ci.high - ci.low < 0.3
    assert ci == bootstrap_alpha(x, lambda s: ecf_alpha(s).alpha, n_boot=60, rng=1)
    mc = bootstrap_alpha(x, "mcculloch", n_boot=60, rng=1)
    assert mc.low <= 1.5 <= mc.high


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: kappa(1.0), ValueError, "alpha must be"),
        (lambda: kappa(2.5), ValueError, "alpha must be"),
        (lambda: kappa("2"), TypeError, "alpha must be"),
        (lambda: sample_stable(0.0, 10), ValueError, "alpha"),
        (lambda: sample_stable(1.5, -1), ValueError, "n must be"),
        (lambda: sample_stable(1.5, 10.0), TypeError, "n must be"),
        (lambda: sample_stable(1.5, 10, scale=0), ValueError, "scale"),
        (lambda: sample_stable(1.5, 10, rng="x"), TypeError, "rng"),
        (lambda: ecf_alpha(np.ones((10, 10))), ValueError, "1-D"),
        (lambda: ecf_alpha([1.0, 2.0]), ValueError, "at least 20 samples"),
        (lambda: ecf_alpha([np.nan] * 30), ValueError, "finite"),
        (lambda: ecf_alpha("abc"), TypeError, "x must be"),
        (lambda: ecf_alpha(np.zeros(30)), ValueError, "interquartile"),
        (lambda: mcculloch_alpha(np.r_[np.zeros(30), 1.0]), ValueError, "interquartile"),
        (lambda: bootstrap_alpha(np.arange(30.0), "mle"), ValueError, "estimator must be one of"),
        (lambda: bootstrap_alpha(np.arange(30.0), 3), TypeError, "estimator must be"),
        (lambda: bootstrap_alpha(np.arange(30.0), n_boot=1), ValueError, "n_boot"),
        (lambda: bootstrap_alpha(np.arange(30.0), level=1.0), ValueError, "level"),
    ],
)
def test_bad_input_is_refused_clearly(call, error, match):
    with pytest.raises(error, match=match):
        call()
