"""Allowed values of each option with a fixed set, for the CLI, presets and Options (imports nothing: fast --help)."""

GRADES = ("binary", "sister")
AVERAGES = ("micro", "macro")
#: What a query the run ranks nothing for does (Settings.missing, --missing-queries).
MISSING = ("error", "skip", "zero")
RUN_FORMATS = ("auto", "lists", "matrix", "trec", "shrec2011")
MATRIX_ORDERS = ("listing", "numeric")
#: How tied items are ordered (Settings.ties, --ties).
TIES = ("rule", "expected", "optimistic", "pessimistic")
#: The fewest resamples of the randomization test and the bootstrap (fewer say little: p >= 1 / (R + 1)).
MIN_RESAMPLES = 100
