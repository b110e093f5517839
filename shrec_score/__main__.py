"""``python -m shrec_score``: the console script ``shrec-score``."""

from .cli import main

if __name__ == "__main__":
    main()
