"""Chapter 4, reservoir computing: echo state networks (NumPy; scipy loads on first use).

:mod:`~seqlearn.reservoir.esn` has the leaky echo state network (sparse random reservoir
scaled to a spectral radius, ridge readout, open-loop prediction and closed-loop
generation); :mod:`~seqlearn.reservoir.diagnostics` the echo-state-property check, Jaeger's
memory capacity and the NRMSE. The Mackey-Glass series is :func:`seqlearn.tasks.mackey_glass`.
``device=`` (``"cpu"``, ``"cuda"``, ...) runs a network's state updates and ridge solve in
torch float64 on that device; the default ``None`` stays in NumPy and never imports torch.
"""

from .diagnostics import echo_state_distance, memory_capacity, nrmse
from .esn import ACTIVATIONS, EchoStateNetwork, IllConditionedWarning, ridge_readout, spectral_radius

__all__ = [
    "ACTIVATIONS",
    "EchoStateNetwork",
    "IllConditionedWarning",
    "echo_state_distance",
    "memory_capacity",
    "nrmse",
    "ridge_readout",
    "spectral_radius",
]
