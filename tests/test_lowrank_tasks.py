"""seqlearn.lowrank.tasks: the trials' structure recomputed from the inputs, the masked MSE by hand (brief 1.3)."""

import numpy as np
import pytest
import torch

from seqlearn.lowrank.erf import effective_output, teacher_overlaps
from seqlearn.lowrank.tasks import decision_making, flip_flop, masked_mse, teacher

DT = 0.05


def _latest_pulse_step(x: np.ndarray) -> np.ndarray:
    """For every step, the index of the latest step with a nonzero input (-1 before any), shape (B, T)."""
    steps = np.where(x != 0, np.arange(x.shape[1]), -1)
    return np.maximum.accumulate(steps, axis=1)


def _onsets(x_b: np.ndarray) -> np.ndarray:
    on = x_b != 0
    return np.flatnonzero(on & ~np.r_[False, on[:-1]])


def _flip_flop_by_trial(B, *, rng, dt, t_max, stim_range, input_amp, target_amp):
    """The flip-flop trials one trial and one pulse at a time, from the same draws: waits (B, K - 1), then signs (B, K),
    K the pulses a trial holds when every wait is the shortest."""
    rng = np.random.default_rng(rng)
    T, pulse, settle = round(t_max / dt), round(0.5 / dt), round(2.0 / dt)
    shortest, K, onset = round(2.5 / dt) + int(stim_range[0] / dt), 0, round(0.5 / dt)
    while onset < T:
        K, onset = K + 1, onset + shortest
    K += 1  # the first onset past the trial
    waits, signs = rng.uniform(*stim_range, (B, K - 1)), rng.choice((-1.0, 1.0), size=(B, K))
    x, y, mask = np.zeros((B, T)), np.zeros((B, T)), np.zeros((B, T))
    for b in range(B):
        onsets, onset = [], round(0.5 / dt)
        for wait in waits[b]:
            if onset >= T:
                break
            onsets.append(onset)
            onset += round(2.5 / dt) + int(wait / dt)
        for k, (onset, next_onset) in enumerate(zip(onsets, onsets[1:] + [T + 1])):
            x[b, onset : onset + pulse] = signs[b, k] * input_amp
            y[b, onset:] = signs[b, k] * target_amp
            mask[b, onset + pulse + settle : next_onset - 1] = 1.0
    return x, y, mask


@pytest.mark.parametrize(
    "settings",
    [
        {"dt": 0.05, "t_max": 20.0, "stim_range": (1.0, 2.0), "input_amp": 2.0, "target_amp": 1.0},  # task A
        {"dt": 0.025, "t_max": 20.0, "stim_range": (4.0, 10.0), "input_amp": 1.0, "target_amp": 0.5},  # Fig. 4
        {"dt": 0.1, "t_max": 7.0, "stim_range": (0.3, 0.35), "input_amp": -1.5, "target_amp": 3.0},
        {"dt": 0.05, "t_max": 0.4, "stim_range": (1.0, 2.0), "input_amp": 1.0, "target_amp": 1.0},  # no pulse
    ],
)
def test_flip_flop_equals_a_trial_by_trial_loop_over_the_same_draws(settings):
    for seed in range(3):
        batch = flip_flop(25, rng=seed, **settings)
        for got, expected in zip(batch, _flip_flop_by_trial(25, rng=seed, **settings)):
            np.testing.assert_array_equal(got, expected)
    assert batch[2].any() == (settings["t_max"] > 3.0)


def test_flip_flop_target_is_the_latest_pulse_sign():
    x, y, _ = flip_flop(40, rng=0, dt=DT, input_amp=2.0, target_amp=0.5)
    assert x.shape == y.shape == (40, 400) and x.dtype == np.float64
    last = _latest_pulse_step(x)
    expected = np.where(last >= 0, 0.5 * np.sign(np.take_along_axis(x, np.maximum(last, 0), 1)), 0.0)
    np.testing.assert_array_equal(y, expected)
    assert set(np.unique(x)) <= {-2.0, 0.0, 2.0}


def test_flip_flop_mask_is_zero_during_pulses_the_2s_after_and_the_step_before():
    x, _, mask = flip_flop(40, rng=1, dt=DT, stim_range=(1.0, 2.0))
    since = np.arange(x.shape[1]) - _latest_pulse_step(x)  # steps since the latest pulse step
    settled = (_latest_pulse_step(x) >= 0) & (since > round(2.0 / DT))  # >= 2 s after the pulse's end
    before_pulse = np.zeros_like(settled)
    before_pulse[:, :-1] = (x[:, 1:] != 0) & (x[:, :-1] == 0)
    np.testing.assert_array_equal(mask, (settled & ~before_pulse).astype(float))


def test_flip_flop_pulse_timing_follows_the_waits():
    a, b = 4.0, 10.0
    x, _, _ = flip_flop(30, rng=2, dt=DT, stim_range=(a, b))
    gaps = []
    for x_b in x:
        onsets = _onsets(x_b)
        assert onsets[0] == round(0.5 / DT)
        ends = [np.flatnonzero(x_b[o:] == 0)[0] for o in onsets[:-1]]
        assert all(e == round(0.5 / DT) for e in ends)  # 0.5 s pulses
        gaps += list(np.diff(onsets) * DT - 0.5 - 2.0)  # the wait after the settling period
    gaps = np.array(gaps)
    assert gaps.min() >= a - DT and gaps.max() < b
    assert gaps.max() - gaps.min() > 0.5 * (b - a)  # the waits are spread over the range


def test_decision_making_target_is_the_coherence_over_16_in_the_response_only():
    x, y, mask = decision_making(50, rng=3, dt=DT, noise_std=0.0)
    t = np.arange(400) * DT
    stimulus, response = (t >= 1.0) & (t < 10.0), t >= 11.0
    coh = x[:, stimulus].mean(1) * 100 / 3.2
    np.testing.assert_allclose(x[:, stimulus], np.repeat(coh[:, None] * 3.2 / 100, stimulus.sum(), 1), atol=1e-15)
    np.testing.assert_array_equal(x[:, ~stimulus], 0.0)
    assert set(np.round(coh, 9)) <= {-16.0, -8.0, -2.0, 2.0, 8.0, 16.0}
    np.testing.assert_allclose(y[:, response], np.repeat(coh[:, None] / 16, response.sum(), 1), atol=1e-12)
    np.testing.assert_array_equal(y[:, ~response], 0.0)
    np.testing.assert_array_equal(mask, np.broadcast_to(response, mask.shape).astype(float))


def test_decision_making_noise_has_the_given_std():
    x, _, _ = decision_making(200, rng=4, dt=DT, noise_std=0.05)
    t = np.arange(400) * DT
    assert np.std(x[:, t >= 10.0]) == pytest.approx(0.05, rel=0.02)


def test_teacher_targets_are_the_effective_models_output_and_every_step_counts():
    x, y, mask = teacher(8, rng=5)
    np.testing.assert_array_equal(mask, 1.0)
    expected = effective_output(teacher_overlaps(), x, dt=DT, device="cpu").numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)
    assert np.std(x[:, : round(0.5 / DT)]) == pytest.approx(1.5, rel=0.15)  # noise only, before the first pulse
    x, y, _ = teacher(8, rng=5, read="after")
    np.testing.assert_allclose(y, effective_output(teacher_overlaps(), x, dt=DT, read="after", device="cpu").numpy())
    assert np.abs(y - expected).max() > 1e-3  # the two reads differ


def test_tasks_are_reproducible_from_a_seed():
    for task in (flip_flop, decision_making, teacher):
        first, second = task(3, rng=7), task(3, rng=7)
        for a, b in zip(first, second):
            np.testing.assert_array_equal(a, b)


def test_masked_mse_by_hand_numpy_and_torch_batched_over_networks():
    rng = np.random.default_rng(8)
    y_hat, y = rng.standard_normal((3, 4, 5)), rng.standard_normal((4, 5))
    mask = (rng.random((4, 5)) < 0.5).astype(float)
    by_hand = [
        sum(mask[b, t] * (y_hat[n, b, t] - y[b, t]) ** 2 for b in range(4) for t in range(5)) / mask.sum()
        for n in range(3)
    ]
    np.testing.assert_allclose(masked_mse(y_hat, y, mask), by_hand, rtol=1e-13)
    as_torch = masked_mse(*(torch.as_tensor(a) for a in (y_hat, y, mask)))
    np.testing.assert_allclose(as_torch.numpy(), by_hand, rtol=1e-13)
    assert masked_mse(y_hat[0], y, mask).shape == ()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: flip_flop(0), ValueError, "B must be an int >= 1"),
        (lambda: flip_flop(2.0), TypeError, "B must be an int"),
        (lambda: flip_flop(2, dt=-0.1), ValueError, "dt must be"),
        (lambda: flip_flop(2, stim_range=(5.0, 4.0)), ValueError, "stim_range must be"),
        (lambda: flip_flop(2, stim_range=(1.0,)), ValueError, "stim_range must have shape"),
        (lambda: flip_flop(2, rng="seed"), TypeError, "rng must be"),
        (lambda: flip_flop(2, dt=6.0, t_max=60.0), ValueError, "dt=6 is too coarse"),
        (lambda: decision_making(2, coherences=[]), ValueError, "coherences must hold"),
        (lambda: decision_making(2, noise_std=-1.0), ValueError, "noise_std must be"),
        (lambda: teacher(2, noise_amp="loud"), TypeError, "noise_amp must be"),
        (lambda: masked_mse(np.ones((2, 3)), np.ones((2, 3)), np.zeros((2, 3))), ValueError, "mask must count"),
        (lambda: masked_mse(np.ones((2, 4)), np.ones((2, 3)), np.ones((2, 3))), ValueError, "must agree"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, error, match):
    with pytest.raises(error, match=match):
        call()
