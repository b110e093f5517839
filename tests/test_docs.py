"""The user documentation: every relative link resolves (file and heading), and the README stays short."""

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md", "CHANGELOG.md"] + sorted(
    os.path.join("docs", name) for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md")
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code, where a link is a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(text: str) -> set[str]:
    """GitHub's ids of a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens."""
    seen: dict[str, int] = {}
    ids = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


@pytest.mark.parametrize("doc", DOCS)
def test_every_relative_link_resolves(doc):
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        text = f.read()
    for target in LINK.findall(prose(text)):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(ROOT, os.path.dirname(doc), path)) if path else os.path.join(ROOT, doc)
        assert os.path.exists(resolved), f"{doc}: {target}: no such file"
        if anchor:
            with open(resolved, encoding="utf-8") as f:
                assert anchor in anchors(f.read()), f"{doc}: {target}: no such heading"


def test_the_slugs_are_githubs():
    assert anchors("# The files of `--out`\n## Graded relevance (SHREC 2006)\n## A\n## A\n") == {
        "the-files-of---out", "graded-relevance-shrec-2006", "a", "a-1"}


def test_the_readme_is_for_users():
    """At most 250 lines (issue 29); the details are pages under docs/, each linked from the README."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert len(readme.splitlines()) <= 250
    for doc in DOCS[2:]:
        assert f"]({doc})" in readme, doc


def test_the_readme_shows_what_the_tool_prints(monkeypatch):
    """The README's first scoring is the tool's output on the psb-like sample, line for line."""
    monkeypatch.chdir(ROOT)
    from click.testing import CliRunner

    from shrec_score.cli import cli

    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    block = re.search(r"```(?:console)?\n\$ shrec-score (sample_runs/psb-like/runs .*?)\n(.*?)```", readme, re.S)
    args = [a for a in block.group(1).split() if a not in ("--out", "results/")]
    result = CliRunner().invoke(cli, ["score", *args], catch_exceptions=False)
    assert result.exit_code == 0
    assert block.group(2).splitlines() == result.output.splitlines()[: len(block.group(2).splitlines())]
