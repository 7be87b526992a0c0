"""The cross-fitted master-law test: orientation, the sign-flip null, the three slopes.

References: the orientation by explicit loops (the terms' loop is in test_learnability_pipeline.py);
the null's t over many seeds; a planted signal whose slope is known (1), and noise that scales with
f, where the naive reading cancels to slope 0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from seqlearn.learnability.masterlaw import (
    cross_fitted_orientation,
    fold_labels,
    master_law_test,
    oriented_statistic,
    sign_flip_null,
)

F_EXP = np.exp(-np.arange(2, 50, 4) / 20.0)  # an exponential envelope over 12 lags, 0.9 ... 0.1


def _planted(N: int, H: int, f: np.ndarray, noise, rng) -> np.ndarray:
    """Terms a_q f(l) + noise(l) Z, two thirds of the a_q positive: (N, n_lags, H)."""
    a = rng.uniform(1.0, 2.0, H) * np.where(np.arange(H) % 3 == 2, -1.0, 1.0)  # (H,)
    return a[None, None, :] * f[None, :, None] + noise[None, :, None] * rng.standard_normal((N, f.size, H))


def _t_values(n_runs: int, statistic, N: int = 600, H: int = 8) -> np.ndarray:
    """t of ``statistic(terms, run)`` over ``n_runs`` zero-mean correlated-neuron term sets: ``(n_runs, 3)``."""
    rng = np.random.default_rng(0)
    mix = np.linalg.cholesky(0.7 * np.eye(H) + 0.3)  # neurons correlated 0.3
    t = []
    for run in range(n_runs):
        chi = statistic(rng.standard_normal((N, 3, H)) @ mix.T, run)
        t.append(chi.mean(0) / (chi.std(0, ddof=1) / math.sqrt(N)))
    return np.array(t)


# --- orientation and the null ---------------------------------------------------------------------


def test_orientation_by_a_loop():
    rng = np.random.default_rng(1)
    N, L, H = 11, 2, 3
    phi = rng.standard_normal((N, L, H)) + 0.3
    folds = np.array([0, 1, 2, 0, 1, 2, 2, 1, 0, 0, 1])
    chi = oriented_statistic(phi, folds)
    for n in range(N):
        donor = [m for m in range(N) if folds[m] == (folds[n] + 1) % 3]  # the fold that orients n
        for i in range(L):
            expected = 0.0
            for q in range(H):
                expected += math.copysign(1.0, sum(phi[m, i, q] for m in donor)) * phi[n, i, q]
            assert chi[n, i] == pytest.approx(expected, rel=1e-12, abs=1e-15)
    two = np.arange(N) % 2  # two folds orient each other
    s = cross_fitted_orientation(phi, two)
    np.testing.assert_array_equal(s[0], np.sign(phi[1::2].mean(0)))
    np.testing.assert_array_equal(s[1], np.sign(phi[0::2].mean(0)))


def test_fold_labels_are_balanced_and_seeded():
    np.testing.assert_array_equal(fold_labels(7), [0, 1, 2, 0, 1, 2, 0])
    shuffled = fold_labels(10, 3, seed=4)
    assert np.bincount(shuffled).tolist() == [4, 3, 3]
    np.testing.assert_array_equal(shuffled, fold_labels(10, 3, seed=4))
    assert not np.array_equal(shuffled, fold_labels(10, 3))


def test_without_signal_t_is_standard_and_two_folds_widen_it():
    three = _t_values(400, lambda phi, run: oriented_statistic(phi))
    assert abs(three.mean()) < 0.1 and 0.8 < three.std() < 1.1
    assert (np.abs(three) > 3).mean() < 0.01  # N(0, 1): 0.27 %
    # two folds oriented by each other share sum_q |mean_A| |mean_B|: t spreads wider than N(0, 1)
    two = _t_values(400, lambda phi, run: oriented_statistic(phi, np.arange(phi.shape[0]) % 2))
    assert 1.1 < two.std() < 1.45


def test_the_sign_flip_null_has_no_signal_even_where_the_terms_do():
    rng = np.random.default_rng(2)
    phi = _planted(600, 8, np.array([1.0, 0.5, 0.2]), np.full(3, 1.0), rng)  # strong signal at every lag
    chi = oriented_statistic(phi)
    assert np.all(chi.mean(0) / (chi.std(0, ddof=1) / math.sqrt(600)) > 10)
    t = _t_values(300, lambda _, run: sign_flip_null(phi, seed=run))
    assert abs(t.mean()) < 0.15 and t.std() < 1.15 and (np.abs(t) > 3).mean() < 0.01
    np.testing.assert_array_equal(sign_flip_null(phi, seed=5), sign_flip_null(phi, seed=5))


# --- the three slopes ------------------------------------------------------------------------------


def test_a_planted_signal_with_constant_noise_has_slope_one():
    phi = _planted(3000, 8, F_EXP, np.full(F_EXP.size, 1.0), np.random.default_rng(3))
    test = master_law_test(phi, F_EXP)
    assert test.oriented.fit.slope == pytest.approx(1.0, abs=0.05) and test.oriented.fit.r2 > 0.99
    assert np.all(test.oriented.t > 5)
    assert np.ptp(test.oriented.scale) == 0.0  # one sigma_0 for every lag
    assert test.null_slopes.shape == (20,) and test.null_slopes[0] == test.null.fit.slope
    # the null keeps |a_q f + noise|, so its spread follows f a little (measured 0.30 +- 0.11), far from 1
    assert np.median(test.null_slopes) < 0.6
    assert test.naive.fit.slope == pytest.approx(1.0, abs=0.1)  # noise that does not follow f: nothing cancels
    assert np.abs(test.null.t).max() < 4


def test_noise_that_scales_with_f_cancels_the_naive_slope_and_not_the_oriented_one():
    phi = _planted(3000, 8, F_EXP, F_EXP, np.random.default_rng(4))
    test = master_law_test(phi, F_EXP)
    assert abs(test.naive.fit.slope) < 0.1  # mean and spread both follow f: N* is flat
    assert test.spread_exponent().slope == pytest.approx(1.0, abs=0.05)
    assert test.oriented.fit.slope == pytest.approx(1.0, abs=0.05)
    assert np.median(test.null_slopes) == pytest.approx(1.0, abs=0.2)  # the null reads the noise's own f back
    assert np.all(np.abs(test.oriented.t) > 10 * np.abs(test.null.t).max())  # ... but its |t| says "no signal"
    N_star = (20.0 * test.oriented.scale / np.abs(test.oriented.mean)) ** 2
    np.testing.assert_allclose(test.oriented.N_star, N_star)
    strong = test.slope_over(np.arange(F_EXP.size) < 6)
    assert strong.n == 6 and strong.slope == pytest.approx(1.0, abs=0.1)


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "terms, f, kwargs, message",
    [
        (np.zeros((12, 3)), np.ones(3), {}, "terms must be 3-D"),
        (np.zeros((12, 3, 2)), np.ones(4), {}, "one value per lag"),
        (np.zeros((12, 3, 2)), np.array([1.0, math.nan, 0.5]), {}, "f must be finite"),
        (np.zeros((12, 3, 2)), np.array([1.0, 0.0, 0.5]), {}, "f must hold values > 0"),
        (np.full((12, 3, 2), math.nan), np.ones(3), {}, "terms must be finite"),
        (np.zeros((5, 3, 2)), np.ones(3), {}, "at least 2 folds"),
        (np.zeros((12, 3, 2)), np.ones(3), {"folds": np.zeros(12, int)}, "at least 2 folds"),
        (np.zeros((12, 3, 2)), np.ones(3), {"folds": np.r_[np.zeros(11, int), 1]}, "sizes \\[11, 1\\]"),
        (np.zeros((12, 3, 2)), np.ones(3), {"folds": np.arange(6) % 2}, "one label per sequence"),
        (np.zeros((12, 3, 2)), np.ones(3), {"kappa": 1.5}, "kappa"),
        (np.zeros((12, 3, 2)), np.ones(3), {"eps": 0.0}, "eps"),
    ],
)
def test_bad_input_is_refused(terms, f, kwargs, message):
    with pytest.raises(ValueError, match=message):
        master_law_test(terms, f, **kwargs)


def test_bad_masks_and_kinds_are_refused():
    test = master_law_test(_planted(60, 4, F_EXP, np.ones(F_EXP.size), np.random.default_rng(0)), F_EXP)
    with pytest.raises(ValueError, match="boolean mask"):
        test.slope_over(np.ones(3, bool))
    with pytest.raises(ValueError, match="which"):
        test.slope_over(np.ones(F_EXP.size, bool), which="raw")
    with pytest.raises(TypeError, match="terms"):
        oriented_statistic("terms")
