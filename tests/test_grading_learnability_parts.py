"""The property-graded parts of Exercises 5: ``ecf_alpha_estimate`` and ``oriented_statistic``.

Correct answers written here without seqlearn (the notebook's recipe, another grid, another
cross-fitting) must pass every visible case and 20 fresh hidden draws; wrong ones (kappa for
alpha, a constant, a grid that ignores the scale, an orientation read off the same sequences, no
orientation) must fail, told why. The brute-force reference is held to the package's vectorised
statistic.
"""

from __future__ import annotations

import numpy as np
import pytest

from seqlearn.grading import CheckFailure
from seqlearn.grading.learnability import (
    CHECKS,
    ECF_TOLERANCE,
    EXAMPLE_ORIENTED,
    NULL_T_BOUND,
    check_ecf_alpha_estimate,
    check_oriented_statistic,
    oriented_statistic,
)
from seqlearn.learnability import masterlaw

HIDDEN_DRAWS = 20


def _failure(checker, fn, hidden=False) -> str:
    with pytest.raises(CheckFailure) as info:
        checker(fn, hidden=hidden)
    return str(info.value)


def _passes_every_draw(checker, fn, capsys) -> None:
    checker(fn)
    for _ in range(HIDDEN_DRAWS):
        checker(fn, hidden=True)
    assert capsys.readouterr().out.count("cases passed") == HIDDEN_DRAWS + 1


# ----------------------------------------------------------------------------- ecf_alpha_estimate


def _checked_samples(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.size < 20:
        raise ValueError("at least 20 samples")
    q25, q75 = np.quantile(x, [0.25, 0.75])
    if q75 <= q25:
        raise ValueError("IQR is 0")
    return x


def recipe_ecf(x):
    """The notebook's recipe: 50 points of t in [0.05, 3] / s, weighted slope, clipped to [1, 2]."""
    x = _checked_samples(x)
    q25, q75 = np.quantile(x, [0.25, 0.75])
    t = np.linspace(0.05, 3.0, 50) / ((q75 - q25) / 1.349)
    phi2 = np.abs(np.exp(1j * np.outer(t, x)).mean(axis=1)) ** 2
    keep = (phi2 > 0.01) & (phi2 < 0.95)
    log_phi2 = np.log(phi2[keep])
    w = np.sqrt(np.exp(-2.0 * (log_phi2 + 0.7) ** 2))
    A = np.column_stack([np.log(t[keep]), np.ones(keep.sum())]) * w[:, None]
    slope = np.linalg.lstsq(A, np.log(-log_phi2) * w, rcond=None)[0][0]
    return float(np.clip(slope, 1.0, 2.0))


def geometric_grid_ecf(x, *, clip=True, scaled=True):
    """Another correct estimator: 20 geometric t in [0.1, 2] / (IQR / 2), band 0.1 < |phi| < 0.9, no weights."""
    x = _checked_samples(x)
    q25, q75 = np.quantile(x, [0.25, 0.75])
    t = np.geomspace(0.1, 2.0, 20) / ((q75 - q25) / 2.0 if scaled else 1.0)
    phi = np.abs(np.exp(1j * np.outer(t, x)).mean(axis=1))
    keep = (phi > 0.1) & (phi < 0.9)
    if keep.sum() < 2:
        return 1.5
    slope = np.polyfit(np.log(t[keep]), np.log(-2.0 * np.log(phi[keep])), 1)[0]
    return float(np.clip(slope, 0.5, 2.0)) if clip else float(slope)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", [recipe_ecf, geometric_grid_ecf])
def test_correct_estimators_on_different_grids_pass_every_visible_and_hidden_case(estimator, capsys):
    _passes_every_draw(check_ecf_alpha_estimate, estimator, capsys)


def _kappa_for_alpha(x):
    alpha = recipe_ecf(x)
    return alpha / (alpha - 1.0) if alpha > 1.0 else 1e3


@pytest.mark.parametrize(
    ("wrong", "told"),
    [
        (_kappa_for_alpha, "outside (0, 2]"),
        (lambda x: (_checked_samples(x), 2.0)[1], f"more than {ECF_TOLERANCE} from the alpha"),
        (lambda x: geometric_grid_ecf(x, clip=False), "outside (0, 2]"),
        (lambda x: geometric_grid_ecf(x, scaled=False), "from the alpha|by 37 changed the estimate"),
    ],
    ids=["kappa", "constant 2", "not clipped", "fixed grid"],
)
@pytest.mark.parametrize("hidden", [False, True])
def test_wrong_estimators_fail_and_are_told_why(wrong, told, hidden):
    message = _failure(check_ecf_alpha_estimate, wrong, hidden)
    assert any(words in message for words in told.split("|"))


def test_an_estimator_that_depends_on_the_scale_fails_the_invariance():
    message = _failure(check_ecf_alpha_estimate, lambda x: recipe_ecf(x) - 1e-3 * (np.std(x) > 1e3))
    assert "multiplying the samples by 37 changed the estimate" in message


def test_the_reference_recovers_every_random_case_and_never_raises_there():
    check = CHECKS["ecf_alpha_estimate"]
    cases = [check.random_case(rng) for rng in np.random.default_rng(5).spawn(60)]
    errors = [abs(case.call(check.reference) - case.planted) for case in cases]
    assert max(errors) < ECF_TOLERANCE / 2
    alphas = np.array([case.planted for case in cases])
    assert np.any(alphas == 2.0) and np.any(alphas < 1.1) and np.all((alphas > 1.0) & (alphas <= 2.0))


# ----------------------------------------------------------------------------- oriented_statistic


def _checked_terms(phi) -> np.ndarray:
    phi = np.asarray(phi, dtype=float)
    if phi.ndim != 2 or phi.shape[0] < 6:
        raise ValueError("phi must be (N, H) with N >= 6")
    return phi


def three_fold_chi(phi):
    """The notebook's rule, vectorised: fold n mod 3 oriented by fold (n + 1) mod 3."""
    phi = _checked_terms(phi)
    fold = np.arange(phi.shape[0]) % 3
    signs = np.sign(np.stack([phi[fold == k].mean(axis=0) for k in range(3)]))
    return (phi * signs[(fold + 1) % 3]).sum(axis=1)


def halves_chi(phi):
    """Another cross-fitting: the first and second halves of the sequences orient each other."""
    phi = _checked_terms(phi)
    half = phi.shape[0] // 2
    first, second = np.sign(phi[:half].mean(axis=0)), np.sign(phi[half:].mean(axis=0))
    return np.r_[phi[:half] @ second, phi[half:] @ first]


@pytest.mark.slow
@pytest.mark.parametrize("answer", [three_fold_chi, halves_chi])
def test_correct_cross_fittings_pass_every_visible_and_hidden_case(answer, capsys):
    _passes_every_draw(check_oriented_statistic, answer, capsys)


@pytest.mark.parametrize(
    ("wrong", "told"),
    [
        (lambda phi: _checked_terms(phi) @ np.sign(_checked_terms(phi).mean(axis=0)), "with no signal"),
        (lambda phi: _checked_terms(phi).sum(axis=1), "flipping the sign of some neurons"),
        (lambda phi: three_fold_chi(phi) / _checked_terms(phi).shape[1], "sum_q sgn(m_q) phi[n, q]"),
        (lambda phi: np.abs(_checked_terms(phi)).sum(axis=1), "differs from sum_q sgn(m_q)|with no signal"),
    ],
    ids=["in-sample signs", "no orientation", "mean over neurons", "absolute values"],
)
@pytest.mark.parametrize("hidden", [False, True])
def test_wrong_statistics_fail_and_are_told_why(wrong, told, hidden):
    message = _failure(check_oriented_statistic, wrong, hidden)
    assert any(words in message for words in told.split("|"))
    if hidden:
        assert "input: withheld" in message


def test_the_brute_force_reference_equals_the_package_statistic():
    rng = np.random.default_rng(0)
    for N, H in [(6, 1), (7, 3), (20, 5), (61, 4)]:
        phi = rng.normal(0.3, 1.0, size=(N, H))
        expected = masterlaw.oriented_statistic(phi[:, None, :])[:, 0]  # folds n mod 3, oriented by the next
        np.testing.assert_allclose(oriented_statistic(phi), expected, rtol=1e-12, atol=1e-12)


def test_the_worked_example_by_hand():
    chi = oriented_statistic(EXAMPLE_ORIENTED)  # every fold orients by (+1, -1): chi = phi_1 - phi_2
    assert chi.tolist() == [3.0, 4.0, 5.0, 3.0, 3.0, 4.0]
    t = chi.mean() / (chi.std(ddof=1) / np.sqrt(6))
    assert t == pytest.approx(11.0, abs=0.01)


@pytest.mark.parametrize("phi", [EXAMPLE_ORIENTED[:5], EXAMPLE_ORIENTED[:, 0], np.full((6, 2), np.nan)])
def test_the_reference_rejects_bad_terms(phi):
    with pytest.raises(ValueError, match="phi"):
        oriented_statistic(phi)


def test_random_cases_hold_planted_signals_and_nulls_of_many_neurons():
    check = CHECKS["oriented_statistic"]
    cases = [check.random_case(rng) for rng in np.random.default_rng(1).spawn(100)]
    kinds = [case.kind for case in cases]
    assert 0.4 < kinds.count("planted") / len(cases) < 0.8 and "null" in kinds
    in_sample_t = []
    for case in cases:
        phi = case.inputs["phi"]
        if case.kind == "planted":  # every held-out sign is the planted one
            np.testing.assert_allclose(three_fold_chi(phi), phi @ np.sign(case.planted), rtol=1e-12)
        else:
            in_sample = phi @ np.sign(phi.mean(axis=0))
            in_sample_t.append(in_sample.mean() / (in_sample.std(ddof=1) / np.sqrt(len(phi))))
    assert min(in_sample_t) > NULL_T_BOUND + 1  # about 0.8 sqrt(H) >= 8: the null separates the two
