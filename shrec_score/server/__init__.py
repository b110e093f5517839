"""``shrec-score serve``, a contest's submission server (issue 32; docs/server.md; its modules: docs/architecture.md).
Needs the ``server`` extra.
"""
