"""Every example of the documentation runs (issue 33): each ```sh, ```console
and ```python block of README.md and docs/*.md, from a scratch copy of the
repository (sample_runs/, configs/ and the pages copied; ../shared reachable
through a symlink when it is present), as a reader would run it from the
repository root.

- ```sh: the block is one bash script (``set -e``, ``pipefail``).
- ```console: the lines after a ``$`` prompt (with their ``\\`` continuation
  lines) are the commands, run as one script; the output lines are ignored.
- ```python: the blocks of one page run in order in one namespace, as a
  notebook's cells.
- A block that cannot run (it needs a server, a cluster, the reader's own
  files) has ``<!-- not-run: the reason -->`` on the line just before its
  fence, and the reason must not be empty.

Each block is a test of its own, named ``page:line``.  Every fence names its
language, so that no shell or Python block escapes this test unlabelled
(```text for a listing, a diagram or an output).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

from .conftest import ROOT, SHARED

RUN = {"sh": "sh", "bash": "sh", "console": "console", "python": "python"}
FENCE = re.compile(r"^( *)(`{3,})(.*)$")
NOT_RUN = re.compile(r"^\s*<!--\s*not-run:(.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository, e.g. docs/usage.md
    line: int  # the fence's line, counted from 1
    lang: str  # the fence's info string ("" when none)
    code: str
    not_run: str | None  # the reason, when marked

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(text: str, page: str) -> list[Block]:
    """The fenced blocks of a Markdown text, in order (indented fences too)."""
    lines = text.splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, info = len(m.group(1)), m.group(2), m.group(3).strip()
        start, body = i, []
        i += 1
        while i < len(lines) and not re.match(rf"^ *{ticks}`*\s*$", lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        marker = NOT_RUN.match(lines[start - 1]) if start > 0 else None
        found.append(Block(page, start + 1, info.split()[0] if info else "", "\n".join(body) + "\n",
                           marker.group(1).strip() if marker else None))
        i += 1
    return found


def console_commands(code: str) -> str:
    """The commands of a console transcript: lines after ``$ `` (and their continuation lines)."""
    commands: list[str] = []
    continued = False
    for line in code.splitlines():
        if continued:
            commands.append(line)
        elif line.startswith("$ "):
            commands.append(line[2:])
        else:
            continue
        continued = line.endswith("\\")
    return "\n".join(commands) + "\n"


PAGES = ["README.md"] + sorted(os.path.join("docs", n) for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))
ALL = [b for page in PAGES for b in blocks(open(os.path.join(ROOT, page), encoding="utf-8").read(), page)]
RUNNABLE = [b for b in ALL if b.lang in RUN]
# The README opens with `make demo` / `make test` in a bare fence (tests/test_smoke.py pins it):
# they create .venv and run this suite, so that block is never run here.
OPENING = ("README.md", 3)


def test_every_fence_names_its_language():
    bare = [b.id for b in ALL if not b.lang and (b.page, b.line) != OPENING]
    assert not bare, f"fences without a language (sh, console, python, or text for the rest): {bare}"


def test_the_parser_on_a_page_written_here():
    page = "\n".join([
        "# t", "", "```console", "$ shrec-score a \\", "    --out b", "| out |", "$ ls b", "```",
        "<!-- not-run: needs a cluster -->", "```sh", "dask scheduler", "```",
        "- item", "  ```python", "  x = 1", "  ```", "```text", "```sh", "```",
    ])
    got = blocks(page, "p.md")
    assert [(b.line, b.lang, b.not_run) for b in got] == [(3, "console", None), (10, "sh", "needs a cluster"), (14, "python", None), (17, "text", None)]
    assert console_commands(got[0].code) == "shrec-score a \\\n    --out b\nls b\n"
    assert got[2].code == "x = 1\n" and got[3].code == "```sh\n"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A copy of the repository's pages, samples and presets; ../shared a symlink when present."""
    top = tmp_path_factory.mktemp("docs-examples")
    repo = top / "repo"
    repo.mkdir()
    for name in ("sample_runs", "configs", "docs"):
        shutil.copytree(os.path.join(ROOT, name), repo / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in os.listdir(ROOT):
        if name.endswith(".md"):
            shutil.copy(os.path.join(ROOT, name), repo / name)
    if os.path.isdir(SHARED):
        os.symlink(SHARED, top / "shared")
    return repo


NAMESPACES: dict[str, dict] = {}
DONE: set[Block] = set()


def run_python(block: Block) -> None:
    """Run the page's earlier Python blocks not run yet (a block picked alone), then this one."""
    namespace = NAMESPACES.setdefault(block.page, {"__name__": "__docs__"})
    for earlier in RUNNABLE:
        if earlier.page == block.page and earlier.lang == "python" and earlier.line <= block.line and earlier not in DONE and earlier.not_run is None:
            exec(compile(earlier.code, earlier.id, "exec"), namespace)  # noqa: S102 - our own documentation
            DONE.add(earlier)


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_the_block_runs(block, scratch, monkeypatch):
    if block.not_run is not None:
        assert block.not_run, f"{block.id}: <!-- not-run: --> needs its reason"
        pytest.skip(f"not-run: {block.not_run}")
    if "../shared" in block.code and not os.path.isdir(SHARED):
        pytest.skip("../shared is absent: the block reads the real contest data")
    monkeypatch.chdir(scratch)
    if RUN[block.lang] == "python":
        run_python(block)
        return
    script = block.code if RUN[block.lang] == "sh" else console_commands(block.code)
    assert script.strip(), f"{block.id}: a console block without a $ command"
    env = {k: v for k, v in os.environ.items() if k != "SHREC_SCORE_DEBUG"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # shrec-score and python of this environment
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=scratch, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{block.id} exited {r.returncode}:\n{script}\nstderr:\n{r.stderr[-3000:]}"
