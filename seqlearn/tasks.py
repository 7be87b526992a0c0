r"""Synthetic sequence tasks that need long memory, with their chance-level baselines.

Every generator is vectorised over the batch, draws from a ``numpy.random.Generator`` (or
an int seed) and returns NumPy arrays; :func:`to_torch` turns them into tensors on a device.

* :func:`adding_problem` (Hochreiter & Schmidhuber 1997; the variant of Le et al. 2015):
  add the two values marked among :math:`T` random numbers. Predicting the constant 1
  has mean squared error :math:`\operatorname{Var}(u_1 + u_2) = 2 \cdot \frac1{12} = \frac16`
  (:func:`adding_baseline_mse`).
* :func:`copy_task` (Hochreiter & Schmidhuber 1997; Arjovsky et al. 2016): read :math:`k`
  symbols, wait :math:`T` steps, then reproduce them. A memoryless model that outputs the
  blank during the first :math:`T + k` steps and a uniform guess over the :math:`n`
  symbols during the last :math:`k` scores the cross-entropy per step
  :math:`\frac{k \log n}{T + 2k}` (:func:`copy_baseline_loss`).
* :func:`agreement_task`: the subject's number (singular or plural) of a ToyEnglish
  sentence prefix, read at the position of the main verb, a distance :math:`d` after the
  head noun (sequence classification; chance accuracy 1/2, :func:`agreement_chance`).
* :func:`mackey_glass`: the chaotic Mackey-Glass delay equation (:math:`\tau = 17`), the
  echo state networks' prediction benchmark, with Jaeger's (2001) discretisation.
"""

from __future__ import annotations

import math

import numpy as np

from .data.synthetic import AgreementExample, agreement_examples
from .data.vocab import Vocab
from .validation import flag, generator, int_array, integer, real

__all__ = [
    "adding_problem",
    "adding_baseline_mse",
    "copy_task",
    "copy_baseline_loss",
    "copy_vocab_size",
    "agreement_task",
    "agreement_chance",
    "mackey_glass",
    "one_hot",
    "to_torch",
]


# ----------------------------------------------------------------------------- adding


def adding_problem(
    n_sequences: int, T: int, rng=None, halves: bool = True, dtype=np.float32
) -> tuple[np.ndarray, np.ndarray]:
    r"""Inputs and targets of the adding problem.

    Each sequence has two input channels: values :math:`u_t \sim U[0, 1]` and a marker
    :math:`m_t \in \{0, 1\}` with exactly two ones, at :math:`t_1 < t_2`. The target is

    .. math:: y = u_{t_1} + u_{t_2}.

    Parameters
    ----------
    n_sequences : int
        :math:`B \ge 1`.
    T : int
        Sequence length, ``>= 2``.
    rng : numpy.random.Generator, int or None
    halves : bool
        ``True``: :math:`t_1` uniform in the first half :math:`[0, \lfloor T/2 \rfloor)` and
        :math:`t_2` in the second; ``False``: two distinct positions anywhere.
    dtype : numpy dtype of the returned arrays.

    Returns
    -------
    x : numpy.ndarray, shape ``(B, T, 2)``
        ``x[..., 0]`` the values, ``x[..., 1]`` the markers.
    y : numpy.ndarray, shape ``(B,)``
    """
    B = integer(n_sequences, "n_sequences", low=1)
    T = integer(T, "T", low=2)
    rng = generator(rng)
    u = rng.random((B, T))  # (B, T)
    rows = np.arange(B)
    if halves:
        half = T // 2
        t1 = rng.integers(0, half, B)
        t2 = rng.integers(half, T, B)
    else:
        order = np.argsort(rng.random((B, T)), axis=1)[:, :2]  # (B, 2) two distinct positions
        t1, t2 = order[:, 0], order[:, 1]
    marker = np.zeros((B, T))
    marker[rows, t1] = marker[rows, t2] = 1.0
    x = np.stack([u, marker], axis=-1).astype(dtype)  # (B, T, 2)
    y = (u[rows, t1] + u[rows, t2]).astype(dtype)  # (B,)
    return x, y


def adding_baseline_mse(T: int | None = None) -> float:
    r"""MSE of always predicting :math:`\mathbb E[y] = 1`: :math:`\operatorname{Var}(u_1+u_2) = 1/6`.

    The same for every length ``T`` (accepted so the chapter can plot it against :math:`T`).
    """
    if T is not None:
        integer(T, "T", low=2)
    return 1.0 / 6.0


# ----------------------------------------------------------------------------- copy


def copy_vocab_size(n_symbols: int) -> int:
    """Input ids of :func:`copy_task`: the symbols ``0..n-1``, blank ``n``, delimiter ``n+1``."""
    return integer(n_symbols, "n_symbols", low=1) + 2


def copy_task(n_sequences: int, T: int, k: int = 10, n_symbols: int = 8, rng=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Inputs and targets of the copy task (length :math:`T + 2k`).

    With symbols :math:`s_1..s_k` drawn uniformly from :math:`\{0..n-1\}`, blank
    :math:`b = n` and delimiter :math:`\delta = n + 1`:

    =========  ==================  =====================  ======  ===============
    step       :math:`1..k`        :math:`k+1..k+T-1`     k+T     k+T+1..T+2k
    input      :math:`s_1..s_k`    :math:`b`              δ       :math:`b`
    target     :math:`b`           :math:`b`              b       :math:`s_1..s_k`
    =========  ==================  =====================  ======  ===============

    so the model must hold :math:`k` symbols for :math:`T` steps.

    Parameters
    ----------
    n_sequences : int
        :math:`B \ge 1`.
    T : int
        The delay, ``>= 1``.
    k : int
        Symbols to copy, ``>= 1``.
    n_symbols : int
        :math:`n \ge 1`.
    rng : numpy.random.Generator, int or None

    Returns
    -------
    x : numpy.ndarray, int64, shape ``(B, T + 2k)``
        Input ids in ``[0, n + 2)`` (see :func:`one_hot`).
    y : numpy.ndarray, int64, shape ``(B, T + 2k)``
        Target ids in ``[0, n + 1)`` (symbols and blank).
    """
    B = integer(n_sequences, "n_sequences", low=1)
    T = integer(T, "T", low=1)
    k = integer(k, "k", low=1)
    n = integer(n_symbols, "n_symbols", low=1)
    rng = generator(rng)
    symbols = rng.integers(0, n, (B, k))  # (B, k)
    x = np.full((B, T + 2 * k), n, dtype=np.int64)
    y = np.full((B, T + 2 * k), n, dtype=np.int64)
    x[:, :k] = symbols
    x[:, k + T - 1] = n + 1
    y[:, T + k :] = symbols
    return x, y


def copy_baseline_loss(T: int, k: int = 10, n_symbols: int = 8) -> float:
    r"""Cross-entropy per step (nats) of the best memoryless strategy: :math:`\frac{k \log n}{T + 2k}`.

    It predicts the blank surely for the first :math:`T + k` steps (no loss) and the
    uniform distribution over the :math:`n` symbols for the last :math:`k`.
    """
    T = integer(T, "T", low=1)
    k = integer(k, "k", low=1)
    n = integer(n_symbols, "n_symbols", low=1)
    return k * math.log(n) / (T + 2 * k)


# ----------------------------------------------------------------------------- agreement


def agreement_task(
    vocab: Vocab, distances=range(9), n_per_distance: int = 100, seed=0, examples: list[AgreementExample] | None = None
):
    r"""ToyEnglish subject-verb agreement as sequence classification.

    Each item is the encoded prefix ``<s> w_1 .. w_j`` of a sentence up to its main verb;
    the label is the number of the subject, :math:`0` singular, :math:`1` plural, which
    is :math:`d` tokens back (the ``distance``).

    Parameters
    ----------
    vocab : Vocab
        Encodes the tokens (unknown ones become ``<unk>``).
    distances, n_per_distance, seed
        As :func:`seqlearn.data.synthetic.agreement_examples` (ignored with ``examples``).
    examples : list of AgreementExample, optional

    Returns
    -------
    x : numpy.ndarray, int64, shape ``(N, L_max)``
        Prefixes, right-padded with ``<unk>`` (id 0) to the longest.
    lengths : numpy.ndarray, int64, shape ``(N,)``
        Real length of each prefix (including ``<s>``).
    y : numpy.ndarray, int64, shape ``(N,)``
        The labels.
    distance : numpy.ndarray, int64, shape ``(N,)``
    """
    if not isinstance(vocab, Vocab):
        raise TypeError(f"vocab must be a seqlearn.data.vocab.Vocab, got {type(vocab).__name__}")
    if examples is None:
        examples = agreement_examples(distances, n_per_distance, seed)
    if not examples:
        raise ValueError("there are no agreement examples")
    prefixes = [np.concatenate([[Vocab.bos_id], vocab.encode(list(ex.prefix))]) for ex in examples]
    lengths = np.array([len(p) for p in prefixes], dtype=np.int64)
    x = np.zeros((len(prefixes), int(lengths.max())), dtype=np.int64)
    for i, p in enumerate(prefixes):
        x[i, : len(p)] = p
    y = np.array([ex.number == "pl" for ex in examples], dtype=np.int64)
    distance = np.array([ex.distance for ex in examples], dtype=np.int64)
    return x, lengths, y, distance


def agreement_chance() -> float:
    """Chance accuracy of the two-way agreement decision: 1/2 (log-loss :math:`\\log 2`)."""
    return 0.5


# ----------------------------------------------------------------------------- Mackey-Glass


def mackey_glass(
    n_steps: int,
    tau: float = 17,
    *,
    a: float = 0.2,
    b: float = 0.1,
    n: float = 10,
    x0: float = 1.2,
    delta: float = 0.1,
    subsample: int = 10,
    discard: int = 0,
    squash: bool = False,
) -> np.ndarray:
    r"""The Mackey-Glass series :math:`\dot y = a\,y(t-\tau)/(1 + y(t-\tau)^n) - b\,y(t)`.

    Jaeger's (2001, GMD Report 148) discretisation: Euler steps of :math:`\delta = 0.1`,

    .. math:: y_{k+1} = y_k + \delta \Big(\frac{a\, y_{k-D}}{1 + y_{k-D}^n} - b\, y_k\Big),
        \qquad D = \operatorname{round}(\tau/\delta),

    from the constant history :math:`y_{-D..0} = x_0`, then every ``subsample`` = 10-th value
    kept (one output step = one time unit). The defaults (:math:`\tau = 17, a = 0.2, b = 0.1,
    n = 10`) give the mildly chaotic series, mean :math:`\approx 0.93`, variance
    :math:`\approx 0.051`, range :math:`\approx [0.41, 1.32]`.

    Parameters
    ----------
    n_steps : int
        Output samples, ``>= 1``.
    tau : float
        Delay, ``> 0`` (chaotic above about 16.8).
    a, b, n, x0 : float
        Equation constants and the initial history, all ``> 0``.
    delta : float
        Euler step, ``> 0`` and at most ``tau``.
    subsample : int
        Keep one Euler step in ``subsample``, ``>= 1``.
    discard : int
        Output samples dropped first (the transient from the constant history), ``>= 0``.
    squash : bool
        Return :math:`\tanh(y - 1)` (Jaeger's map into :math:`(-1, 1)`; invert with
        :math:`\operatorname{arctanh}(\cdot) + 1`).

    Returns
    -------
    numpy.ndarray, float64, shape ``(n_steps,)``

    Vectorised over blocks of :math:`D` Euler steps: within a block the delayed terms are
    known, and :math:`y_{k+j} = c^j y_k + \sum_{i<j} c^{j-1-i} g_i` with :math:`c = 1 - \delta b`.
    """
    N = integer(n_steps, "n_steps", low=1)
    tau = real(tau, "tau", low=0.0, low_open=True)
    a = real(a, "a", low=0.0, low_open=True)
    b = real(b, "b", low=0.0, low_open=True)
    n = real(n, "n", low=0.0, low_open=True)
    x0 = real(x0, "x0", low=0.0, low_open=True)
    delta = real(delta, "delta", low=0.0, high=tau, low_open=True)
    sub = integer(subsample, "subsample", low=1)
    skip = integer(discard, "discard", low=0)
    squash = flag(squash, "squash")
    if delta * b >= 1.0:
        raise ValueError(f"delta * b must be < 1 for a stable Euler step, got {delta * b:g}")
    D = max(1, round(tau / delta))
    total = (N + skip) * sub  # Euler steps after the initial value
    y = np.empty(D + 1 + total)
    y[: D + 1] = x0  # y_{-D} .. y_0
    c = 1.0 - delta * b
    powers = c ** np.arange(1, D + 1)  # c^1 .. c^D
    k = D  # index of y_0
    while k < D + total:
        L = min(D, D + total - k)
        lagged = y[k - D : k - D + L]
        g = delta * a * lagged / (1.0 + lagged**n)  # (L,) forcing of steps k .. k+L-1
        acc = np.cumsum(g / powers[:L])  # sum_{i<=j-1} c^{-(i+1)} g_i
        y[k + 1 : k + 1 + L] = powers[:L] * (y[k] + acc)
        k += L
    out = y[D + sub : D + 1 + total : sub][skip:]
    return np.tanh(out - 1.0) if squash else out


# ----------------------------------------------------------------------------- torch


def one_hot(ids: np.ndarray, n_classes: int, dtype=np.float32) -> np.ndarray:
    """``(..., n_classes)`` one-hot encoding of integer ``ids`` in ``[0, n_classes)``."""
    n_classes = integer(n_classes, "n_classes", low=1)
    ids = int_array(ids, "ids", low=0, high=n_classes - 1)
    return np.eye(n_classes, dtype=dtype)[ids]


def to_torch(*arrays, device=None):
    """The arrays as torch tensors on ``device`` (default :func:`seqlearn.device.default_device`).

    Floating arrays become ``float32`` unless they are ``float64``; integers ``int64``.
    Returns a tuple, one tensor per array.
    """
    import torch

    from .device import resolve_device

    device = resolve_device(device)
    return tuple(torch.as_tensor(np.asarray(a), device=device) for a in arrays)
