"""Running searches: ``solve`` (one run from text, the entry point of the CLI and the pages),
``resume`` (recorded model calls replayed so a stopped run goes on), ``edits`` (a person's
edits to a tree), ``history`` (saved runs in SQLite) and three modules for a run watched
live, no Streamlit in any: ``live_run`` (the run's settings, the run object, the stoppable
solve), ``search_process`` (where it runs: the inference worker process and its run queue, or
an app thread) and ``redraw`` (when the live panel redraws). Imports
the spine, models and strategies; never ui, pages or viz.
"""
