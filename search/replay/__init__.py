"""Reading a run's event log back: ``timeline`` (the tree, votes and tally at any token budget;
trajectories), ``mcts_steps`` and ``beam_steps`` (a run cut into the phases of each MCTS
simulation or beam round for the step-by-step pages). Pure functions of a SearchResult; no
Streamlit, no model.
"""
