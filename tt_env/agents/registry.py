"""Registry of agents by versioned name, plus a plug-in point for checkpoint loaders.

``make_agent("greedy-v0", rules)`` builds a registered agent; a path to a checkpoint file
(``*.pt``) is handed to the loader registered with :func:`register_checkpoint_loader`
(installed by ``models`` when torch is available). Where torch is missing, a shipped agent's
name (``ppo-2p-v1``) or a checkpoint path raises
:class:`~tt_env.optional.MissingDependencyError` (a ``ValueError`` too) saying that torch is
needed and how to install it, never "unknown agent"; :func:`agent_names` lists every name,
the shipped ones included, without importing torch. Keyword options go to the agent's
factory (``make_agent("expert-v0", rules, gamma=1.5)``), so variants need no registration;
an option the factory does not take is an error naming the ones it does. Names carry a
version suffix so that published numbers stay comparable: change an agent's behaviour,
bump its version.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
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

    For help texts and error messages: it imports no torch (the shipped names come from
    ``models.shipped``). :func:`list_agents` is what can be built here.
    """
    return sorted(set(_AGENTS) | set(_shipped_names()))


def _shipped_names() -> list[str]:
    try:
        from models.shipped import available_network_agents, available_shipped
    except ImportError:  # pragma: no cover - tt_env installed without the models package
        return []
    return available_shipped() + available_network_agents()


def make_agent(spec: str | Agent, rules: Rules | None = None, **options: Any) -> Agent:
    """An agent from a registry name, a checkpoint path, or an agent object (returned as is).

    ``options`` are keyword arguments of the agent's factory (for a checkpoint, of its loader).
    """
    if not isinstance(spec, str):
        if not hasattr(spec, "act"):
            raise TypeError(f"{spec!r} is not an agent: it needs an act(observation, action_mask, rng) method")
        if options:
            raise ValueError(f"options {sorted(options)} cannot be applied to an agent object")
        return spec
    rules = rules or Rules()
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


def check_options(factory: Callable[..., Any], options: dict[str, Any], spec: str) -> None:
    """Raise ``ValueError`` naming the allowed options if ``factory`` takes none of some of ``options``."""
    if not options:
        return
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = [name for i, (name, p) in enumerate(params.items())
               if i > 0 and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
               and name not in ("self", "path", "rules")]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"agent {spec!r} takes no option(s) {unknown}: allowed are {allowed or 'none'}")


_plugins_loaded = False


def _load_plugins() -> None:
    """Import optional modules that register agents (trained checkpoints need torch)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    try:
        import models.agent_loader  # noqa: F401  (registers the checkpoint loader and shipped agents)
    except ImportError as exc:  # torch missing (or broken): the scripted agents still work
        if getattr(exc, "name", None) == "models":  # pragma: no cover - tt_env installed alone
            return
        missing = missing_dependency(exc, "")
        _TRAINED_PROBLEM.append(str(missing).strip() if missing else
                                f"cannot be loaded here: importing models.agent_loader failed "
                                f"({type(exc).__name__}: {exc})")
