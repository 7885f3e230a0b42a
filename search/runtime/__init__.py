"""Running searches: ``solve`` (one run from text, the entry point of the CLI and the pages),
``resume`` (recorded model calls replayed so a stopped run goes on), ``edits`` (a person's
edits to a tree), ``history`` (saved runs in SQLite) and ``search_process`` (a run watched
live: the inference worker process, the run queue and the redraw timing; no Streamlit). Imports
the spine, models and strategies; never ui, pages or viz.
"""
