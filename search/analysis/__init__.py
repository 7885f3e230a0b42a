"""Measuring compute against accuracy: ``scaling`` (the exact maj@k, pass@k and verifier
estimators with their intervals), ``pools`` (sampled chain pools per problem), ``sweeps`` (the
curves the Scaling page plots, as data), ``simulate`` (exact vote accuracy from answer
distributions), ``adaptive`` (early stopping simulated on pools, and the allocation of a
token budget across a problem set), ``sequential`` (thinking longer against thinking wider at
equal tokens), ``tradeoff`` and ``tradeoff_data`` (training compute against thinking compute:
frontier, exchange rate, deployment cost, and the measured pools of the checkpoints). Imports
the spine, models and strategies; never ui, pages or viz.
"""
