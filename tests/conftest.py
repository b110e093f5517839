import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
SHARED_DATA = os.path.join(SHARED, "data")
SEEDS = os.path.join(SHARED, "seeds")
SAMPLES = os.path.join(ROOT, "sample_runs")


def children_of(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (from /proc: Linux)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(entry))
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def foreground_job() -> None:
    """``preexec_fn`` of a child started as a shell starts a foreground job:
    SIGINT and SIGTERM at their defaults.  A test run from a background job
    (``make test &``) inherits SIGINT ignored, and the tool leaves an ignored
    signal ignored, as Python does."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture
def default_signals():
    """SIGINT and SIGTERM as in a program started in the foreground (Python's
    KeyboardInterrupt handler, the default), put back as they were after."""
    import signal

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


def shared_path(*parts: str) -> str:
    """Path under ../shared/data, or skip the test with the reason."""
    path = os.path.join(SHARED_DATA, *parts)
    if not os.path.exists(path):
        pytest.skip(f"../shared/data is absent ({path} not found): real-contest data tests skipped")
    return path
