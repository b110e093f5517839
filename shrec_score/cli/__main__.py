"""``python -m shrec_score.cli``: the console script."""

from . import main

main()
