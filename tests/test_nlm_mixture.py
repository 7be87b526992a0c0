import math

import numpy as np
import pytest

from seqlearn.nlm import MixtureReport, basics, evaluate_mixture, fit_mixture, mixture_logprobs


def two_models(T=400, seed=0, scale=1.0):
    """Log-probabilities of the same T tokens under two models that each win on some tokens."""
    rng = np.random.default_rng(seed)
    a = -scale * rng.gamma(2.0, 1.5, T)
    b = np.where(rng.random(T) < 0.5, a - scale * rng.exponential(2.0, T), a + scale * rng.exponential(1.0, T))
    return a, np.minimum(b, 0.0)


def mean_loglik(lam, a, b):
    return np.mean(np.log(lam * np.exp(a) + (1 - lam) * np.exp(b)))


def test_weight_is_the_maximiser_found_by_brute_force():
    a, b = two_models()
    lam = fit_mixture(a, b)
    grid = np.linspace(0, 1, 100_001)
    values = np.array([mean_loglik(g, a, b) for g in grid[::100]])
    coarse = grid[::100][np.argmax(values)]
    fine = grid[(grid > coarse - 1e-3) & (grid < coarse + 1e-3)]
    best = fine[np.argmax([mean_loglik(g, a, b) for g in fine])]
    assert 0 < lam < 1 and lam == pytest.approx(best, abs=2e-5)
    assert lam == pytest.approx(basics.best_interpolation_weight(np.exp(a), np.exp(b)), abs=1e-9)


def test_weight_survives_probabilities_that_underflow():
    a, b = two_models(seed=1)
    shift = -900.0  # exp(-900) is 0 in float64: both models give tiny probabilities to every token
    assert fit_mixture(a + shift, b + shift) == pytest.approx(fit_mixture(a, b), abs=1e-9)


def test_weight_at_the_ends():
    a, b = two_models(seed=2)
    better = np.maximum(a, b)
    assert fit_mixture(better, np.minimum(a, b) - 1) == 1.0
    assert fit_mixture(np.minimum(a, b) - 1, better) == 0.0


def test_mixture_logprobs_is_the_log_of_the_mixed_probabilities():
    a, b = two_models(seed=3)
    for lam in (0.0, 0.3, 1.0):
        np.testing.assert_allclose(
            mixture_logprobs(a, b, lam), np.log(lam * np.exp(a) + (1 - lam) * np.exp(b)), rtol=1e-12
        )
    tiny = mixture_logprobs(a - 2000, b - 2000, 0.3)  # no underflow to -inf
    np.testing.assert_allclose(tiny, mixture_logprobs(a, b, 0.3) - 2000, rtol=1e-12)


def test_fitted_mixture_is_at_least_as_good_as_either_model():
    a_val, b_val = two_models(seed=4)
    lam = fit_mixture(a_val, b_val)
    mixed = -mixture_logprobs(a_val, b_val, lam).mean()
    assert mixed <= min(-a_val.mean(), -b_val.mean())
    a_test, b_test = two_models(seed=5)
    report = evaluate_mixture(a_val, b_val, a_test, b_test)
    assert isinstance(report, MixtureReport) and report.lam == lam
    assert report.perplexity_a == pytest.approx(math.exp(-a_test.mean()))
    assert report.perplexity_b == pytest.approx(math.exp(-b_test.mean()))
    assert report.perplexity_mixture == pytest.approx(math.exp(-mixture_logprobs(a_test, b_test, lam).mean()))
    assert "mixture" in str(report)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda a, b: fit_mixture(a, b[:-1]), "same non-zero length"),
        (lambda a, b: fit_mixture(a[:0], b[:0]), "same non-zero length"),
        (lambda a, b: fit_mixture(-a, b), "<= 0"),
        (lambda a, b: fit_mixture(np.where(a < -1, np.nan, a), b), "NaN"),
        (lambda a, b: fit_mixture(np.full_like(a, -np.inf), np.full_like(b, -np.inf)), "probability 0"),
        (lambda a, b: mixture_logprobs(a, b, 1.5), r"\[0, 1\]"),
        (lambda a, b: mixture_logprobs(a[:, None], b[:, None], 0.5), "1-D"),
    ],
)
def test_bad_input(call, words):
    a, b = two_models(T=20)
    with pytest.raises(ValueError, match=words):
        call(a, b)


def test_a_weight_that_is_not_a_number():
    a, b = two_models(T=20)
    with pytest.raises(TypeError, match=r"lam must be a finite real number in \[0, 1\], got str"):
        mixture_logprobs(a, b, "0.5")
