"""The README as the front page and the documentation site around it (issue 24, section 8).

The README stays short and opens with the two commands that set up, train and test; every other
page lives in docs/ and is in mkdocs.yml's nav. ``mkdocs build --strict`` (run by .ci/run) checks
the links and the API reference; these checks need no MkDocs.
"""

from __future__ import annotations

import re

from doc_pages import DOCS, README, ROOT, doc_pages, name_of

MAX_README_LINES = 400

TWO_COMMANDS = """\
```bash
# 1. Set up, train a default agent briefly and evaluate it against the scripted opponents:
python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e ".[train]" && python -m training.main_job

# 2. Set up and run the tests:
python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e ".[train,render,rllib,openspiel,rlcard,web,dev]" && python -m pytest -q -n auto --dist loadfile
```
"""


def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines: move sections to docs/"


def test_the_readme_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    title, rest = text.split("\n", 1)
    assert title == "# three-thirteen"
    assert rest.lstrip("\n").startswith(TWO_COMMANDS), "README.md must open with the two commands, exactly"
    assert TWO_COMMANDS in (DOCS / "getting-started.md").read_text(encoding="utf-8")


def test_ci_runs_what_the_readme_says():
    """.ci/run installs the torch the commands pin before anything else, runs their test command,
    and builds the site strictly."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    torch, extras = ci.index('pip install -q "torch==2.13.0"'), ci.index('pip install -q -e ".[')
    assert torch < extras
    assert "\npython -m pytest -q -n auto --dist loadfile\n" in ci
    assert "docs" in re.search(r'pip install -q -e "\.\[([\w,]+)\]"', ci).group(1).split(",")
    assert "mkdocs build --strict" in ci


def _nav_pages() -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r"^\s+-\s+(?:[^:\n]+:\s+)?(\S+\.md)\s*$", nav, flags=re.M)


def test_the_nav_lists_every_page_once():
    nav = _nav_pages()
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages, set(nav) ^ set(pages)
    assert len(nav) == len(set(nav))


def test_the_readme_and_pages_link_to_files_that_exist():
    """Relative links work on GitHub too: every one names a file of the repository."""
    for page in doc_pages():
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            assert (page.parent / path).exists(), f"{name_of(page)} links to {target}, which does not exist"
