"""What comes in from outside, checked before anything else reads it: ``runfile`` (one validator
for every run file: an upload, a History import, the CLI's ``--load``) and ``textcap`` (the one
bound on text a person or a model hands in). Imports only i18n: the bottom room, below the
tasks' users.
"""
