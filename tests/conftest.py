import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
SHARED_DATA = os.path.join(SHARED, "data")
SEEDS = os.path.join(SHARED, "seeds")
SAMPLES = os.path.join(ROOT, "sample_runs")


def shared_path(*parts: str) -> str:
    """Path under ../shared/data, or skip the test with the reason."""
    path = os.path.join(SHARED_DATA, *parts)
    if not os.path.exists(path):
        pytest.skip(f"../shared/data is absent ({path} not found): real-contest data tests skipped")
    return path
