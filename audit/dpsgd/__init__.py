"""DP-SGD auditing: canaries, the audit methods side by side, and Opacus.

One concern, one subpackage, above the shared engines (it reads the one-run analysis of
:mod:`privaudit.audit.engines.one_run`, which the membership audits read too, and the trade-off
engine) and below the kinds (``dpsgd-methods``, ``dpsgd-multirun``, ``dpsgd-learners`` and
``opacus``):

:mod:`~privaudit.audit.dpsgd.whitebox`
    Dirac gradient canaries on our engine and on Opacus; the per-step composed estimate and
    Clopper–Pearson over runs.
:mod:`~privaudit.audit.dpsgd.learner_canaries`
    The same observations from privaudit's learners (Cond-DP, FedAvg, Opacus' variants, the
    local releases).
:mod:`~privaudit.audit.dpsgd.normalisation`
    Whether dividing the noisy sum by a batch size leaks (Opacus and a numpy reproduction).
:mod:`~privaudit.audit.dpsgd.methods`
    The result every DP-SGD audit gives, its shared rows and option rules; every method on one
    configuration, and the multi-run audits.
:mod:`~privaudit.audit.dpsgd.learner_methods`
    The methods that apply to each learner.
:mod:`~privaudit.audit.dpsgd.opacus`
    Opacus' own ε beside privaudit's certified ε̲.
"""
