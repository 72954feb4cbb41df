"""Every ```python block of the README and of the documentation pages runs on its own, as a reader
would paste it (issue 19, section 5; the pages under docs/ since issue 24 moved the README's
sections there: tests/doc_pages.py says which pages).

Each block runs alone in a fresh interpreter, in an empty temporary folder, with a time limit.
A block whose last lines are comments (``# 10 ['5C 5D 5S', ...]``) documents its output: the
printed lines must be exactly those. A block that is deliberately a fragment starts with the
line ``# fragment`` and is skipped (keep these few). A block needing an extra that is not
installed here (OpenSpiel, Pillow) is skipped with that reason.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from doc_pages import ROOT, page_with, python_blocks
from tt_env.agents import agent_names
from tt_env.optional import EXTRA_OF

FRAGMENT = "# fragment"
TIME_LIMIT = 120


def documented_output(block: str) -> list[str] | None:
    """The comment lines that end ``block`` (its documented output, ``# `` removed), or None."""
    lines = block.rstrip("\n").splitlines()
    tail: list[str] = []
    while lines and lines[-1].startswith("# "):
        tail.insert(0, lines.pop()[2:])
    return tail or None


PAGES_AND_BLOCKS = python_blocks()
BLOCKS = [block for _, block in PAGES_AND_BLOCKS]


@pytest.mark.parametrize("index", range(len(BLOCKS)),
                         ids=[f"{i}:{page}:{b.splitlines()[0][:40]}" for i, (page, b) in enumerate(PAGES_AND_BLOCKS)])
def test_every_python_block_runs_on_its_own(index, tmp_path):
    page, block = PAGES_AND_BLOCKS[index]
    if block.startswith(FRAGMENT):
        pytest.skip("a deliberate fragment")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=TIME_LIMIT)
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", proc.stderr)
    if proc.returncode and missing and missing.group(1).split(".")[0] in EXTRA_OF:
        pytest.skip(f"needs {missing.group(1)}, not installed here")
    assert proc.returncode == 0, f"{page}: block {index} fails on its own:\n{block}\n{proc.stderr}"
    expected = documented_output(block)
    if expected is not None:
        assert proc.stdout.strip().splitlines() == expected


def test_fragments_are_few():
    assert sum(b.startswith(FRAGMENT) for b in BLOCKS) <= 2
    # The README held 12 blocks before its sections moved to docs/ (issue 24); it keeps a tour of 3.
    assert len(BLOCKS) >= 15, "the examples of the README and the pages were not found"
    assert sum(page == "README.md" for page, _ in PAGES_AND_BLOCKS) >= 3, "the README's tour lost its examples"
    pages = {page for page, _ in PAGES_AND_BLOCKS}
    assert {"docs/game.md", "docs/environment.md", "docs/agents.md", "docs/belief.md", "docs/play.md",
            "docs/openspiel.md", "docs/rlcard.md"} <= pages, pages


def test_documented_output_is_read_from_the_trailing_comments():
    assert documented_output("x = 1\n# a comment\nprint(x)\n# 1\n# 2\n") == ["1", "2"]
    assert documented_output("print(1)\n") is None


def test_the_play_section_names_every_agent():
    """The opponents the play page's terminal section lists are the registry's (scripted and shipped)."""
    text = page_with("## Play in the terminal")
    start = text.index("## Play in the terminal")
    paragraph = text[start:text.index("![The terminal game]", start) + 2000]
    listed = text[text.index("Opponents are registry names", start):].split(" or checkpoint paths")[0]
    assert set(re.findall(r"`([a-z0-9-]+-v\d+)`", listed)) == set(agent_names()), listed
    assert "--opponents" in paragraph
