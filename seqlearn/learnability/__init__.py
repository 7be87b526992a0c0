r"""Chapter 5: the learnability window of gated recurrent networks (Livi, arXiv 2512.05790).

How far back can a gated network *learn* a dependency from :math:`N` noisy samples, as opposed to
how far back its gradients merely survive? :mod:`~seqlearn.learnability.stable` has the
:math:`\alpha`-stable tools (sampling, the ECF and McCulloch estimators of :math:`\alpha`,
:math:`\kappa_\alpha = \alpha / (\alpha - 1)`); :mod:`~seqlearn.learnability.window` the
detectability statistics (SNR, :math:`N_{req}(\ell)`, the window :math:`H_N`, its closed forms and
the master law); :mod:`~seqlearn.learnability.transport` the five architectures' transport factors
:math:`\Gamma`.
"""
