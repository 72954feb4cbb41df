"""MkDocs hooks (``mkdocs.yml``: ``hooks``) so that the pages read the same on GitHub and on the site.

- ``docs/index.md`` is the README: the site's front page is ``README.md`` itself, its links
  to ``docs/...`` made relative to the site (``docs/game.md`` -> ``game.md``).
- The learning curves that the training pages show live beside the shipped checkpoints
  (``models/checkpoints/*.learning_curve.png``, where ``training.ship`` writes them). A page links
  them as ``../models/checkpoints/NAME.png``, which works on GitHub; the site gets a copy under
  ``checkpoints/`` and the link is pointed there.
- The docstrings are written with Sphinx roles (``:class:`Rules```); the API reference shows the
  name alone, as code.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = ROOT / "models" / "checkpoints"
_ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj):<code>~?")


def readme_as_index(readme: str) -> str:
    """README.md's text with its links made relative to the site's root."""
    text = re.sub(r"\]\(docs/", "](", readme)
    return text.replace("](CHANGELOG.md)", "](changelog.md)")


def on_files(files, config):
    for picture in sorted(CHECKPOINTS.glob("*.png")):
        files.append(File.generated(config, f"checkpoints/{picture.name}", abs_src_path=str(picture)))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "index.md":
        return readme_as_index((ROOT / "README.md").read_text(encoding="utf-8"))
    return markdown.replace("](../models/checkpoints/", "](checkpoints/")


def on_page_content(html, page, config, files):
    return _ROLE.sub("<code>", html)
