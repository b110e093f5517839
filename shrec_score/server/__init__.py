"""``shrec-score serve``: a contest's submission server (issue 32).

* :mod:`~shrec_score.server.contest` reads and checks ``CONTEST.yaml``;
* :mod:`~shrec_score.server.store` keeps teams and runs (SQLite in WAL mode,
  the run files under the contest's ``data:`` folder, each made durable
  before its row is committed);
* :mod:`~shrec_score.server.archive` unpacks an upload, refusing hostile
  members, and checks the run with :mod:`shrec_score.check`;
* :mod:`~shrec_score.server.worker` scores one run in a child process under
  CPU-time and memory limits (the CLI itself, with the contest's preset);
* :mod:`~shrec_score.server.jobs` runs the jobs one at a time;
* :mod:`~shrec_score.server.app` is the Starlette application (its routes);
  :mod:`~shrec_score.server.service` what it does for a request (who asks,
  admission, the upload), :mod:`~shrec_score.server.pages` its HTML pages.

Needs the ``server`` extra (starlette, uvicorn, python-multipart, jinja2).
"""
