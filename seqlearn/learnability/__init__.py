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

from .._lazy import lazy_exports

_LAZY = {
    "stable": ["kappa", "sample_stable", "StableFit", "ecf_alpha", "mcculloch_alpha", "BootstrapCI", "bootstrap_alpha"],
    "window": [
        "snr",
        "required_samples",
        "required_samples_continuous",
        "learnability_window",
        "window_exponential",
        "window_power",
        "window_logarithmic",
        "MasterLaw",
        "master_law_monte_carlo",
    ],
    "models": [
        "LeakyGates",
        "LeakyGatedCell",
        "ConstGate",
        "SharedGate",
        "DiagGate",
        "gru",
        "lstm",
        "ARCHITECTURES",
        "build",
        "Trajectory",
        "run",
        "architecture_of",
    ],
    "task": [
        "DelayedRegression",
        "delayed_regression",
        "achievable_r2",
        "GatedRegressor",
        "r2_score",
        "train_regressor",
    ],
    "ensemble": ["train_ensemble"],
    "matched": [
        "random_directions",
        "sensitivities",
        "matched_statistic",
        "matched_terms",
        "matched_statistic_and_terms",
    ],
    "masterlaw": [
        "fold_labels",
        "cross_fitted_orientation",
        "oriented_statistic",
        "sign_flip_null",
        "LagStatistic",
        "MasterLawTest",
        "master_law_test",
    ],
    "fits": ["LineFit", "fit_line", "envelope_fits", "unit_time_scales", "master_law_fit"],
    "toy": ["bank_envelope", "sign_quantile", "ToyDetection", "toy_detection"],
    "pipeline": ["Diagnostics", "diagnose", "Tier2Config", "learnability_experiment"],
    "long_lags": [
        "LONG_LAGS_COMMAND",
        "LONG_LAGS_SEEDS",
        "long_lag_config",
        "config_from_dict",
        "run_record",
        "run_long_lags",
        "write_results",
        "read_results",
        "window_curves",
    ],
    "effective_rates": [
        "tau_const",
        "transport_terms",
        "transport",
        "transport_loop",
        "recurrent_matrices",
        "adaptive_rates",
        "rayleigh_rates",
        "base_rates",
        "envelope",
        "spectrum_envelope",
    ],
}

__all__ = [name for names in _LAZY.values() for name in names]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
