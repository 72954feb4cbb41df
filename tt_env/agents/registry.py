"""Registry of agents by versioned name, plus a plug-in point for checkpoint loaders.

``make_agent("greedy-v0", rules)`` builds a registered agent; a path to a checkpoint file
(``*.pt``) is handed to the loader registered with :func:`register_checkpoint_loader`
(installed by a plug-in when torch is available). Where torch is missing, a shipped agent's
name (``ppo-2p-v1``) or a checkpoint path raises
:class:`~tt_env.optional.MissingDependencyError` (a ``ValueError`` too) saying that torch is
needed and how to install it, never "unknown agent"; :func:`agent_names` lists every name,
the shipped ones included, without importing torch.

Plug-ins (the trained agents of ``models``) come from above through entry points, and this
module never names them: importing an entry point of the group ``three_thirteen.agents``
registers its agents (only when an agent not registered yet is asked for), and a module of the
group ``three_thirteen.agent_info`` answers about its agents without importing torch
(``agent_names()``, ``trained_agent_names()``, ``is_checkpoint_spec(spec)``,
``trained_players(spec)``): :func:`trained_agent_names`, :func:`is_checkpoint_spec` and
:func:`trained_players` here ask it. In a source checkout
whose installed metadata lacks them, the same groups are read from the ``pyproject.toml``
beside the package. Keyword options go to the agent's
factory (``make_agent("expert-v0", rules, gamma=1.5)``), so variants need no registration;
an option the factory does not take is an error naming the ones it does. Names carry a
version suffix so that published numbers stay comparable: change an agent's behaviour,
bump its version.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..engine.rules import Rules
from ..optional import MissingDependencyError, missing_dependency
from .base import Agent

AgentFactory = Callable[..., Agent]
"""``factory(rules, **options) -> Agent``."""
CheckpointLoader = Callable[..., Agent]
"""``loader(path, rules, **options) -> Agent``; raises ``ValueError`` for files it cannot load."""

_AGENTS: dict[str, AgentFactory] = {}
_CHECKPOINT_LOADERS: list[CheckpointLoader] = []
_TRAINED_PROBLEM: list[str] = []
"""Why the trained agents cannot be loaded here (a missing torch), once the plug-ins were tried."""


def register_agent(name: str, factory: AgentFactory) -> None:
    """Make ``factory(rules)`` available as ``name`` (a versioned name such as ``"greedy-v0"``)."""
    _AGENTS[name] = factory


def register_checkpoint_loader(loader: CheckpointLoader) -> None:
    """Add a loader tried on checkpoint paths; it raises ``ValueError`` for files it cannot load."""
    if loader not in _CHECKPOINT_LOADERS:
        _CHECKPOINT_LOADERS.append(loader)


def list_agents() -> list[str]:
    """Names of the agents that can be built here, sorted (the trained ones only where torch is installed)."""
    _load_plugins()
    return sorted(_AGENTS)


def agent_names() -> list[str]:
    """Every agent name, the shipped trained agents included even where torch is missing, sorted.

    For help texts and error messages: it imports no torch (the shipped names come from the
    ``three_thirteen.agent_info`` entry points). :func:`list_agents` is what can be built here.
    """
    return sorted(set(_AGENTS) | set(_shipped_names()))


def _info_plugins() -> list[Any]:
    """The modules of the ``three_thirteen.agent_info`` entry points that import here."""
    found = []
    for module in plugin_targets(INFO_GROUP):
        try:
            found.append(importlib.import_module(module))
        except ImportError:  # pragma: no cover - tt_env installed without the plug-in's package
            continue
    return found


def _shipped_names() -> list[str]:
    return [name for info in _info_plugins() for name in info.agent_names()]


def trained_agent_names() -> list[str]:
    """Every plug-in agent name that needs trained networks, in the plug-ins' order (no torch needed)."""
    return [name for info in _info_plugins() for name in info.trained_agent_names()]


def is_checkpoint_spec(spec: object) -> bool:
    """Whether agent ``spec`` is backed by a checkpoint (a shipped checkpoint's name or a checkpoint path)."""
    return any(info.is_checkpoint_spec(spec) for info in _info_plugins())


def takes_option(spec: object, option: str) -> bool:
    """Whether :func:`make_agent` can give agent ``spec`` the keyword ``option``: a checkpoint's
    loader takes the loaders' options, a registered agent what its factory takes."""
    if not isinstance(spec, str):
        return False
    if is_checkpoint_spec(spec):
        return True
    if spec not in _AGENTS:
        _load_plugins()
    factory = _AGENTS.get(spec)
    if factory is None:
        return False
    options = factory_options(factory)
    return options is None or option in options


def trained_players(spec: str) -> int | None:
    """The player count checkpoint agent ``spec`` was trained for; None when no plug-in knows it as a checkpoint."""
    for info in _info_plugins():
        players = info.trained_players(spec)
        if players is not None:
            return players
    return None


def make_agent(spec: str | Agent, rules: Rules | None = None, **options: Any) -> Agent:
    """An agent from a registry name, a checkpoint path, or an agent object (returned as is).

    ``options`` are keyword arguments of the agent's factory (for a checkpoint, of its loader).
    """
    if not isinstance(spec, str):
        if not hasattr(spec, "act"):
            raise TypeError(f"{spec!r} is not an agent: it needs an act(observation, action_mask, rng) method")
        if options:
            raise ValueError(f"options {sorted(options)} cannot be applied to an agent object")
        if rules is not None:
            check_agent_rules(spec, checked_rules(rules))
        return spec
    rules = Rules() if rules is None else checked_rules(rules)
    if spec not in _AGENTS:
        _load_plugins()  # trained agents register themselves (needs torch): only when asked for
    if spec in _AGENTS:
        factory = _AGENTS[spec]
        check_options(factory, options, spec)
        return factory(rules, **options)
    if _TRAINED_PROBLEM and spec in _shipped_names():
        raise MissingDependencyError(f"agent {spec!r} (a trained network) {_TRAINED_PROBLEM[0]}", name="torch")
    if os.path.exists(spec) or spec.endswith((".pt", ".safetensors", ".zip")):
        if not os.path.exists(spec):
            raise FileNotFoundError(f"checkpoint {spec!r} does not exist")
        if not _CHECKPOINT_LOADERS:
            why = _TRAINED_PROBLEM[0] if _TRAINED_PROBLEM else "needs a checkpoint loader, and none is registered"
            raise MissingDependencyError(f"checkpoint {spec!r} {why}", name="torch")
        errors = []
        for loader in _CHECKPOINT_LOADERS:
            try:
                check_options(loader, options, spec)
                return loader(spec, rules, **options)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(f"cannot load checkpoint {spec!r}: " + "; ".join(errors))
    raise ValueError(f"unknown agent {spec!r}: use a checkpoint path or one of {agent_names()}")


RULE_MISMATCH_HINT = "; pass allow_rule_mismatch=True (evaluator: --allow-rule-mismatch) to use it anyway"
"""How a checkpoint's refusal of other scoring ends (``models.checkpoint.check_compatible``); a
caller without that option (a trainer's config, the browser app) cuts it off its message."""


def without_rule_mismatch_hint(message: object) -> str:
    """``message`` (an error, say) up to :data:`RULE_MISMATCH_HINT`: for callers that have no such option."""
    return str(message).split(RULE_MISMATCH_HINT)[0]
PLAYING_RULES = ("num_players", "aces", "num_decks", "meld_needs_natural", "max_turns_per_round",
                 "discard_drawn_discard")
"""What an agent object built for other rules would play wrongly in a game: its player count, card
values, cards in play, what melds, and what it plans with (expert-v0 counts the turns left, the
searches simulate the game, every scripted agent reads whether the card just taken may be thrown);
the rounds it reads from its observations."""


def checked_rules(rules: object) -> Rules:
    """``rules`` if it is a :class:`Rules`, else a ``TypeError`` saying how to build one."""
    if not isinstance(rules, Rules):
        raise TypeError(f"rules={rules!r} is not a Rules: build one with tt_env.engine.rules.Rules(...) "
                        f"(Rules.from_dict for a dict)")
    return rules


def check_agent_rules(agent: Agent, rules: Rules) -> None:
    """``ValueError`` if ``agent`` has ``rules`` of its own that play the game ``rules`` differently."""
    own = getattr(agent, "rules", None)
    if not isinstance(own, Rules):
        return
    for key in PLAYING_RULES:
        if getattr(own, key) != getattr(rules, key):
            raise ValueError(f"agent {agent!r} was built for {key}={getattr(own, key)!r}, but the game has "
                             f"{key}={getattr(rules, key)!r}: build it for the game's rules (make_agent(name, rules))")


def factory_options(factory: Callable[..., Any]) -> list[str] | None:
    """The keyword options an agent factory (or checkpoint loader) takes after its first argument
    (the rules or the path), or None when it takes any: ``**kwargs``, or a signature that cannot be read."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return [name for i, (name, p) in enumerate(params.items())
            if i > 0 and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            and name not in ("self", "path", "rules")]


def check_options(factory: Callable[..., Any], options: dict[str, Any], spec: str) -> None:
    """Raise ``ValueError`` naming the allowed options if ``factory`` takes none of some of ``options``."""
    allowed = factory_options(factory) if options else None
    if allowed is None:
        return
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"agent {spec!r} takes no option(s) {unknown}: allowed are {allowed or 'none'}")


PLUGIN_GROUP = "three_thirteen.agents"
"""Entry points whose module registers agents when imported (``models = "models.agent_loader"``)."""
INFO_GROUP = "three_thirteen.agent_info"
"""Entry points naming a module that answers about its agents without importing torch."""
DISTRIBUTION = "three-thirteen"

_plugins_loaded = False


@functools.lru_cache(maxsize=None)
def plugin_targets(group: str) -> tuple[str, ...]:
    """The entry points of ``group`` (``"module"`` or ``"module:function"``), in declaration order.

    From the installed metadata; where it has none of this project's (a source checkout, or an
    editable install older than the group), from the ``pyproject.toml`` beside the package.
    """
    try:
        found = [ep.value for ep in importlib.metadata.entry_points(group=group)]
    except Exception:  # pragma: no cover - broken metadata: fall back to the source tree
        found = []
    if found:
        return tuple(found)
    return tuple(_source_entry_points(group))


def _source_entry_points(group: str) -> list[str]:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return []
    header = f'[project.entry-points."{group}"]'
    values: list[str] = []
    inside = False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            inside = line == header
        elif inside and "=" in line and not line.startswith("#"):
            values.append(line.split("=", 1)[1].split("#", 1)[0].strip().strip('"'))
    return values


def _load_plugins() -> None:
    """Import the plug-ins that register agents (trained checkpoints need torch)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for module in plugin_targets(PLUGIN_GROUP):
        try:
            importlib.import_module(module)  # registers its checkpoint loader and agents
        except ImportError as exc:  # torch missing (or broken): the scripted agents still work
            if getattr(exc, "name", None) == module.split(".")[0]:  # pragma: no cover - its package is absent
                continue
            missing = missing_dependency(exc, "")
            _TRAINED_PROBLEM.append(str(missing).strip() if missing else
                                    f"cannot be loaded here: importing {module} failed "
                                    f"({type(exc).__name__}: {exc})")
