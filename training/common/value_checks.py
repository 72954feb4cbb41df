"""The checks of config values that :mod:`training.common.config` and the trainers' configs share.

Each refusal is a :class:`ConfigError` (re-exported by ``training.common.config``) naming the key,
the value and what is allowed. Values are shown by :func:`short`: a YAML file of a few hundred
bytes can expand, through anchors and aliases, to millions of entries, so no message prints a
whole value (:mod:`tt_env.quoting`), and :func:`check_value_size` refuses such a value before anything walks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tt_env.agents.registry import without_rule_mismatch_hint
from tt_env.engine.rules import Rules
from tt_env.quoting import short  # noqa: F401  (re-exported: config.py and resume.py quote with it)


class ConfigError(ValueError):
    """A config file or override is invalid; the message names the key and the allowed values."""


def check(ok: Any, key: str, value: Any, allowed: str) -> None:
    """Raise ``key=value is not allowed: use ALLOWED`` (the value shortened) unless ``ok``."""
    if not ok:
        raise ConfigError(f"{key}={short(value)} is not allowed: use {allowed}")


# ---------------------------------------------------------------- sizes
MAX_VALUE_ITEMS = 1000
"""Most entries one config value may hold, nested lists and mappings counted (every alias of a YAML
anchor again, as the value is used): far above any real config, far below what would be slow."""
MAX_NUMBER = 1 << 63
"""Integers in a config stay below this in size (int64's range): a larger one overflows a float."""
MAX_ROLLOUT = 1 << 20
"""Most learner steps one rollout may hold (``rollout_steps``; SB3's ``n_steps * num_envs``): a
buffer of observations this long takes about 1.2 GB of memory already."""
INT_LIMITS = {"total_steps": 10 ** 12, "num_envs": 1024, "torch_threads": 1024, "eval_deals": 1_000_000,
              "rollout_steps": MAX_ROLLOUT, "update_epochs": 10_000, "num_minibatches": MAX_ROLLOUT,
              "pool_size": 1000, "n_steps": MAX_ROLLOUT, "n_epochs": 10_000}
"""Integer fields (of whichever config has them) and their largest allowed value (the smallest is 1):
large enough for any real run, small enough that a typo cannot ask for all the memory there is."""


def check_value_size(key: str, value: Any) -> None:
    """Refuse a value of more than :data:`MAX_VALUE_ITEMS` entries in all, counting until the limit only
    (a few hundred bytes of YAML anchors expand to more entries than memory holds), or an integer
    anywhere in it of :data:`MAX_NUMBER` or more in size (no float or tensor holds it)."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple)):
            children = list(item)
        else:
            if isinstance(item, int) and not isinstance(item, bool) and abs(item) >= MAX_NUMBER:
                raise ConfigError(f"{key}={short(value)} is not allowed: use numbers below 2**63 in size")
            continue
        count += len(children)
        if count > MAX_VALUE_ITEMS:
            raise ConfigError(f"{key}={short(value)} is not allowed: use a value of at most {MAX_VALUE_ITEMS} "
                              f"entries in all (nested lists and mappings counted, a YAML alias each time it "
                              f"appears)")
        stack.extend(children)


def check_network_size(network: str, kwargs: dict[str, Any], key: str) -> None:
    """Refuse a network whose options are unknown or whose size is out of bounds, before allocating it.

    The same bounds as a checkpoint's sidecar (:func:`models.checkpoint.check_sizes`: layer sizes
    up to ``MAX_LAYER_SIZE``, ``MAX_PARAMETERS`` parameters, counted on the ``meta`` device).
    """
    import torch

    from models.checkpoint import MAX_PARAMETERS, CheckpointError, check_sizes
    from models.networks import build_network

    for option, value in kwargs.items():  # check_sizes prints a refused value whole: nested ones stop here
        if isinstance(value, dict) or any(isinstance(v, (list, dict)) for v in (value if isinstance(value, list)
                                                                                else [])):
            raise ConfigError(f"{key}: network option {option}={short(value)} is not allowed: use ints, lists of "
                              f"ints, bools or short strings")
    try:
        check_sizes(kwargs, where=key)
        with torch.device("meta"):  # shapes only: nothing is allocated
            size = sum(p.numel() for p in build_network(network, **kwargs).parameters())
    except CheckpointError as exc:
        raise ConfigError(str(exc)) from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key}: {exc}") from None
    if size > MAX_PARAMETERS:
        raise ConfigError(f"{key}: the network would have {size:,} parameters, over the {MAX_PARAMETERS:,} allowed")


def check_mlp_size(key: str, what: str, inputs: int, hidden_sizes: Sequence[int]) -> None:
    """Refuse an MLP (``inputs`` -> ``hidden_sizes`` -> 1) of more layers or parameters than a policy
    network may have (``models.checkpoint``'s ``MAX_LIST_LENGTH``, ``MAX_LAYER_SIZE``, ``MAX_PARAMETERS``)."""
    from models.checkpoint import MAX_LAYER_SIZE, MAX_LIST_LENGTH, MAX_PARAMETERS

    check(isinstance(hidden_sizes, list) and 1 <= len(hidden_sizes) <= MAX_LIST_LENGTH
          and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_LAYER_SIZE for h in hidden_sizes),
          key, hidden_sizes, f"a non-empty list of at most {MAX_LIST_LENGTH} ints from 1 to {MAX_LAYER_SIZE}")
    size, width = 0, inputs
    for h in [*hidden_sizes, 1]:
        size, width = size + width * h + h, h
    if size > MAX_PARAMETERS:
        raise ConfigError(f"{key}: {what} would have {size:,} parameters, over the {MAX_PARAMETERS:,} allowed: "
                          f"use fewer or smaller layers")


# ---------------------------------------------------------------- agents


def agent_fit_problem(spec: str, rules: Rules) -> str | None:
    """Why registered agent ``spec`` cannot play games of ``rules`` (None when it can).

    A shipped checkpoint is judged from its JSON sidecar (player count, observation layout, scoring
    rules), its weights unread; another agent built on trained networks (``ismcts-v1``) is built, as
    a training opponent is; a scripted agent plays any game.
    """
    from models.checkpoint import check_compatible, read_metadata
    from models.shipped import CHECKPOINT_DIR, SHIPPED
    from tt_env.agents import make_agent
    from tt_env.agents.registry import is_checkpoint_spec, trained_agent_names
    from tt_env.observation import OBS_VERSION, observation_size

    n = rules.num_players
    try:
        if spec in SHIPPED:
            path = CHECKPOINT_DIR / SHIPPED[spec]
            check_compatible(read_metadata(path), num_players=n, obs_version=OBS_VERSION, obs_size=observation_size(n),
                             rules=rules, where=f"checkpoint {str(path)!r}")
        elif is_checkpoint_spec(spec) or spec in trained_agent_names():
            make_agent(spec, rules)
    except (ValueError, OSError) as exc:
        return without_rule_mismatch_hint(exc)  # (no such option here)
    return None


def check_agent_names(key: str, names: Sequence[Any]) -> None:
    """Refuse the first of ``names`` that is neither a registered agent nor a checkpoint path, naming
    the registered ones (a checkpoint path works wherever an agent name does)."""
    from tt_env.agents import list_agents
    from tt_env.agents.registry import is_checkpoint_spec

    known = list_agents()
    for name in names:
        check(isinstance(name, str) and (name in known or is_checkpoint_spec(name)), key, name,
              f"registered agents {known} or checkpoint paths (.pt)")


def check_agents_fit(key: str, names: Sequence[str], rules: Rules) -> None:
    """Refuse the first agent of ``names`` that cannot play games of ``rules`` (:func:`agent_fit_problem`),
    before a run trains: an evaluation opponent that does not fit would stop it at its first evaluation."""
    for name in names:
        problem = agent_fit_problem(name, rules)
        if problem:
            raise ConfigError(f"{key}: {name!r} cannot play this run's games ({problem}): use agents trained for "
                              f"num_players={rules.num_players} and this run's scoring rules (aces, "
                              f"meld_needs_natural), or scripted ones (random-v0, greedy-v0, expert-v0)")
