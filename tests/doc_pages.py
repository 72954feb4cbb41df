"""The README and the documentation pages, as the tests that keep them honest read them.

The README is the front page; most of what it once held lives in ``docs/*.md`` (the MkDocs site,
``mkdocs.yml``). A test that checks a command, a table or a figure finds the one page that holds
it with :func:`page_with`, and ``tests/test_readme_examples.py`` runs the python blocks of every
page in :data:`EXAMPLE_PAGES`.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

# Pages whose python blocks tests/test_readme_examples.py does not run, and why.
NOT_RUN = {
    # tt_env.batch's own page: its example is docs/examples/batch_multi_agent.py, which
    # tests/test_batch_example.py runs; its other blocks show calls in passing.
    "docs/batched-engine.md": "tests/test_batch_example.py runs its example",
}

_SNIPPET = re.compile(r'^-+8<-+ "([^"]+)"$', flags=re.M)


def doc_pages() -> list[Path]:
    """README.md, then every page under docs/ (sorted)."""
    return [README] + sorted(DOCS.rglob("*.md"))


def name_of(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def rendered(path: Path) -> str:
    """The page's text with its ``--8<-- "file"`` lines replaced by the file, as the site shows it
    (pymdownx.snippets, paths from the repository root)."""
    return _SNIPPET.sub(lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8").rstrip("\n"),
                        path.read_text(encoding="utf-8"))


EXAMPLE_PAGES = [p for p in doc_pages() if name_of(p) not in NOT_RUN]


def python_blocks(pages: list[Path] | None = None) -> list[tuple[str, str]]:
    """``(page name, block)`` for every ```python block of ``pages`` (default: EXAMPLE_PAGES)."""
    out = []
    for page in EXAMPLE_PAGES if pages is None else pages:
        for block in re.findall(r"^```python\n(.*?)^```", rendered(page), flags=re.S | re.M):
            out.append((name_of(page), block))
    return out


def page_with(marker: str) -> str:
    """The text of the one page (README.md or docs/*.md) that contains ``marker``."""
    found = [p for p in doc_pages() if marker in p.read_text(encoding="utf-8")]
    assert len(found) == 1, f"{marker!r} should be on exactly one page, found on {[name_of(p) for p in found]}"
    return found[0].read_text(encoding="utf-8")
