"""The layers of docs/ARCHITECTURE.md, read from the imports themselves (``ast``, nothing imported).

engine <- observation <- envs and agents <- evaluation <- models and training <- benchmarks and apps

A module may import its own layer and the layers below it, never one above: not at the top of
the module, not inside a function (a lazy import is still a dependency). Import-time cycles
(module-level imports) are refused everywhere. Every module of the packages belongs to exactly
one layer, so a new module has to be placed (in ``LAYERS`` below and on the architecture page).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tt_env", "models", "training", "benchmarks")

LAYERS: list[tuple[str, list[str]]] = [
    ("engine", [r"tt_env\.engine(\..*)?", r"tt_env\.actions", r"tt_env\.optional", r"tt_env\.jsonio",
                r"tt_env\.json_input", r"tt_env\.quoting"]),
    ("observation", [r"tt_env\.observation(\..*)?", r"tt_env\.observation_checks", r"tt_env\.state"]),
    ("envs and agents", [r"tt_env", r"tt_env\.(three_thirteen_v0|gym_env|registration|env_checks|cli_checks)",
                         r"tt_env\.(agents|search|openspiel|rlcard|ui|batch)(\..*)?",
                         r"tt_env\.(simulation|replay|openspiel_game)"]),
    ("evaluation", [r"tt_env\.evaluation(\..*)?"]),
    ("models and training", [r"models(\..*)?", r"training(\..*)?"]),
    ("benchmarks and apps", [r"benchmarks(\..*)?", r"tt_env\.web(\..*)?", r"tt_env\.cli"]),
]
"""Each layer and the modules in it (regular expressions over dotted names), lowest first."""

MAX_TOP_LEVEL = 12
"""Modules at the top of ``tt_env/`` (``__init__`` and the deprecated aliases of moved modules not counted)."""

SIZE_NUMBERS = {107, 54}
"""The observation's per-player length and the action count: only ``tt_env.observation`` writes them."""
SIZE_NUMBER_EXCEPTIONS = {"training/baselines/tianshou_algo.py"}
"""``Discrete(54)`` there: the file is being hardened in parallel (issue 25); it takes
``tt_env.observation.NUM_ACTIONS`` once that lands."""


@lru_cache(maxsize=None)
def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package)."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            found[".".join(parts)] = (path, is_package)
    return found


def layer_of(module: str) -> int | None:
    for index, (_, patterns) in enumerate(LAYERS):
        if any(re.fullmatch(p, module) for p in patterns):
            return index
    return None


def _top_level_nodes(tree: ast.Module):
    """Every node run at import time: function bodies left out, class bodies and ``if``/``try`` kept."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


@lru_cache(maxsize=None)
def imports_of(module: str, import_time_only: bool) -> tuple[tuple[str, int], ...]:
    """(imported module of ours, line) for each import in ``module``."""
    path, is_package = modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if is_package else module.rpartition(".")[0]
    ours = modules()
    found = []
    for node in (_top_level_nodes(tree) if import_time_only else ast.walk(tree)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.append((target if target in ours else base, node.lineno))
    return tuple((name, line) for name, line in found if name in ours)


def test_every_module_has_a_layer() -> None:
    assert [m for m in modules() if layer_of(m) is None] == []


def test_no_import_goes_up_a_layer() -> None:
    upward = []
    for module in sorted(modules()):
        own = layer_of(module)
        for target, line in imports_of(module, False):
            if layer_of(target) > own:
                upward.append(f"{modules()[module][0].relative_to(ROOT)}:{line}: {module} ({LAYERS[own][0]}) "
                              f"imports {target} ({LAYERS[layer_of(target)][0]})")
    assert upward == [], "imports that go up a layer (docs/ARCHITECTURE.md):\n" + "\n".join(upward)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    graph = {m: {t for t, _ in imports_of(m, True) if t != m} for m in modules()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _is_deprecated_alias(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return text.startswith('"""Moved to ') and "DeprecationWarning" in text


def test_tt_env_top_level_is_small() -> None:
    top = [p.stem for p in sorted((ROOT / "tt_env").glob("*.py"))
           if p.stem != "__init__" and not _is_deprecated_alias(p)]
    assert len(top) <= MAX_TOP_LEVEL, top


@pytest.mark.parametrize("module", ["tt_env.engine.scoring", "tt_env.observation.sizes"])
def test_the_owners_import_nothing_above_them(module: str) -> None:
    assert all(layer_of(t) <= layer_of(module) for t, _ in imports_of(module, False))


def test_only_the_observation_writes_its_sizes() -> None:
    written = []
    for module, (path, _) in modules().items():
        relative = str(path.relative_to(ROOT))
        if module.startswith("tt_env.observation") or relative in SIZE_NUMBER_EXCEPTIONS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and type(node.value) is int and node.value in SIZE_NUMBERS:
                written.append(f"{relative}:{node.lineno}: {node.value}")
    assert written == [], "use tt_env.observation.sizes instead:\n" + "\n".join(written)


TRAINING_LIBRARIES = ("training.common", "training.ppo", "training.rllib", "training.sb3", "training.data")
"""What the commands use (docs/ARCHITECTURE.md, "Inside training/"), lowest first: ``common`` imports
none of the others, and none of them imports a command."""


def _training_top_level() -> list[Path]:
    return [p for p in sorted((ROOT / "training").glob("*.py")) if p.stem != "__init__"]


def test_training_top_level_holds_the_commands_only() -> None:
    """``training/<name>.py`` is a command (``python -m training.<name>``) or the deprecated alias of
    a moved module: a library goes in one of ``TRAINING_LIBRARIES``."""
    stray = [p.name for p in _training_top_level()
             if not _is_deprecated_alias(p) and 'if __name__ == "__main__":' not in p.read_text(encoding="utf-8")]
    assert stray == [], f"not a command: move it into one of {TRAINING_LIBRARIES}"


def _in_training_library(module: str) -> bool:
    return any(module == lib or module.startswith(lib + ".") for lib in TRAINING_LIBRARIES)


def test_training_libraries_import_no_command() -> None:
    upward = []
    for module in sorted(m for m in modules() if _in_training_library(m)):
        for target, line in imports_of(module, False):
            if target.startswith("training") and target != "training" and not _in_training_library(target):
                upward.append(f"{modules()[module][0].relative_to(ROOT)}:{line}: {module} imports {target}")
    assert upward == [], "a library of training/ imports a command or an alias:\n" + "\n".join(upward)


def test_training_common_is_the_bottom_of_training() -> None:
    above = [f"{module} imports {target}" for module in sorted(modules()) if module.startswith("training.common")
             for target, _ in imports_of(module, False)
             if _in_training_library(target) and not target.startswith("training.common")]
    assert above == []


def test_the_architecture_page_names_every_layer() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for name, _ in LAYERS:
        assert name in text, name


def test_the_layer_map_orders_the_owners() -> None:
    """The map itself: the rewards and the sizes lie below everything that uses them, the
    evaluation below training, and the apps on top."""
    order = ["tt_env.engine.scoring", "tt_env.observation.sizes", "tt_env.agents.registry", "tt_env.evaluation.loop",
             "training.selfplay", "tt_env.web.app"]
    assert [layer_of(m) for m in order] == sorted(layer_of(m) for m in order) == list(range(len(LAYERS)))


def test_the_reader_resolves_relative_imports() -> None:
    """``from ..engine import game`` in ``tt_env.observation.encoding`` is an import of
    ``tt_env.engine.game``: the upward check sees what a relative import names."""
    targets = {name for name, _ in imports_of("tt_env.observation.encoding", False)}
    assert "tt_env.engine.game" in targets
    targets = {name for name, _ in imports_of("tt_env.evaluation.duplicate", False)}
    assert {"tt_env.evaluation.loop", "tt_env.agents.registry"} <= targets
