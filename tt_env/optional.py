"""Optional dependencies: which extra of the package provides each, and errors that say how to install it.

The environment needs only numpy, gymnasium and pettingzoo (``pip install three-thirteen``).
Training, the trained agents, the evaluator's tables and plots, pictures, RLlib and OpenSpiel
need extras. A tool that needs one checks for it before doing any work (:func:`require`) and
stops with one line that names the package and the ``pip install`` command, never with a
``ModuleNotFoundError`` after twenty minutes of games.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

EXTRA_OF = {
    "torch": "train", "stable_baselines3": "train", "sb3_contrib": "train", "tensorboard": "train",
    "yaml": "train", "rich": "train", "tqdm": "train", "matplotlib": "train",
    "PIL": "render", "ray": "rllib", "pyspiel": "openspiel", "open_spiel": "openspiel",
}
"""The extra that installs each optional module (by its import name)."""

PIP_NAME = {"yaml": "PyYAML", "PIL": "Pillow", "ray": "ray[rllib]", "pyspiel": "open_spiel",
            "stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib"}
"""The distribution name of a module whose import name differs from it."""


class MissingDependencyError(ImportError, ValueError):
    """An optional package that a feature needs is not installed.

    An ``ImportError`` (what it is) and a ``ValueError`` (what the command-line tools catch to
    refuse an argument in one line, like an unknown agent name).
    """


def install_hint(module: str, extra: str | None = None) -> str:
    """How to install the top-level ``module``: ``extra``, else the extra that has it, else the package itself."""
    top = module.split(".")[0]
    extra = extra or EXTRA_OF.get(top)
    if extra:
        return f"pip install 'three-thirteen[{extra}]'"
    return f"pip install {PIP_NAME.get(top, top)}"


def missing_text(module: str, what: str, extra: str | None = None) -> str:
    """``"<what> needs torch, which is not installed: pip install 'three-thirteen[train]'"``."""
    top = module.split(".")[0]
    shown = PIP_NAME.get(top, top)
    return f"{what} needs {shown}, which is not installed: {install_hint(top, extra)}"


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The ``modules`` that cannot be imported here (each is imported: a check that cannot be fooled)."""
    missing = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


def require(modules: Iterable[str], what: str, extra: str | None = None) -> None:
    """Raise :class:`MissingDependencyError` naming the first of ``modules`` that is not installed.

    ``what`` is what needs them (``"the results table"``); ``extra`` the extra to suggest
    (default: the one that has the module).
    """
    missing = missing_modules(modules)
    if missing:
        raise MissingDependencyError(missing_text(missing[0], what, extra), name=missing[0].split(".")[0])


def missing_dependency(exc: ImportError, what: str) -> MissingDependencyError | None:
    """``exc`` as a :class:`MissingDependencyError` when it is an optional package missing, else ``None``.

    ``None`` for an ``ImportError`` of anything else (a bug, a broken install): that one should
    surface as it is.
    """
    name = getattr(exc, "name", None) or ""
    top = name.split(".")[0]
    if isinstance(exc, ModuleNotFoundError) and top in EXTRA_OF:
        return MissingDependencyError(missing_text(top, what), name=top)
    return None
