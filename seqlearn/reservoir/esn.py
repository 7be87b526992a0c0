r"""The leaky echo state network (Jaeger 2001; Lukoševičius 2012), in NumPy or torch float64.

With input :math:`u_t \in \mathbb R^{d}`, state :math:`x_t \in \mathbb R^{N}` and leak rate
:math:`a \in (0, 1]`:

.. math::

    x_t = (1 - a)\, x_{t-1} + a \tanh(W_{in} u_t + W x_{t-1} + b), \qquad
    y_t = W_{out} [1; u_t; x_t].

:math:`W` (``(N, N)``) is sparse and random, rescaled to the spectral radius
:math:`\rho(W)`; :math:`W_{in}` (``(N, d)``) and :math:`b` (``(N,)``) are uniform (or
:math:`W_{in} = \pm s`, and :math:`W`'s entries normal, on request); only
:math:`W_{out}` (``(m, 1 + d + N)``) is learned, by ridge regression on the states after a
washout: with the feature rows :math:`z_t = [1; u_t; x_t]` stacked in :math:`Z`,

.. math:: W_{out}^\top = (Z^\top Z + \beta I)^{-1} Z^\top Y,

solved by Cholesky on the normal equations (no explicit inverse).

The update and the solve are written once, against the small array interface of
:mod:`seqlearn.reservoir._arrays`: ``device=None`` runs them in NumPy (a large sparse
:math:`W` multiplies in SciPy's CSR form), a torch device in torch float64 on that device.
Results come back as NumPy arrays either way.
"""

from __future__ import annotations

import numpy as np

from ..guard import reference
from ..validation import choice, flag, generator, integer, real, real_array
from ._arrays import IllConditionedWarning, arrays_for, sparse_enough

__all__ = ["ACTIVATIONS", "EchoStateNetwork", "IllConditionedWarning", "ridge_readout", "spectral_radius"]

ACTIVATIONS = ("tanh", "identity")
_DENSE_EIG_MAX = 64  # dense eigvals up to this size, ARPACK above (faster from about 100 units on)


def spectral_radius(W) -> float:
    r""":math:`\rho(W) = \max_i |\lambda_i(W)|` of a square matrix (dense eigvals when small,
    ARPACK's largest-magnitude eigenvalues otherwise, on a CSR copy when ``W`` is sparse)."""
    W = real_array(W, "W", ndim=2)
    if W.shape[0] != W.shape[1] or W.shape[0] == 0:
        raise ValueError(f"W must be a non-empty square matrix, got shape {W.shape}")
    n = W.shape[0]
    if n <= _DENSE_EIG_MAX:
        return float(np.abs(np.linalg.eigvals(W)).max())
    from scipy.sparse import csr_array
    from scipy.sparse.linalg import eigs

    # several eigenvalues and a fixed start: the outer eigenvalues of a random matrix crowd the
    # circle, and ARPACK's k=1 from a random start may stop at the wrong one
    k = min(8, n - 2)
    A = csr_array(W) if sparse_enough(W) else W
    vals = eigs(A, k, which="LM", v0=np.ones(n), ncv=min(n, 60), tol=1e-12, maxiter=100 * n, return_eigenvectors=False)
    return float(np.abs(vals).max())


def _ridge(Z, Y, beta: float, arrays):
    r""":math:`(Z^\top Z + \beta I)^{-1} Z^\top Y` in ``arrays``' namespace; ``Z`` ``(T, p)``, ``Y`` ``(T, m)``."""
    p = Z.shape[1]
    A = Z.T @ Z  # (p, p)
    A.reshape(-1)[:: p + 1] += beta  # + beta I, through a strided view of the diagonal (no p x p identity)
    return arrays.solve_pos(A, Z.T @ Y, beta)  # (p, m)


@reference
def ridge_readout(Z, Y, ridge: float, *, device=None) -> np.ndarray:
    r"""The ridge solution :math:`W = (Z^\top Z + \beta I)^{-1} Z^\top Y` without an inverse.

    Parameters
    ----------
    Z : array, shape ``(T, p)``
        Feature rows (a column of ones included by the caller if a bias is wanted).
    Y : array, shape ``(T, m)`` or ``(T,)``
    ridge : float
        :math:`\beta \ge 0`.
    device : None, str or torch.device
        ``None``: NumPy/SciPy; a device: torch float64 there.

    Returns
    -------
    numpy.ndarray, shape ``(p, m)`` (or ``(p,)`` for 1-D ``Y``)

    Solves the normal equations by Cholesky (``scipy.linalg.solve(assume_a="pos")``, or
    ``torch.linalg.cholesky_ex`` + ``cholesky_solve``). An ill-conditioned system (reciprocal
    condition below machine precision) gives an :class:`IllConditionedWarning`; a singular one
    (``ridge = 0`` and rank-deficient ``Z``) a warning and the minimum-norm least-squares
    solution.
    """
    Z = real_array(Z, "Z", ndim=2)
    Y = real_array(Y, "Y", ndim=(1, 2))
    beta = real(ridge, "ridge", low=0.0)
    if Y.shape[0] != Z.shape[0]:
        raise ValueError(f"Z and Y must have the same number of rows, got {Z.shape[0]} and {Y.shape[0]}")
    arrays = arrays_for(device)
    W = _ridge(arrays.asarray(Z), arrays.asarray(Y[:, None] if Y.ndim == 1 else Y), beta, arrays)
    W = arrays.numpy(W)
    return W[:, 0] if Y.ndim == 1 else W


def _leaky_step(x, drive, W, a: float, f):
    r"""One update :math:`x_t = (1 - a) x_{t-1} + a f(W_{in} u_t + b + W x_{t-1})`, states as columns.

    ``x``: ``(N, B)``; ``drive`` :math:`= W_{in} u_t + b`: ``(N, B)``; ``W``: ``(N, N)`` (dense or CSR).
    """
    return (1.0 - a) * x + a * f(drive + W @ x)


class EchoStateNetwork:
    r"""Leaky echo state network with a ridge readout (equations in :mod:`seqlearn.reservoir.esn`).

    Parameters
    ----------
    input_size : int
        :math:`d \ge 1`.
    hidden_size : int
        Reservoir units :math:`N \ge 1`.
    spectral_radius : float or None
        Target :math:`\rho(W) > 0`; ``None`` keeps a given ``W`` as it is.
    input_scaling : float
        :math:`s \ge 0`: :math:`W_{in} \sim U(-s, s)`, or :math:`\pm s` (see ``input_distribution``).
    bias_scaling : float
        :math:`b \sim U(-s_b, s_b)`, :math:`s_b \ge 0`.
    leak_rate : float
        :math:`a \in (0, 1]`.
    density : float
        Fraction of non-zero entries of :math:`W`, in (0, 1].
    input_distribution : ``"uniform"`` or ``"bernoulli"``
        :math:`W_{in}` entries :math:`U(-s, s)` (the default), or :math:`\pm s` with equal
        probability (ReservoirPy's choice: every unit is driven equally hard). With a strongly
        recurrent reservoir (:math:`\rho = 1.25`, leak 0.3), :math:`\pm s` inputs gave a one-step
        Mackey-Glass NRMSE about 2 times (300 units) to 10 times (2000 units) lower over three
        seeds: units that barely see the input keep echoing their own past.
    reservoir_distribution : ``"uniform"`` or ``"normal"``
        The non-zero entries of :math:`W` before the rescaling to ``spectral_radius``:
        :math:`U(-1, 1)` (the default) or :math:`\mathcal N(0, 1)` (ReservoirPy's choice).
    ridge : float
        :math:`\beta \ge 0`.
    washout : int
        States discarded at the start of each training sequence, ``>= 0``.
    activation : ``"tanh"`` or ``"identity"`` (a linear reservoir).
    include_input : bool
        Whether the readout sees :math:`u_t` besides :math:`[1; x_t]`.
    W : array ``(N, N)``, optional
        A reservoir matrix to use instead of a random one (rescaled if ``spectral_radius``).
    seed : int or numpy.random.Generator or None
        The only source of randomness.
    device : None, str or torch.device
        ``None`` (default): NumPy float64, no torch. A device (``"cpu"``, ``"cuda"``, ...): the
        state updates and the ridge solve run in torch float64 there. The weights are drawn
        the same way either way, and every result is returned as a NumPy array.

    Attributes
    ----------
    W : ``(N, N)``; W_in : ``(N, d)``; b : ``(N,)`` (NumPy arrays)
    W_out_ : ``(m, 1 + d + N)`` (or ``(m, 1 + N)``), set by :meth:`fit`.

    Examples
    --------
    One-step prediction of a sine wave:

    >>> from seqlearn.reservoir import nrmse
    >>> u = np.sin(0.3 * np.arange(400))[:, None]  # (T, d)
    >>> esn = EchoStateNetwork(1, 50, washout=50, seed=0).fit(u[:-1], u[1:])
    >>> esn.W_out_.shape  # (m, 1 + d + N)
    (1, 52)
    >>> bool(nrmse(u[1:], esn.predict(u[:-1])) < 0.1)
    True
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        spectral_radius: float | None = 0.9,
        input_scaling: float = 1.0,
        bias_scaling: float = 0.2,
        leak_rate: float = 1.0,
        density: float = 0.1,
        ridge: float = 1e-8,
        washout: int = 100,
        activation: str = "tanh",
        include_input: bool = True,
        W=None,
        seed=None,
        device=None,
        input_distribution: str = "uniform",
        reservoir_distribution: str = "uniform",
    ):
        self.input_size = integer(input_size, "input_size", low=1)
        self.hidden_size = N = integer(hidden_size, "hidden_size", low=1)
        self.input_scaling = real(input_scaling, "input_scaling", low=0.0)
        self.bias_scaling = real(bias_scaling, "bias_scaling", low=0.0)
        self.leak_rate = real(leak_rate, "leak_rate", low=0.0, high=1.0, low_open=True)
        self.density = real(density, "density", low=0.0, high=1.0, low_open=True)
        self.ridge = real(ridge, "ridge", low=0.0)
        self.washout = integer(washout, "washout", low=0)
        self.activation = choice(activation, "activation", ACTIVATIONS)
        self.include_input = flag(include_input, "include_input")
        self.input_distribution = choice(input_distribution, "input_distribution", ("uniform", "bernoulli"))
        self.reservoir_distribution = choice(reservoir_distribution, "reservoir_distribution", ("uniform", "normal"))
        rho = None if spectral_radius is None else real(spectral_radius, "spectral_radius", low=0.0, low_open=True)
        self.spectral_radius = rho
        self.device = arrays_for(device).device
        rng = generator(seed, "seed")
        if W is None:
            if rho is None:
                raise ValueError("spectral_radius must be given when W is not")
            mask = rng.random((N, N)) < self.density
            values = rng.uniform(-1.0, 1.0, (N, N)) if reservoir_distribution == "uniform" else rng.normal(size=(N, N))
            W = np.where(mask, values, 0.0)
        else:
            W = real_array(W, "W", shape=(N, N)).astype(np.float64, copy=True)
        if rho is not None:
            current = spectral_radius_of(W)
            if current < 1e-12:
                raise ValueError(
                    f"the random reservoir has spectral radius 0 (hidden_size={N}, density={self.density:g}); "
                    "raise density or hidden_size"
                )
            W *= rho / current
        self.W = W
        s, shape = self.input_scaling, (N, self.input_size)
        self.W_in = rng.uniform(-s, s, shape) if input_distribution == "uniform" else rng.choice([-s, s], shape)
        self.b = rng.uniform(-self.bias_scaling, self.bias_scaling, N)

    # ------------------------------------------------------------------ states

    def _arrays(self):
        return arrays_for(self.device)

    def _f(self, arrays):
        """The activation in ``arrays``' namespace."""
        return arrays.tanh if self.activation == "tanh" else (lambda z: z)

    def _inputs(self, u, name: str = "u") -> np.ndarray:
        """``u`` as ``(B, T, d)`` (accepts ``(T,)`` when d = 1, ``(T, d)`` and ``(B, T, d)``)."""
        u = real_array(u, name, ndim=(1, 2, 3))
        if u.ndim == 1:
            u = u[:, None]
        if u.ndim == 2:
            u = u[None]
        if u.shape[-1] != self.input_size:
            raise ValueError(f"{name} must have {self.input_size} features in its last axis, got {u.shape[-1]}")
        if u.shape[1] == 0:
            raise ValueError(f"{name} must have at least one time step")
        return u

    def _initial_state(self, x0, B: int) -> np.ndarray:
        """``x0`` (``(N,)``, ``(B, N)`` or ``None`` for zeros) as ``(B, N)``."""
        x = np.zeros((B, self.hidden_size))
        if x0 is not None:
            x = x + real_array(x0, "x0", ndim=(1, 2))
            if x.shape != (B, self.hidden_size):
                raise ValueError(f"x0 must have shape ({self.hidden_size},) or ({B}, {self.hidden_size})")
        return x

    def _states(self, U, x, arrays):
        r"""The states for inputs ``U`` ``(B, T, d)`` from ``x`` ``(B, N)``, in ``arrays``' namespace.

        Returns ``(states (T, N, B), last (N, B))``: columns are sequences, so that each step is
        one product :math:`W x` (CSR or dense).
        """
        T, N = U.shape[1], self.hidden_size
        W_in, b = arrays.asarray(self.W_in), arrays.asarray(self.b)
        drive = arrays.transpose(U @ W_in.T + b, 1, 2, 0)  # (T, N, B): every step's input part at once
        W, a, f = arrays.recurrent(self.W), self.leak_rate, self._f(arrays)
        x = x.T
        states = arrays.empty(T, N, U.shape[0])
        for t in range(T):
            x = _leaky_step(x, drive[t], W, a, f)
            states[t] = x
        return states, x

    def run(self, u, x0=None) -> tuple[np.ndarray, np.ndarray]:
        r"""Drive the reservoir: the states :math:`x_1..x_T` from :math:`x_0` (zeros by default).

        Parameters
        ----------
        u : array ``(T,)``, ``(T, d)`` or ``(B, T, d)``
        x0 : array ``(N,)`` or ``(B, N)``, optional
            The state before the first input (streaming: pass the last state of the
            previous chunk).

        Returns
        -------
        states : ``(B, T, N)`` (``(T, N)`` for unbatched ``u``)
        last : ``(B, N)`` (``(N,)``), the state after the last input.
        """
        batched = np.ndim(u) == 3
        U = self._inputs(u)
        arrays = self._arrays()
        x = self._initial_state(x0, U.shape[0])
        states, last = self._states(arrays.asarray(U), arrays.asarray(x), arrays)
        states = np.ascontiguousarray(arrays.numpy(states).transpose(2, 0, 1))  # (B, T, N)
        last = arrays.numpy(last).T.copy()  # (B, N)
        return (states, last) if batched else (states[0], last[0])

    def _features(self, U, X, arrays):
        """``[1; u_t; x_t]`` rows ``(B, T, 1 + d + N)`` from ``U`` ``(B, T, d)`` and ``X`` ``(B, T, N)``
        (``u`` left out unless ``include_input``)."""
        d = U.shape[-1] if self.include_input else 0
        Z = arrays.empty(*X.shape[:-1], 1 + d + X.shape[-1])
        Z[..., 0] = 1.0
        if d:
            Z[..., 1 : 1 + d] = U
        Z[..., 1 + d :] = X
        return Z

    # ------------------------------------------------------------------ training

    def fit(self, u, y) -> EchoStateNetwork:
        r"""Learn :math:`W_{out}` by ridge regression of ``y`` on the post-washout features.

        ``u``: ``(T, d)``/``(T,)`` or ``(B, T, d)``; ``y``: ``(T, m)``/``(T,)`` or
        ``(B, T, m)`` aligned with ``u`` (``y_t`` is the target read out at step ``t``). The
        first ``washout`` steps of every sequence are discarded. Returns ``self``.
        """
        U = self._inputs(u)
        Y = real_array(y, "y", ndim=(1, 2, 3))
        output_ndim = Y.ndim if np.ndim(u) == 3 else Y.ndim + 1
        if Y.ndim == 1:
            Y = Y[:, None]
        if Y.ndim == 2:
            Y = Y[None]
        if Y.shape[:2] != U.shape[:2]:
            raise ValueError(f"y must have the batch and time axes of u, got {Y.shape[:2]} and {U.shape[:2]}")
        B, T, _ = U.shape
        if self.washout >= T:
            raise ValueError(f"fit needs more than washout={self.washout} steps, got {T}")
        arrays, w = self._arrays(), self.washout
        U_ = arrays.asarray(U)
        states, last = self._states(U_, arrays.asarray(self._initial_state(None, B)), arrays)  # (T, N, B)
        X = arrays.transpose(states, 2, 0, 1)  # (B, T, N)
        Z = self._features(U_[:, w:], X[:, w:], arrays).reshape(-1, self._n_features())  # (B (T - w), p)
        W = _ridge(Z, arrays.asarray(Y[:, w:].reshape(len(Z), -1)), self.ridge, arrays)  # (p, m)
        self.W_out_ = arrays.numpy(W).T  # (m, p)
        self.output_ndim_ = output_ndim
        self.output_size_ = W.shape[1]
        self.last_state_ = arrays.numpy(last).T.copy()  # (B, N)
        return self

    def _n_features(self) -> int:
        return 1 + self.hidden_size + (self.input_size if self.include_input else 0)

    def _check_fitted(self) -> None:
        if not hasattr(self, "W_out_"):
            raise RuntimeError("the readout is not trained: call fit first")

    def predict(self, u, x0=None) -> np.ndarray:
        r"""Open-loop outputs :math:`y_t = W_{out}[1; u_t; x_t]` for every step of ``u``.

        Returns ``(T, m)`` (``(B, T, m)`` for batched ``u``; ``(T,)`` if trained on 1-D targets).
        """
        self._check_fitted()
        batched = np.ndim(u) == 3
        U = self._inputs(u)
        arrays = self._arrays()
        U_ = arrays.asarray(U)
        states, _ = self._states(U_, arrays.asarray(self._initial_state(x0, U.shape[0])), arrays)
        X = arrays.transpose(states, 2, 0, 1)  # (B, T, N)
        out = arrays.numpy(self._features(U_, X, arrays) @ arrays.asarray(self.W_out_.T))  # (B, T, m)
        out = out if batched else out[0]
        return out[..., 0] if self.output_ndim_ == 2 and self.output_size_ == 1 else out

    def generate(self, n_steps: int, warmup) -> np.ndarray:
        r"""Closed loop: teacher-force ``warmup`` (``(T_w, d)`` or ``(T_w,)``), then feed each output
        back as the next input.

        The readout must predict the next input (``m = d``, trained on ``y_t = u_{t+1}``).
        With :math:`x_{T_w}` the state after the warmup, :math:`\hat u_{T_w+1} = W_{out}[1;
        u_{T_w}; x_{T_w}]`, then :math:`x_{t} = (1-a)x_{t-1} + a\tanh(W_{in}\hat u_t + W
        x_{t-1} + b)` and :math:`\hat u_{t+1} = W_{out}[1; \hat u_t; x_t]`.

        Returns
        -------
        ``(n_steps, d)`` (``(n_steps,)`` for 1-D ``warmup``): :math:`\hat u_{T_w+1..T_w+n}`.
        """
        self._check_fitted()
        n = integer(n_steps, "n_steps", low=1)
        if self.output_size_ != self.input_size:
            raise ValueError(
                "generate needs a readout with as many outputs as inputs, "
                f"got {self.output_size_} and {self.input_size}"
            )
        one_d = np.ndim(warmup) == 1
        U = self._inputs(warmup, "warmup")
        if U.shape[0] != 1:
            raise ValueError("warmup must be a single sequence, (T_w,) or (T_w, d)")
        arrays = self._arrays()
        _, x = self._states(arrays.asarray(U), arrays.asarray(self._initial_state(None, 1)), arrays)  # (N, 1)
        out = arrays.numpy(self._closed_loop(n, arrays.asarray(U[0, -1:].T), x, arrays))  # (n, d)
        return out[:, 0] if one_d else out

    def _closed_loop(self, n: int, u, x, arrays):
        r"""``n`` outputs fed back as inputs, from the last input ``u`` ``(d, 1)`` and state ``x`` ``(N, 1)``.

        Columns again: :math:`\hat u = W_{out} z` with :math:`z = [1; \hat u; x]`, then the
        update with the drive :math:`W_{in} \hat u + b`. Returns ``(n, d)``.
        """
        W_in, b = arrays.asarray(self.W_in), arrays.asarray(self.b)[:, None]
        W_out = arrays.asarray(self.W_out_)  # (d, p)
        W, a, f = arrays.recurrent(self.W), self.leak_rate, self._f(arrays)
        d = self.input_size if self.include_input else 0
        z = arrays.empty(self._n_features(), 1)
        z[0] = 1.0
        out = arrays.empty(n, self.input_size)
        for t in range(n):
            z[1 : 1 + d], z[1 + d :] = u[:d], x
            u = W_out @ z  # (d, 1)
            out[t] = u[:, 0]
            x = _leaky_step(x, W_in @ u + b, W, a, f)
        return out


spectral_radius_of = spectral_radius  # the constructor's argument shadows the function's name
