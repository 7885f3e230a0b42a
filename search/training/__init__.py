"""Training the bundled models: ``train`` (the policy and the task training mixes),
``verifier_train`` (ORM/PRM training on sampled chains), ``checkpoints`` (snapshots along one
training run, for Train vs test), and ``card`` / ``retry_card`` (the model cards written beside
the weights, with measured accuracies). The top of search/ but the CLI: it may import every
other room; only the CLI imports it.
"""
