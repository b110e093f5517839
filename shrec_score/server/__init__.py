"""``shrec-score serve``, a contest's submission server (the ``server`` extra; docs/server.md, docs/architecture.md)."""
