"""The command line, ``python -m search`` (``main``: solve, curve, train, train-verifier, table
...) and the experiment table (``table``). The top of search/: may import every room below it.
"""
