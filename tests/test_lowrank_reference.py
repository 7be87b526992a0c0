"""Chapter 6's exercise references (seqlearn.lowrank.reference) against the package's implementations.

The overlaps against :func:`seqlearn.lowrank.overlaps.overlaps` and the round trip through
:func:`~seqlearn.lowrank.overlaps.vectors_with_overlaps`; the latent output against
:func:`seqlearn.lowrank.linear.latent_output` on the filter task and against the full network
(:func:`~seqlearn.lowrank.linear.network_output`) on vectors with given overlaps, impulse and white
noise; the metric against :func:`~seqlearn.lowrank.overlaps.metric` and against :math:`N D D^\\top`
from the Jacobian of the overlaps; the Euler step against :func:`~seqlearn.lowrank.overlaps.ode_step`
and, to first order, against the exact GD map; :math:`I_1` against
:func:`~seqlearn.lowrank.overlaps.invariants` and its conservation. Then the bad inputs each
refuses, and the guard.
"""

import numpy as np
import pytest

from seqlearn.guard import ReferenceCallError, student_code
from seqlearn.lowrank import reference as ref
from seqlearn.lowrank.linear import (
    FilterTask,
    exact_step,
    filter_task,
    latent_gradient,
    latent_output,
    network_output,
    solution_set,
)
from seqlearn.lowrank.overlaps import (
    INVISIBLE,
    OVERLAPS,
    VISIBLE,
    gram,
    index,
    invariants,
    metric,
    ode_step,
    overlaps,
    vectors_with_overlaps,
)

# theta_2 of the brief: visible overlaps of a random init, sigma_mu = 0.8, sigma_uu = 2.048
THETA_2 = np.array([0.03, -0.05, 0.04, 0.06, 0.8, 0.02, 1.0, 2.048, 1.0, 1.0])


def _sigmas(n=8, seed=0):
    """n sets of overlaps of real vectors, (n, 10), positive-definite Gram matrices."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4, 6)) * rng.uniform(0.5, 2.0, size=(n, 4, 1))
    return overlaps(*np.moveaxis(X, 1, 0))


def _theta(sigma, N, seed):
    m, u, v, z = vectors_with_overlaps(sigma, N, rng=seed)
    return np.stack([m, u, v, z])


# ----------------------------------------------------------------------------- overlaps


@pytest.mark.parametrize("N", [1, 4, 37, 500])
def test_overlaps_from_vectors_equals_overlaps(N):
    m, u, v, z = np.random.default_rng(N).normal(size=(4, N)) * [[1.0], [2.0], [0.5], [3.0]]
    got = ref.overlaps_from_vectors(m, u, v, z)
    assert got.shape == (10,) and got.dtype == np.float64
    np.testing.assert_allclose(got, overlaps(m, u, v, z), rtol=1e-13, atol=1e-15)
    assert got[OVERLAPS.index("zv")] == pytest.approx(z @ v / N, rel=1e-13)


def test_overlaps_from_vectors_recovers_the_overlaps_vectors_were_built_with():
    for sigma in [THETA_2, *_sigmas(4)]:
        m, u, v, z = vectors_with_overlaps(sigma, 50, rng=1)
        np.testing.assert_allclose(ref.overlaps_from_vectors(m, u, v, z), sigma, rtol=1e-12, atol=1e-13)


def test_overlaps_from_vectors_follows_the_packages_order():
    """The exercises' order is the package's: its visible overlaps first, then the invisible ones."""
    from seqlearn.grading.lowrank import OVERLAP_ORDER

    assert ref.OVERLAPS is OVERLAPS and tuple(OVERLAP_ORDER) == OVERLAPS
    assert OVERLAPS[:4] == VISIBLE["linear"] and OVERLAPS[4:] == INVISIBLE["linear"]


# ----------------------------------------------------------------------------- the latent output


@pytest.mark.parametrize(("c_star", "dt", "T"), [(0.2, 0.05, 400), (0.4, 0.05, 400), (0.3, 0.2, 37), (0.1, 1.0, 12)])
def test_effective_output_equals_latent_output_on_the_filter_task(c_star, dt, T):
    task = filter_task(c_star, dt=dt, T=T)
    for sigma in [THETA_2, *_sigmas(3, seed=int(100 * c_star))]:
        sigma = sigma.copy()
        sigma[3] = np.clip(sigma[3], -1.0, 1.2)  # a recurrence that does not explode over 400 steps
        got = ref.effective_output(sigma[:4], task.x, task.dt)
        assert got.shape == (T,) and got.dtype == np.float64
        np.testing.assert_allclose(got, latent_output(sigma, task), rtol=1e-10, atol=1e-10)


def test_effective_output_is_zero_loss_on_the_solution_set():
    zm, vu, product = solution_set(0.2, 0.05)
    task = filter_task(0.2, dt=0.05, T=400)
    for zu in (0.5, 1.0, 3.0):  # the hyperbola sigma_zu sigma_vm = sigma_vu
        f = ref.effective_output([zm, zu, product / zu, vu], task.x, task.dt)
        np.testing.assert_allclose(f, task.y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_effective_output_equals_the_full_network_built_with_vectors_with_overlaps(seed):
    rng = np.random.default_rng(seed)
    sigma = _sigmas(1, seed=seed + 10)[0]
    theta = _theta(sigma, N=60, seed=seed)
    dt = float(rng.uniform(0.05, 0.5))
    for x in (np.r_[1.0 / dt, np.zeros(79)], rng.normal(size=80), np.ones(80)):
        task = FilterTask(x, np.zeros_like(x), dt)
        full = network_output(theta, task)
        np.testing.assert_allclose(ref.effective_output(sigma[:4], x, dt), full, rtol=1e-10, atol=1e-10)
    assert np.abs(full).max() > 0.1, "the network's output is not trivially small"


# ----------------------------------------------------------------------------- the metric and the step


def test_metric_bar_equals_metric():
    for sigma in [THETA_2, *_sigmas(6)]:
        got = ref.metric_bar(sigma)
        assert got.shape == (10, 10) and got.dtype == np.float64
        np.testing.assert_allclose(got, metric(sigma), rtol=1e-14, atol=1e-15)
        np.testing.assert_array_equal(got, got.T)


def test_metric_bar_is_N_D_D_transpose():
    """G-bar = N D D^T with D = d sigma / d theta, the Jacobian of the overlaps in the 4N parameters."""
    N = 7
    m, u, v, z = np.random.default_rng(3).normal(size=(4, N))
    vec = {"m": m, "u": u, "v": v, "z": z}
    slot = {name: i for i, name in enumerate("muvz")}
    D = np.zeros((10, 4, N))
    for i, (a, b) in enumerate(OVERLAPS):
        D[i, slot[a]] += vec[b] / N
        D[i, slot[b]] += vec[a] / N
    D = D.reshape(10, 4 * N)
    sigma = ref.overlaps_from_vectors(m, u, v, z)
    np.testing.assert_allclose(ref.metric_bar(sigma), N * D @ D.T, rtol=1e-12, atol=1e-14)
    G = ref.metric_bar(sigma)
    mm, zm = OVERLAPS.index("mm"), OVERLAPS.index("zm")
    assert G[mm, mm] == pytest.approx(4 * sigma[mm]) and G[mm, zm] == pytest.approx(2 * sigma[zm])


def _linear_gradients(sigmas, seed=0):
    grad = np.zeros_like(sigmas)
    grad[:, index(VISIBLE["linear"])] = np.random.default_rng(seed).normal(size=(len(sigmas), 4))
    return grad


@pytest.mark.parametrize("eta", [0.0, 1e-3, 0.1, 2.0])
def test_overlap_ode_step_equals_ode_step(eta):
    sigmas = _sigmas(6)
    grads = np.random.default_rng(1).normal(size=sigmas.shape)  # every component: any loss
    for sigma, grad in zip(sigmas, grads):
        got = ref.overlap_ode_step(sigma, grad, eta)
        assert got.shape == (10,) and got.dtype == np.float64 and not np.shares_memory(got, sigma)
        np.testing.assert_allclose(got, ode_step(sigma, grad, eta), rtol=1e-13, atol=1e-14)


def test_overlap_ode_step_is_the_exact_gd_map_to_first_order():
    sigma, task = THETA_2, filter_task(0.2)
    _, grad = latent_gradient(sigma, task)
    gaps = [np.abs(ref.overlap_ode_step(sigma, grad, eta) - exact_step(sigma, grad, eta)).max() for eta in (1e-2, 1e-3)]
    assert gaps[1] > 0 and gaps[1] / gaps[0] == pytest.approx(1e-2, rel=1e-6), "it drops the eta^2 terms, no more"


# ----------------------------------------------------------------------------- the invariant


def test_invariant_I1_equals_the_first_invariant():
    sigmas = _sigmas(5)
    got = ref.invariant_I1(sigmas)
    assert got.shape == (5,) and got.dtype == np.float64
    np.testing.assert_allclose(got, invariants(sigmas)[:, 0], rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(got, np.trace(np.diag([1.0, 1.0, -1.0, -1.0]) @ gram(sigmas), axis1=-2, axis2=-1))
    single = ref.invariant_I1(sigmas[0])
    assert isinstance(single, float) and single == pytest.approx(got[0], rel=1e-15)


def test_invariant_I1_is_conserved_by_ode_step_for_a_linear_loss():
    sigmas = _sigmas(8, seed=4)
    for eta in (1e-3, 0.1, 1.0):
        for sigma, grad in zip(sigmas, _linear_gradients(sigmas, seed=5)):
            after = ode_step(sigma, grad, eta)
            assert ref.invariant_I1(after) == pytest.approx(ref.invariant_I1(sigma), abs=1e-12)
            assert ref.invariant_I1(ref.overlap_ode_step(sigma, grad, eta)) == pytest.approx(
                ref.invariant_I1(sigma), abs=1e-12
            )
    grad = np.zeros(10)
    grad[OVERLAPS.index("mm")] = 1.0  # a loss that sees a norm (an erf network): I1 moves
    assert abs(ref.invariant_I1(ode_step(sigmas[0], grad, 0.1)) - ref.invariant_I1(sigmas[0])) > 1e-3


def test_invariant_I1_is_conserved_along_a_filter_task_trajectory():
    sigma, task = THETA_2.copy(), filter_task(0.2)
    start = ref.invariant_I1(sigma)
    trajectory = [sigma]
    for _ in range(200):
        _, grad = latent_gradient(sigma, task)
        sigma = ref.overlap_ode_step(sigma, grad, 5e-3)
        trajectory.append(sigma)
    I1 = ref.invariant_I1(np.array(trajectory))
    assert np.abs(I1 - start).max() < 1e-12
    assert np.abs(trajectory[-1] - THETA_2).max() > 0.1, "the overlaps did move"


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: ref.overlaps_from_vectors(np.ones(3), np.ones(3), np.ones(3), np.ones(4)), ValueError, "one length"),
        (lambda: ref.overlaps_from_vectors(*np.ones((4, 0))), ValueError, "N >= 1"),
        (lambda: ref.overlaps_from_vectors(np.ones((2, 3)), *np.ones((3, 3))), ValueError, "m must be 1-D"),
        (lambda: ref.overlaps_from_vectors("abc", *np.ones((3, 3))), TypeError, "m must be"),
        (lambda: ref.effective_output(np.ones(10), np.ones(3), 0.1), ValueError, "sigma_visible must have shape (4,)"),
        (lambda: ref.effective_output(np.ones(4), np.ones((3, 1)), 0.1), ValueError, "x must be 1-D"),
        (lambda: ref.effective_output(np.ones(4), np.ones(3), 0.0), ValueError, "dt must be"),
        (lambda: ref.effective_output(np.ones(4), np.ones(3), 1.5), ValueError, "dt must be"),
        (lambda: ref.effective_output(np.ones(4), np.ones(3), "0.1"), TypeError, "dt must be"),
        (lambda: ref.effective_output(np.ones(4), [1.0, np.nan], 0.1), ValueError, "x must be finite"),
        (lambda: ref.metric_bar(np.ones(4)), ValueError, "sigma must have shape (10,)"),
        (lambda: ref.metric_bar(np.ones((2, 10))), ValueError, "sigma must have shape (10,)"),
        (lambda: ref.overlap_ode_step(np.ones(10), np.ones(4), 0.1), ValueError, "grad must have shape (10,)"),
        (lambda: ref.overlap_ode_step(np.ones(10), np.ones(10), -0.1), ValueError, "eta must be"),
        (lambda: ref.overlap_ode_step(np.ones(10), np.ones(10), None), TypeError, "eta must be"),
        (lambda: ref.invariant_I1(np.ones(9)), ValueError, "sigma must have shape (10,) or (K, 10)"),
        (lambda: ref.invariant_I1(np.ones((2, 2, 10))), ValueError, "sigma must be 1-D or 2-D"),
        (lambda: ref.invariant_I1(["a"] * 10), TypeError, "sigma must be"),
    ],
)
def test_bad_input_is_refused_with_a_message_naming_the_argument(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


def test_the_references_return_new_arrays_and_leave_their_arguments_alone():
    sigma, grad = THETA_2.copy(), np.eye(10)[0]
    out = ref.overlap_ode_step(sigma, grad, 0.0)
    assert np.array_equal(out, sigma) and not np.shares_memory(out, sigma)
    np.testing.assert_array_equal(sigma, THETA_2)
    trajectory = np.stack([THETA_2, THETA_2])
    assert not np.shares_memory(ref.invariant_I1(trajectory), trajectory)


# ----------------------------------------------------------------------------- the guard


@pytest.mark.parametrize("name", ref.__all__)
def test_every_reference_refuses_under_grading(name):
    function = getattr(ref, name)
    assert function.__seqlearn_reference__ and not hasattr(function, "__wrapped__")
    with student_code(), pytest.raises(ReferenceCallError, match=name):
        function(*[np.ones(10)] * 3)


def test_the_references_run_outside_grading_after_a_refusal():
    with student_code(), pytest.raises(ReferenceCallError):
        ref.metric_bar(THETA_2)
    np.testing.assert_array_equal(ref.metric_bar(THETA_2), metric(THETA_2))


@pytest.mark.parametrize(
    "module, name",
    [
        ("overlaps", "overlaps"),
        ("overlaps", "metric"),
        ("overlaps", "ode_step"),
        ("overlaps", "invariants"),
        ("linear", "latent_output"),
    ],
)
def test_the_package_functions_the_exercises_repeat_refuse_too(module, name):
    """Otherwise an answer could delegate to the package and pass the notebook's own test cells."""
    import importlib

    from seqlearn.guard import ReferenceCallError, student_code

    function = getattr(importlib.import_module(f"seqlearn.lowrank.{module}"), name)
    with student_code(), pytest.raises(ReferenceCallError, match=name):
        function()
