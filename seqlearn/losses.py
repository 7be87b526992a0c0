r"""Masked losses: the language models' cross-entropy and the regression tasks' squared error.

:func:`masked_cross_entropy` is the one token-level loss of Chapter 2 (the window model,
where every token is real) and of every later chapter (padded batches of sentences): the
mean negative log-likelihood over the real tokens only,

.. math::
    L = \frac{\sum_t m_t \, \ell_t}{\sum_t m_t}, \qquad
    \ell_t = -\log \mathrm{softmax}(y_t)_{w_t},

so padding neither adds loss nor counts in the denominator. :func:`masked_mse` is its
counterpart for real-valued targets (Chapter 6's tasks), on NumPy arrays and torch tensors alike.
Importing this module does not import torch.
"""

from __future__ import annotations

from .guard import reference

__all__ = ["masked_cross_entropy", "masked_mse"]


def _check_inputs(logits, targets, mask):
    """Raise a clear ``TypeError``/``ValueError`` for inputs the loss cannot take."""
    import torch

    if not isinstance(logits, torch.Tensor) or not isinstance(targets, torch.Tensor):
        raise TypeError(
            f"logits and targets must be torch tensors, got {type(logits).__name__} and {type(targets).__name__}"
        )
    if not logits.is_floating_point():
        raise TypeError(f"logits must be a floating-point tensor, got dtype {logits.dtype}")
    if targets.is_floating_point() or targets.is_complex() or targets.dtype == torch.bool:
        raise TypeError(f"targets must be an integer tensor of token ids, got dtype {targets.dtype}")
    if logits.ndim < 1 or logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"logits must have shape targets.shape + (|V|,); got logits {tuple(logits.shape)} "
            f"and targets {tuple(targets.shape)}"
        )
    if mask is not None:
        if not isinstance(mask, torch.Tensor):
            raise TypeError(f"mask must be a torch tensor or None, got {type(mask).__name__}")
        if mask.shape != targets.shape:
            raise ValueError(f"mask must have the shape of targets {tuple(targets.shape)}, got {tuple(mask.shape)}")
        if mask.is_complex():
            raise TypeError(f"mask must be bool or real 0/1 numbers, got dtype {mask.dtype}")


def _real_positions(targets, mask):
    """The mask as bools (``None`` when there is none), after checking it selects a token."""
    import torch

    if mask is None:
        if targets.numel() == 0:
            raise ValueError("there are no targets: the mean loss over zero tokens is undefined")
        return None
    if mask.dtype != torch.bool and bool(((mask != 0) & (mask != 1)).any()):
        raise ValueError("mask must hold only 0 (padding) and 1 (real token)")
    real = mask != 0
    if not bool(real.any()):
        raise ValueError("the mask selects no token: the mean loss over zero tokens is undefined")
    return real


@reference
def masked_cross_entropy(logits, targets, mask=None):
    r"""Mean negative log-likelihood of the targets over the real tokens only.

    .. math::
        L = \frac{\sum_t m_t \left(-\log \mathrm{softmax}(y_t)_{w_t}\right)}{\sum_t m_t}

    The log-softmax is computed stably (``torch.nn.functional.cross_entropy``). Padded
    positions (:math:`m_t = 0`) may hold any target id (e.g. a padding id or -100): they
    are never looked up.

    Parameters
    ----------
    logits : torch.Tensor, float, shape ``(..., |V|)``
        Unnormalised scores :math:`y_t`.
    targets : torch.Tensor, integer, shape ``(...)``
        Token ids :math:`w_t \in [0, |V|)` at the real positions.
    mask : torch.Tensor, bool or 0/1 numbers, shape ``(...)``, optional
        :math:`m_t`: 1 for real tokens, 0 for padding. ``None`` means every token is real.

    Returns
    -------
    torch.Tensor
        The scalar :math:`L`, in the dtype of ``logits``, differentiable in ``logits``.

    Raises
    ------
    TypeError
        Non-tensor inputs, non-float logits, non-integer targets.
    ValueError
        Shape mismatch, a mask that selects no token or has values other than 0 and 1,
        NaN logits, target ids outside ``[0, |V|)`` at real positions.
    """
    import torch
    import torch.nn.functional as F

    _check_inputs(logits, targets, mask)
    vocab_size = logits.shape[-1]
    real = _real_positions(targets, mask)  # (...) bool, or None: every token is real
    ids = targets if real is None else targets.masked_fill(~real, 0)  # padding looks up id 0
    low, high = (int(v) for v in torch.aminmax(ids))
    if low < 0 or high >= vocab_size:
        bad = low if low < 0 else high
        raise ValueError(f"target id {bad} is outside the vocabulary (valid ids are 0..{vocab_size - 1})")
    if bool(torch.isnan(logits).any()):
        raise ValueError("logits contain NaN (a diverged model? lower the learning rate or clip gradients)")
    nll = F.cross_entropy(logits.reshape(-1, vocab_size), ids.reshape(-1), reduction="none")  # (N,)
    if real is None:
        return nll.mean()
    real = real.reshape(-1)  # (N,)
    return torch.where(real, nll, 0.0).sum() / real.sum().to(nll.dtype)


def masked_mse(y_hat, y, mask):
    r"""The masked mean squared error :math:`\sum \mu (\hat y - y)^2 / \sum \mu` over the last two axes.

    Works on NumPy arrays and torch tensors alike (the sums are the array's own).

    Parameters
    ----------
    y_hat : array or tensor, shape ``(..., B, T)``
        Outputs, e.g. ``(nets, B, T)`` for a batch of networks.
    y, mask : array or tensor, shape ``(B, T)`` or ``(..., B, T)``
        Targets and mask (broadcast against ``y_hat``); every mask needs a nonzero entry.

    Returns
    -------
    array or tensor, shape ``(...)``
        One loss per leading index (a 0-d value for ``(B, T)`` outputs).
    """
    if tuple(y.shape) != tuple(mask.shape) or tuple(y_hat.shape[-2:]) != tuple(y.shape[-2:]):
        raise ValueError(
            "y_hat (..., B, T), y and mask must agree in their last two axes and y and mask in shape, "
            f"got {tuple(y_hat.shape)}, {tuple(y.shape)}, {tuple(mask.shape)}"
        )
    counted = mask.sum(axis=(-2, -1))
    if (counted <= 0).any():
        raise ValueError("mask must count at least one step (a nonzero entry) for every loss")
    return (mask * (y_hat - y) ** 2).sum(axis=(-2, -1)) / counted
