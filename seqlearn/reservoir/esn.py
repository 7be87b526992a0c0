r"""The leaky echo state network (Jaeger 2001; Lukoševičius 2012) in NumPy.

With input :math:`u_t \in \mathbb R^{d}`, state :math:`x_t \in \mathbb R^{N}` and leak rate
:math:`a \in (0, 1]`:

.. math::

    x_t = (1 - a)\, x_{t-1} + a \tanh(W_{in} u_t + W x_{t-1} + b), \qquad
    y_t = W_{out} [1; u_t; x_t].

:math:`W` (``(N, N)``) is sparse and random, rescaled to the spectral radius
:math:`\rho(W)`; :math:`W_{in}` (``(N, d)``) and :math:`b` (``(N,)``) are uniform; only
:math:`W_{out}` (``(m, 1 + d + N)``) is learned, by ridge regression on the states after a
washout: with the feature rows :math:`z_t = [1; u_t; x_t]` stacked in :math:`Z`,

.. math:: W_{out}^\top = (Z^\top Z + \beta I)^{-1} Z^\top Y,

solved by Cholesky on the normal equations (no explicit inverse).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..validation import choice, flag, generator, integer, real, real_array

__all__ = ["ACTIVATIONS", "EchoStateNetwork", "IllConditionedWarning", "ridge_readout", "spectral_radius"]

ACTIVATIONS = ("tanh", "identity")
_DENSE_EIG_MAX = 400  # dense eigvals up to this size, scipy.sparse.linalg.eigs above


class IllConditionedWarning(UserWarning):
    """The ridge problem's normal equations are (nearly) singular: raise ``ridge``."""


def spectral_radius(W) -> float:
    r""":math:`\rho(W) = \max_i |\lambda_i(W)|` of a square matrix (dense eigvals when small,
    ARPACK's largest-magnitude eigenvalue otherwise)."""
    W = real_array(W, "W", ndim=2)
    if W.shape[0] != W.shape[1] or W.shape[0] == 0:
        raise ValueError(f"W must be a non-empty square matrix, got shape {W.shape}")
    n = W.shape[0]
    if n <= _DENSE_EIG_MAX:
        return float(np.abs(np.linalg.eigvals(W)).max())
    from scipy.sparse.linalg import eigs

    # several eigenvalues and a fixed start: the outer eigenvalues of a random matrix crowd the
    # circle, and ARPACK's k=1 from a random start may stop at the wrong one
    k = min(8, n - 2)
    vals = eigs(
        W, k=k, which="LM", v0=np.ones(n), ncv=min(n, 4 * k + 1), tol=0, maxiter=100 * n, return_eigenvectors=False
    )
    return float(np.abs(vals).max())


def ridge_readout(Z, Y, ridge: float) -> np.ndarray:
    r"""The ridge solution :math:`W = (Z^\top Z + \beta I)^{-1} Z^\top Y` without an inverse.

    Parameters
    ----------
    Z : array, shape ``(T, p)``
        Feature rows (a column of ones included by the caller if a bias is wanted).
    Y : array, shape ``(T, m)`` or ``(T,)``
    ridge : float
        :math:`\beta \ge 0`.

    Returns
    -------
    numpy.ndarray, shape ``(p, m)`` (or ``(p,)`` for 1-D ``Y``)

    Solves the normal equations by Cholesky (``scipy.linalg.solve(assume_a="pos")``). An
    ill-conditioned system (reciprocal condition below machine precision) gives an
    :class:`IllConditionedWarning`; a singular one (``ridge = 0`` and rank-deficient ``Z``) a
    warning and the minimum-norm least-squares solution.
    """
    import scipy.linalg

    Z = real_array(Z, "Z", ndim=2)
    Y = real_array(Y, "Y", ndim=(1, 2))
    beta = real(ridge, "ridge", low=0.0)
    if Y.shape[0] != Z.shape[0]:
        raise ValueError(f"Z and Y must have the same number of rows, got {Z.shape[0]} and {Y.shape[0]}")
    A = Z.T @ Z
    A[np.diag_indices_from(A)] += beta
    rhs = Z.T @ Y
    with warnings.catch_warnings():
        warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
        try:
            return scipy.linalg.solve(A, rhs, assume_a="pos")
        except (scipy.linalg.LinAlgWarning, np.linalg.LinAlgError) as err:
            problem = str(err)
    warnings.warn(
        f"the ridge problem is ill-conditioned ({problem}) with ridge={beta:g}; "
        "raise ridge or shorten the washout-free states; using least squares",
        IllConditionedWarning,
        stacklevel=2,
    )
    return scipy.linalg.lstsq(A, rhs)[0]


def _activation(name: str):
    return np.tanh if name == "tanh" else (lambda z: z)


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
        :math:`W_{in} \sim U(-s, s)`, :math:`s \ge 0`.
    bias_scaling : float
        :math:`b \sim U(-s_b, s_b)`, :math:`s_b \ge 0`.
    leak_rate : float
        :math:`a \in (0, 1]`.
    density : float
        Fraction of non-zero entries of :math:`W` (uniform :math:`U(-1, 1)` values), in (0, 1].
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

    Attributes
    ----------
    W : ``(N, N)``; W_in : ``(N, d)``; b : ``(N,)``
    W_out_ : ``(m, 1 + d + N)`` (or ``(m, 1 + N)``), set by :meth:`fit`.
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
        rho = None if spectral_radius is None else real(spectral_radius, "spectral_radius", low=0.0, low_open=True)
        self.spectral_radius = rho
        rng = generator(seed, "seed")
        if W is None:
            if rho is None:
                raise ValueError("spectral_radius must be given when W is not")
            mask = rng.random((N, N)) < self.density
            W = np.where(mask, rng.uniform(-1.0, 1.0, (N, N)), 0.0)
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
        self.W_in = rng.uniform(-self.input_scaling, self.input_scaling, (N, self.input_size))
        self.b = rng.uniform(-self.bias_scaling, self.bias_scaling, N)
        self._f = _activation(self.activation)

    # ------------------------------------------------------------------ states

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
        B, T, _ = U.shape
        x = np.zeros((B, self.hidden_size))
        if x0 is not None:
            x = x + real_array(x0, "x0", ndim=(1, 2))
            if x.shape != (B, self.hidden_size):
                raise ValueError(f"x0 must have shape ({self.hidden_size},) or ({B}, {self.hidden_size})")
        drive = U @ self.W_in.T + self.b  # (B, T, N): the input part of every step at once
        a, WT, f = self.leak_rate, self.W.T, self._f
        states = np.empty((B, T, self.hidden_size))
        for t in range(T):
            x = (1.0 - a) * x + a * f(drive[:, t] + x @ WT)
            states[:, t] = x
        return (states, x) if batched else (states[0], x[0])

    def _features(self, U: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``[1; u_t; x_t]`` rows, shape ``(..., 1 + d + N)`` (``u`` left out unless ``include_input``)."""
        ones = np.ones((*X.shape[:-1], 1))
        return np.concatenate([ones, U, X] if self.include_input else [ones, X], axis=-1)

    # ------------------------------------------------------------------ training

    def fit(self, u, y) -> EchoStateNetwork:
        r"""Learn :math:`W_{out}` by ridge regression of ``y`` on the post-washout features.

        ``u``: ``(T, d)``/``(T,)`` or ``(B, T, d)``; ``y``: ``(T, m)``/``(T,)`` or
        ``(B, T, m)`` aligned with ``u`` (``y_t`` is the target read out at step ``t``). The
        first ``washout`` steps of every sequence are discarded. Returns ``self``.
        """
        U = self._inputs(u)
        Y = real_array(y, "y", ndim=(1, 2, 3))
        self.output_ndim_ = Y.ndim if np.ndim(u) == 3 else Y.ndim + 1
        if Y.ndim == 1:
            Y = Y[:, None]
        if Y.ndim == 2:
            Y = Y[None]
        if Y.shape[:2] != U.shape[:2]:
            raise ValueError(f"y must have the batch and time axes of u, got {Y.shape[:2]} and {U.shape[:2]}")
        T = U.shape[1]
        if self.washout >= T:
            raise ValueError(f"washout must be smaller than the sequence length {T}, got {self.washout}")
        X, _ = self.run(U)
        Z = self._features(U, X)[:, self.washout :].reshape(-1, self._n_features())
        W = ridge_readout(Z, Y[:, self.washout :].reshape(len(Z), -1), self.ridge)
        self.W_out_ = W.T  # (m, p)
        self.output_size_ = W.shape[1]
        self.last_state_ = X[:, -1].copy()
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
        X, _ = self.run(u, x0)
        U = self._inputs(u) if X.ndim == 3 else self._inputs(u)[0]
        out = self._features(U, X) @ self.W_out_.T
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
        _, x = self.run(U[0])
        u = U[0, -1]
        a, f, out = self.leak_rate, self._f, np.empty((n, self.input_size))
        for t in range(n):
            u = self._features(u, x) @ self.W_out_.T
            out[t] = u
            x = (1.0 - a) * x + a * f(self.W_in @ u + self.W @ x + self.b)
        return out[:, 0] if one_d else out


spectral_radius_of = spectral_radius  # the constructor's argument shadows the function's name
