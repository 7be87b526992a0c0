r"""The nonlinear tasks of Chapter 6: flip-flop, perceptual decision making, and the teacher task C.

Every generator draws ``B`` trials of :math:`T = t_{max} / dt` Euler steps from a
``numpy.random.Generator`` and returns three float64 arrays of shape ``(B, T)``: the scalar
input :math:`x_t`, the target :math:`y_t` and the mask :math:`\mu_t \in \{0, 1\}` of the steps
the loss counts. The loss is the masked mean squared error (:func:`seqlearn.losses.masked_mse`,
re-exported here)

.. math::
    L = \frac{\sum_{b,t} \mu_{bt} (\hat y_{bt} - y_{bt})^2}{\sum_{b,t} \mu_{bt}}.

**Flip-flop** (:func:`flip_flop`). Pulses of 0.5 s with a random sign :math:`s = \pm 1`, the
first at 0.5 s, each later one :math:`U(a, b)` seconds after the previous pulse's settling
period (the 2 s after its end). Input :math:`s \cdot` ``input_amp`` during a pulse; target
:math:`s \cdot` ``target_amp`` of the latest pulse from its onset on (0 before the first
pulse). The loss counts only the hold periods: the mask is 0 before the first pulse, during
every pulse and the 2 s after it, and one step before each pulse.

**Decision making** (:func:`decision_making`). Fixation 1 s, stimulus 9 s, delay 1 s,
response 9 s. Input :math:`\xi_t + \mathrm{coh} \cdot 3.2 / 100` during the stimulus,
:math:`\xi_t` elsewhere (:math:`\xi_t \sim \mathcal N(0, \text{noise}^2)`); the target is the
graded :math:`\mathrm{coh} / 16` during the response, which is also the only masked-in period.

**Teacher task C** (:func:`teacher`). Input :math:`1.5\, \xi_t + 2\, p_t`, white noise
(:math:`\xi_t \sim \mathcal N(0, 1)`) plus twice a default flip-flop pulse train :math:`p_t`;
target the output of the effective erf model (:func:`seqlearn.lowrank.erf.effective_output`)
with the teacher's overlaps (:mod:`seqlearn.lowrank.teacher_network`); every step counts.
"""

from __future__ import annotations

import numpy as np

from ..losses import masked_mse
from ..validation import generator, integer, real, real_array
from .teacher_network import teacher_overlaps

__all__ = ["flip_flop", "decision_making", "teacher", "masked_mse"]

PULSE = 0.5  # s, the duration of a flip-flop pulse
SETTLE = 2.0  # s, the unmasked period after each pulse
FIRST_ONSET = 0.5  # s, the first pulse's onset
EPOCHS = ("fixation", "stimulus", "delay", "response")
COHERENCE_SCALE = 3.2  # input per 100 % coherence
COHERENCE_MAX = 16.0  # the coherence whose target is 1


def _steps(seconds: float, dt: float) -> int:
    """The number of Euler steps in ``seconds`` (rounded, so 0.5 / 0.05 is 10 steps)."""
    return round(seconds / dt)


def _grid(B, dt, t_max) -> tuple[int, float, int]:
    """``(B, dt, T)`` checked: ``B >= 1`` trials, ``dt > 0``, ``T = t_max / dt >= 1`` steps."""
    B = integer(B, "B", low=1)
    dt = real(dt, "dt", low=0.0, low_open=True)
    t_max = real(t_max, "t_max", low=0.0, low_open=True)
    T = _steps(t_max, dt)
    if T < 1:
        raise ValueError(f"t_max / dt must be at least one step, got t_max={t_max:g}, dt={dt:g}")
    return B, dt, T


def _stim_range(stim_range) -> tuple[float, float]:
    """``(a, b)`` with ``0 < a <= b``: the range of the waits between flip-flop pulses, in seconds."""
    arr = real_array(stim_range, "stim_range", shape=(2,))
    if not 0 < arr[0] <= arr[1]:
        raise ValueError(f"stim_range must be (a, b) with 0 < a <= b seconds, got {tuple(arr)}")
    return float(arr[0]), float(arr[1])


def _onsets(B: int, T: int, dt: float, stim_range: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    r"""Every trial's pulse onsets (steps), shape ``(B, K)``: the first at 0.5 s, onset :math:`k+1` a wait
    :math:`w_k \sim U(a, b)` s after pulse :math:`k` and its 2 s of settling,

    .. math::
        t_{k+1} = t_k + \mathrm{round}(2.5 / dt) + \lfloor w_k / dt \rfloor .

    ``K`` bounds the pulses any trial of ``T`` steps can hold (each gap is at least
    :math:`\mathrm{round}(2.5/dt) + \lfloor a/dt \rfloor` steps); onsets at or after ``T`` are not
    in the trial. The waits are drawn as one ``(B, K - 1)`` array.
    """
    first, settled = _steps(FIRST_ONSET, dt), _steps(PULSE + SETTLE, dt)
    shortest = settled + int(stim_range[0] / dt)
    if shortest < 1:
        raise ValueError(f"dt={dt:g} is too coarse: the pulses of a flip-flop trial would share a step")
    K = 1 + max(0, -(-(T - first) // shortest))
    waits = (rng.uniform(*stim_range, (B, K - 1)) / dt).astype(np.int64)  # int() of each wait, in steps
    return first + np.concatenate([np.zeros((B, 1), np.int64), np.cumsum(settled + waits, axis=1)], axis=1)


def flip_flop(
    B: int,
    *,
    rng=None,
    dt: float = 0.025,
    t_max: float = 20.0,
    stim_range=(4.0, 10.0),
    input_amp: float = 1.0,
    target_amp: float = 0.5,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``B`` flip-flop trials: remember the sign of the latest pulse.

    Defaults are Fig. 4's (dt 0.025, 20 s, waits U(4, 10) s, input 1, target 0.5); the memory
    experiment's task A uses ``stim_range=(1, 2)``, ``input_amp=2``, ``target_amp=1``.

    The whole batch at once, each signal the running sum of its changes: with the onsets
    :math:`t_k` (:func:`_onsets`) and signs :math:`s_k` (``(B, K)``, drawn after the waits), the input
    steps by :math:`\pm s_k` at :math:`t_k` and :math:`t_k + 0.5\,\mathrm{s}`, the target by
    :math:`s_k - s_{k-1}` at :math:`t_k`, and the mask by :math:`\pm 1` at the ends of each hold
    period :math:`[t_k + 2.5\,\mathrm{s}, t_{k+1} - 1)` (:math:`t_{k+1} = T + 1` after the last pulse).

    Returns
    -------
    inputs, targets, masks : np.ndarray
        ``(B, T)`` each, :math:`T = t_{max} / dt`; :math:`x = \pm` ``input_amp`` during a
        pulse (0.5 s), :math:`y = \pm` ``target_amp`` (the latest pulse's sign) from its onset
        on, :math:`\mu = 1` in the hold periods only (from 2 s after a pulse's end to one step
        before the next pulse).
    """
    B, dt, T = _grid(B, dt, t_max)
    stim_range = _stim_range(stim_range)
    input_amp = real(input_amp, "input_amp")
    target_amp = real(target_amp, "target_amp")
    rng = generator(rng)
    onsets = _onsets(B, T, dt, stim_range, rng)  # (B, K)
    signs = rng.choice((-1.0, 1.0), size=onsets.shape)  # (B, K)
    pulse, settle = _steps(PULSE, dt), _steps(SETTLE, dt)
    following = np.concatenate([onsets[:, 1:], np.full((B, 1), T)], axis=1)
    hold_on, hold_off = onsets + pulse + settle, np.where(following < T, following, T + 1) - 1
    held = (hold_on < hold_off).astype(float)  # the hold periods that are not empty
    changes = [
        (onsets, signs), (onsets + pulse, -signs),  # the input
        (onsets, np.diff(signs, axis=1, prepend=0.0)),  # the target
        (hold_on, held), (hold_off, -held),  # the mask
    ]  # fmt: skip
    signal = np.repeat([0, 0, 1, 2, 2], onsets.size)  # which of x, y, mask each change is to
    steps = np.concatenate([np.minimum(at, T).ravel() for at, _ in changes])  # a change at T or later is never read
    trial = np.tile(np.repeat(np.arange(B), onsets.shape[1]), len(changes))
    sums = np.bincount(
        (signal * B + trial) * (T + 1) + steps,
        weights=np.concatenate([w.ravel() for _, w in changes]),
        minlength=3 * B * (T + 1),
    )
    x, y, mask = np.cumsum(sums.reshape(3, B, T + 1), axis=-1)[..., :T]  # integer-valued sums: exact
    return x * input_amp, y * target_amp, mask


def decision_making(
    B: int,
    *,
    rng=None,
    dt: float = 0.05,
    coherences=(-16, -8, -2, 2, 8, 16),
    noise_std: float = 0.05,
    fixation: float = 1.0,
    stimulus: float = 9.0,
    delay: float = 1.0,
    response: float = 9.0,
    target_amp: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``B`` perceptual decision trials: report the graded coherence after a delay.

    Each trial draws a coherence uniformly from ``coherences`` (the memory experiment's task B:
    :math:`\pm 2, \pm 8, \pm 16`, noise 0.05). :math:`T` is the sum of the four epoch lengths
    over ``dt`` (20 s by default).

    Returns
    -------
    inputs, targets, masks : np.ndarray
        ``(B, T)`` each: :math:`x_t = \xi_t + \mathrm{coh}\cdot 3.2/100` during the stimulus,
        :math:`\xi_t \sim \mathcal N(0, \text{noise\_std}^2)`; :math:`y_t = \mathrm{coh}/16 \cdot`
        ``target_amp`` and :math:`\mu_t = 1` during the response, 0 elsewhere.
    """
    epochs = [real(s, name, low=0.0) for s, name in zip((fixation, stimulus, delay, response), EPOCHS)]
    B, dt, T = _grid(B, dt, sum(epochs))
    coherences = real_array(coherences, "coherences", ndim=1)
    if coherences.size == 0:
        raise ValueError("coherences must hold at least one coherence, got an empty array")
    noise_std = real(noise_std, "noise_std", low=0.0)
    target_amp = real(target_amp, "target_amp")
    rng = generator(rng)
    stim_on, stim_off, resp_on = (_steps(sum(epochs[:k]), dt) for k in (1, 2, 3))
    coh = rng.choice(coherences, size=B)  # (B,)
    x = noise_std * rng.standard_normal((B, T))
    x[:, stim_on:stim_off] += coh[:, None] * COHERENCE_SCALE / 100
    y, mask = np.zeros((B, T)), np.zeros((B, T))
    y[:, resp_on:] = coh[:, None] / COHERENCE_MAX * target_amp
    mask[:, resp_on:] = 1.0
    return x, y, mask


def teacher(
    B: int,
    *,
    rng=None,
    dt: float = 0.05,
    t_max: float = 20.0,
    noise_amp: float = 1.5,
    pulse_amp: float = 2.0,
    read: str = "before",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``B`` trials of task C: imitate a fixed effective erf network (the teacher).

    Input :math:`x_t = 1.5\,\xi_t + 2\,p_t` (``noise_amp``, ``pulse_amp``), with
    :math:`\xi_t \sim \mathcal N(0, 1)` and :math:`p_t` the input of a default flip-flop trial
    (waits U(4, 10) s, amplitude 1); target the teacher's output
    :math:`y_t = (\sigma_{zm}\kappa_m + \sigma_{zu}\kappa_u)\, G(\Delta_t)` with the teacher's
    overlaps :data:`~seqlearn.lowrank.teacher_network.TEACHER_VISIBLE` (computed in float64 on the CPU;
    imports torch), read before or after the state's update (``read``, :data:`~seqlearn.lowrank.erf.READS`).

    Returns
    -------
    inputs, targets, masks : np.ndarray
        ``(B, T)`` each; the mask is all ones.
    """
    from .erf import effective_output  # torch

    noise_amp = real(noise_amp, "noise_amp")
    pulse_amp = real(pulse_amp, "pulse_amp")
    rng = generator(rng)
    pulses, _, _ = flip_flop(B, rng=rng, dt=dt, t_max=t_max)
    x = noise_amp * rng.standard_normal(pulses.shape) + pulse_amp * pulses
    y = effective_output(teacher_overlaps(), x, dt=dt, read=read, device="cpu").numpy()
    return x, y, np.ones_like(x)
