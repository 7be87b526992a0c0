r"""Chapter 5: the learnability window of gated recurrent networks (Livi, arXiv 2512.05790).

How far back can a gated network *learn* a dependency from :math:`N` noisy samples, as opposed to
how far back its gradients merely survive? :mod:`~seqlearn.learnability.stable` has the
:math:`\alpha`-stable tools (sampling, the ECF and McCulloch estimators of :math:`\alpha`,
:math:`\kappa_\alpha = \alpha / (\alpha - 1)`); :mod:`~seqlearn.learnability.window` the
detectability statistics (SNR, :math:`N_{req}(\ell)`, the window :math:`H_N`, its closed forms and
the master law); :mod:`~seqlearn.learnability.effective_rates` the five architectures' transport factors
:math:`\Gamma`; :mod:`~seqlearn.learnability.models` the five architectures (ConstGate,
SharedGate, DiagGate, and Chapter 4's GRU and LSTM cells) with their gate intermediates;
:mod:`~seqlearn.learnability.task` the delayed multi-lag regression and a network that fits it;
:mod:`~seqlearn.learnability.matched` the matched statistic (forward sensitivities by
:func:`torch.func.jvp`) and its per-neuron terms; :mod:`~seqlearn.learnability.masterlaw` a master-law
test that the envelope cannot cancel from (cross-fitted orientation, a sign-flip null);
:mod:`~seqlearn.learnability.fits` the envelope, time-scale and
master-law fits; :mod:`~seqlearn.learnability.pipeline` the diagnostics of a trained network in
the paper's order and the whole trained-network experiment; :mod:`~seqlearn.learnability.long_lags`
that experiment at task lags far beyond ConstGate's time scale, shipped as a results file beside the
chapter with the command that regenerates it; :mod:`~seqlearn.learnability.toy` an
exactly solvable bank of leaky units whose sampled detection shows :math:`N_{req} \propto
f^{-\kappa_\alpha}` and :math:`H_N` beside their closed forms. Everything
loads on first use: importing ``seqlearn.learnability`` loads neither scipy nor torch.
"""

from .._lazy import lazy_exports, lazy_table

_LAZY = lazy_table(
    __path__,
    [
        "stable",
        "window",
        "models",
        "task",
        "ensemble",
        "matched",
        "masterlaw",
        "fits",
        "toy",
        "pipeline",
        "long_lags",
        "effective_rates",
    ],
)

__all__ = [name for names in _LAZY.values() for name in names]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
