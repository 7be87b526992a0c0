r"""The two array namespaces an echo state network runs on: NumPy float64 and torch float64.

:class:`EchoStateNetwork <seqlearn.reservoir.EchoStateNetwork>` writes its state update and
its ridge solve once, against the few operations below; ``device=None`` picks
:class:`NumPyArrays` (no torch import), a device :class:`TorchArrays` on that device. Both
satisfy the same interface: ``asarray`` (to the namespace's float64 array), ``numpy`` (back to
NumPy), ``empty``, ``transpose``, ``tanh``, ``recurrent`` (the matrix :math:`W` in the form its
products are fastest in) and ``solve_pos`` (a symmetric positive definite solve by Cholesky).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["IllConditionedWarning", "NumPyArrays", "TorchArrays", "arrays_for"]

_SPARSE_MIN_UNITS = 400  # W @ x as a CSR product from this size on (when W is sparse enough)
_SPARSE_MAX_DENSITY = 0.25  # above this fraction of non-zeros the dense product is as fast


class IllConditionedWarning(UserWarning):
    """The ridge problem's normal equations are (nearly) singular: raise ``ridge``."""


def _warn_ill_conditioned(problem: str, beta: float) -> None:
    warnings.warn(
        f"the ridge problem is ill-conditioned ({problem}) with ridge={beta:g}; "
        "raise ridge or shorten the washout-free states; using least squares",
        IllConditionedWarning,
        stacklevel=4,
    )


def sparse_enough(W: np.ndarray) -> bool:
    """Whether products with ``W`` ``(N, N)`` are faster in CSR form than dense."""
    N = W.shape[0]
    return N >= _SPARSE_MIN_UNITS and np.count_nonzero(W) <= _SPARSE_MAX_DENSITY * N * N


class NumPyArrays:
    """NumPy float64 (``device=None``); a sparse :math:`W` multiplies in SciPy's CSR form."""

    device = None

    def asarray(self, a) -> np.ndarray:
        return np.asarray(a, dtype=np.float64)

    def numpy(self, a) -> np.ndarray:
        return np.asarray(a)

    def empty(self, *shape: int) -> np.ndarray:
        return np.empty(shape)

    def transpose(self, a: np.ndarray, *axes: int) -> np.ndarray:
        return a.transpose(axes)

    tanh = staticmethod(np.tanh)

    def recurrent(self, W: np.ndarray):
        """``W`` ``(N, N)`` as a CSR matrix when that multiplies faster (large and sparse), else as it is."""
        if not sparse_enough(W):
            return W
        from scipy.sparse import csr_array

        return csr_array(W)

    def solve_pos(self, A: np.ndarray, rhs: np.ndarray, beta: float) -> np.ndarray:
        """``A^{-1} rhs`` by Cholesky (LAPACK ``posv`` via SciPy); least squares with an
        :class:`IllConditionedWarning` when ``A`` is singular to working precision."""
        import scipy.linalg

        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            try:
                return scipy.linalg.solve(A, rhs, assume_a="pos")
            except (scipy.linalg.LinAlgWarning, np.linalg.LinAlgError) as err:
                problem = str(err)
        _warn_ill_conditioned(problem, beta)
        return scipy.linalg.lstsq(A, rhs)[0]


class TorchArrays:
    """torch float64 on ``device`` (a ``torch.device`` from :func:`seqlearn.device.resolve_device`)."""

    def __init__(self, device):
        import torch

        self.torch = torch
        self.device = device

    def asarray(self, a):
        return self.torch.as_tensor(a, dtype=self.torch.float64, device=self.device)

    def numpy(self, a) -> np.ndarray:
        return a.detach().cpu().numpy()

    def empty(self, *shape: int):
        return self.torch.empty(shape, dtype=self.torch.float64, device=self.device)

    def transpose(self, a, *axes: int):
        return a.permute(axes)

    def tanh(self, z):
        return self.torch.tanh(z)

    def recurrent(self, W: np.ndarray):
        """``W`` as a dense tensor on the device (torch's sparse products are slower here)."""
        return self.asarray(W)

    def solve_pos(self, A, rhs, beta: float):
        """``A^{-1} rhs`` by Cholesky on the device. When the factorisation fails or its
        diagonal shows a condition number :math:`(\\max L_{ii} / \\min L_{ii})^2` beyond
        :math:`1/\\epsilon`, the NumPy solve decides (on the CPU, with its warning)."""
        L, info = self.torch.linalg.cholesky_ex(A)
        if int(info) == 0:
            d = self.torch.diagonal(L)
            if float(d.min() / d.max()) ** 2 >= np.finfo(np.float64).eps:
                return self.torch.cholesky_solve(rhs, L)
        return self.asarray(NumPyArrays().solve_pos(self.numpy(A), self.numpy(rhs), beta))


def arrays_for(device) -> NumPyArrays | TorchArrays:
    """The namespace for ``device``: NumPy for ``None``, torch float64 on the device otherwise."""
    if device is None:
        return NumPyArrays()
    from ..device import resolve_device

    dev = resolve_device(device)
    if dev.type == "mps":
        raise ValueError(f"device={device!r}: the echo state network computes in float64, which MPS does not support")
    return TorchArrays(dev)
