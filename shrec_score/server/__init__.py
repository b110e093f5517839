"""``shrec-score serve``, a contest's submission server (issue 32; docs/server.md).

Modules: contest (CONTEST.yaml), store (SQLite and run files), archive (unpack and check an upload), jobs
(one scoring at a time, in a child process under limits), app (routes and pages), service (what a request
gets done) and views (what a page or the API shows).  Needs the ``server`` extra.
"""
