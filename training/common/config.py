"""Typed run configurations loaded from YAML, with ``--set key=value`` overrides.

A config file's keys are exactly the field names of the script's dataclass
(:class:`SelfPlayConfig` or :class:`SB3Config`); an unknown key or a value of the wrong type
or range is rejected, naming the allowed keys or values, before anything trains. Nested
keys (``rules.rounds``, ``network_kwargs.channels``) reach into the dict-valued fields.
Values given to ``--set`` are parsed as YAML (``--set rules.rounds=[11]`` gives a list; an
int field rejects ``2e5``: write ``200000``).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from training.common.config_files import resolve_config
from training.common.yaml_load import safe_load_unique
from training.common.value_checks import (INT_LIMITS, MAX_ROLLOUT, ConfigError, check_agent_names, check_agents_fit,
                                          check_network_size, check_value_size, short)
from training.common.value_checks import check as _check
from tt_env.cli_checks import CommandParser
from tt_env.engine.rules import Rules

C = TypeVar("C", bound="BaseConfig")


@dataclass
class RunConfig:
    """The keys every trainer has, ``training/train_rllib.py``'s ``RLlibConfig`` included: each is
    declared once, here. A trainer's config may give one of them another default."""

    name: str = "run"
    """Run name: everything is written under ``<run_dir>/<name>/``."""
    run_dir: str = "runs"
    seed: int = 1
    num_players: int = 2
    rules: dict = field(default_factory=dict)
    """Rule options for training games (e.g. ``rounds: [9, 10, 11]``); evaluation plays full games."""
    reward_mode: str = "relative"
    num_envs: int = 8
    learning_rate: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    torch_threads: int = 1

    def train_rules(self) -> Rules:
        """Rules of the training games (an unknown option is refused with the allowed ones)."""
        if "num_players" in self.rules:
            raise ConfigError("rules: set num_players at the top level, not inside rules")
        return Rules.from_dict({**self.rules, "num_players": self.num_players})

    def check_rules(self) -> None:
        """:meth:`train_rules`, with any refusal of the rules as a :class:`ConfigError` naming ``rules``."""
        try:
            self.train_rules()
        except ConfigError:
            raise
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"rules: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class BaseConfig(RunConfig):
    """Fields shared by the PPO trainers (ours, batched and SB3's): those of :class:`RunConfig`
    plus the step budget, the evaluations, the device and the saves."""

    total_steps: int = 200_000
    """Learner environment steps (decisions) to train for."""
    eval_every: int = 50_000
    """Learner steps between evaluations (0: only at the end)."""
    eval_deals: int = 50
    """Duplicate deals per evaluation opponent (each deal is played once per seating)."""
    eval_opponents: list = field(default_factory=lambda: ["random-v0", "greedy-v0"])
    device: str = "auto"
    """``auto`` (CUDA when ``torch.cuda.is_available()``, else CPU), ``cpu``, ``cuda`` or ``cuda:K``: where
    the network and its update run (``training.common.device``; what holds on CUDA: ``docs/devices.md``)."""
    progress: bool = True
    save_every: int = 20_000
    """Learner steps between saves of ``checkpoints/latest.pt`` (the state ``--resume`` continues
    from; 0: only at evaluations, interrupts and the end)."""

    FLOAT_RANGES = {
        "learning_rate": (0.0, 1.0, "in (0, 1]"), "gamma": (0.0, 1.0, "in (0, 1]"),
        "gae_lambda": (None, 1.0, "in [0, 1]"), "ent_coef": (None, None, ">= 0"),
    }
    """Float fields: (exclusive lower bound or None for >= 0, inclusive upper bound or None, allowed text)."""

    def validate(self) -> None:
        """Raise :class:`ConfigError` for a value out of range."""
        _check(isinstance(self.name, str) and RUN_NAME.match(self.name) and len(self.name) <= 100, "name",
               self.name, "a folder name of letters, digits, '.', '_' and '-' that does not start with '.' "
               "(it is created inside run_dir)")
        _check(isinstance(self.run_dir, str) and self.run_dir.strip() and "\0" not in self.run_dir
               and len(self.run_dir) <= 4096, "run_dir", self.run_dir, "a non-empty path")
        _check(0 <= self.seed < 2 ** 31, "seed", self.seed, f"an int from 0 to {2 ** 31 - 1}")
        _check(2 <= self.num_players <= 8, "num_players", self.num_players, "an int from 2 to 8")
        _check(self.reward_mode in ("relative", "penalty", "win"), "reward_mode", self.reward_mode,
               "one of ['relative', 'penalty', 'win']")
        for key, high in INT_LIMITS.items():
            if hasattr(self, key):
                value = getattr(self, key)
                _check(1 <= value <= high, key, value, f"an int from 1 to {high}")
        from training.common.device import check_device

        check_device(self.device)
        for key in ("eval_every", "save_every"):
            _check(getattr(self, key) >= 0, key, getattr(self, key), "an int >= 0")
        for key, (low, high, text) in self.FLOAT_RANGES.items():
            value = getattr(self, key)
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                  and (value > low if low is not None else value >= 0) and (high is None or value <= high))
            _check(ok, key, value, f"a finite float {text}")
        self.check_rules()
        _check(isinstance(self.eval_opponents, list) and self.eval_opponents, "eval_opponents",
               self.eval_opponents, "a non-empty list of agents (names or checkpoint paths)")
        check_agent_names("eval_opponents", self.eval_opponents)
        check_agents_fit("eval_opponents", self.eval_opponents, self.eval_rules())  # not at the first evaluation

    def eval_rules(self) -> Rules:
        """Rules of the evaluation games: the training rules over every round."""
        return dataclasses.replace(self.train_rules(), rounds=tuple(range(1, 12)))


RULE_NETWORK_KWARGS = {"aces_high": "rules.aces", "meld_needs_natural": "rules.meld_needs_natural"}
"""CardNet's scoring options that the trainers set from the game's rules (``CardNet.rule_kwargs``),
and the rule each follows: in ``network_kwargs`` they would override the scoring the games are
played by. (Its ``decks`` may be given: more decks than the game's still count every card.)"""


@dataclass
class PPOBaseConfig(BaseConfig):
    """Fields shared by our two PPO trainers, :class:`SelfPlayConfig` (``training/selfplay.py``) and
    ``BatchPPOConfig`` (``training/batch_ppo.py``): the network, the update's hyperparameters and
    the pool of past versions. Declared and checked once, so that a key means the same in both; a
    trainer may give one another default (``rollout_steps`` counts what its trainer says)."""

    network: str = "cardnet"
    network_kwargs: dict = field(default_factory=dict)
    rollout_steps: int = 1024
    update_epochs: int = 4
    num_minibatches: int = 4
    clip_coef: float = 0.2
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    anneal_lr: bool = True
    pool_size: int = 5
    snapshot_every: int = 10
    """Updates between snapshots added to the pool."""
    init_checkpoint: str | None = None
    """Start from these weights (a checkpoint of the same network and player count)."""

    FLOAT_RANGES = {**BaseConfig.FLOAT_RANGES,
                    "clip_coef": (0.0, 1.0, "in (0, 1]"), "vf_coef": (None, None, ">= 0"),
                    "max_grad_norm": (0.0, None, "> 0")}

    def validate(self) -> None:
        """:meth:`BaseConfig.validate`, then the network (known, not too large), ``snapshot_every`` and
        ``init_checkpoint``."""
        super().validate()
        from models.networks import NETWORKS

        _check(self.network in NETWORKS, "network", self.network, f"one of {sorted(NETWORKS)}")
        if "num_players" in self.network_kwargs:
            raise ConfigError("network_kwargs: set num_players at the top level, not in network_kwargs")
        ruled = sorted(set(self.network_kwargs) & set(RULE_NETWORK_KWARGS))
        if ruled:  # (the network would read features of other rules than the games it plays)
            raise ConfigError(f"network_kwargs: {ruled} follow the game's rules: set them through rules "
                              f"({', '.join(RULE_NETWORK_KWARGS[k] for k in ruled)}), not in network_kwargs")
        decks = self.network_kwargs.get("decks")
        if isinstance(decks, int) and not isinstance(decks, bool) and decks < self.train_rules().num_decks:
            raise ConfigError(f"network_kwargs: decks={decks} is fewer than the game's {self.train_rules().num_decks} "
                              f"(its counts would not fit): leave it out, or give {self.train_rules().num_decks} or "
                              f"more")
        check_network_size(self.network, {"num_players": self.num_players, **self.network_kwargs}, "network_kwargs")
        _check(self.snapshot_every >= 1, "snapshot_every", self.snapshot_every, "an int >= 1")
        if self.init_checkpoint is not None:  # read (and found) when a new run starts: a resumed run needs it not
            _check(self.init_checkpoint != "" and not Path(self.init_checkpoint).is_dir(), "init_checkpoint",
                   self.init_checkpoint, "a checkpoint file's path")


@dataclass
class SelfPlayConfig(PPOBaseConfig):
    """``training/selfplay.py``: our PPO, one network for every seat."""

    name: str = "selfplay"
    rollout_steps: int = 1024
    """Learner decisions collected per update (over all envs and seats)."""
    selfplay_prob: float = 0.3
    """Share of tables where the current network plays every seat."""
    opponents: list = field(default_factory=lambda: ["greedy-v0", "random-v0"])
    """Scripted opponents for the other tables (drawn uniformly per seat)."""
    pool_prob: float = 0.3
    """Chance that a non-learner seat is a past version from the pool rather than scripted."""
    critic_warmup_steps: int = 0
    """Learner steps at the start during which only the value loss is trained (the policy stays as
    it started: useful when the start is already a good player, e.g. ``expert_features``)."""

    FLOAT_RANGES = {**PPOBaseConfig.FLOAT_RANGES,
                    "selfplay_prob": (None, 1.0, "in [0, 1]"), "pool_prob": (None, 1.0, "in [0, 1]")}

    def validate(self) -> None:
        super().validate()
        _check(self.critic_warmup_steps >= 0, "critic_warmup_steps", self.critic_warmup_steps, "an int >= 0")
        _check(self.rollout_steps >= self.num_minibatches, "rollout_steps", self.rollout_steps,
               f"at least num_minibatches ({self.num_minibatches})")
        _check(self.selfplay_prob == 1 or self.opponents, "opponents", self.opponents,
               "a non-empty list of agent names (or selfplay_prob: 1)")
        check_agent_names("opponents", self.opponents)
        check_agents_fit("opponents", self.opponents, self.train_rules())


@dataclass
class SB3Config(BaseConfig):
    """``training/train_sb3.py``: sb3-contrib MaskablePPO against scripted opponents."""

    name: str = "sb3"
    opponents: list = field(default_factory=lambda: ["greedy-v0"])
    hidden_sizes: list = field(default_factory=lambda: [128, 128])
    n_steps: int = 256
    """Steps per environment per rollout."""
    batch_size: int = 256
    n_epochs: int = 4
    clip_range: float = 0.2
    vec_env: str = "subproc"
    """``subproc`` (one process per env), ``dummy`` (all in this process) or ``batched`` (the batched
    engine: ``num_envs`` tables in one call, ``training.sb3.batched_vec_env``; opponents ``greedy-v0``,
    ``random-v0`` or network agents)."""

    FLOAT_RANGES = {**BaseConfig.FLOAT_RANGES, "clip_range": (0.0, 1.0, "in (0, 1]")}

    def validate(self) -> None:
        super().validate()
        buffer = self.n_steps * self.num_envs
        _check(buffer <= MAX_ROLLOUT, "n_steps", self.n_steps,
               f"an int with n_steps * num_envs (the rollout buffer) at most {MAX_ROLLOUT}")
        _check(2 <= self.batch_size <= buffer, "batch_size", self.batch_size,
               f"an int from 2 to n_steps * num_envs ({buffer}): a minibatch of one sample normalises its "
               f"advantage to 0, and one larger than the rollout is the rollout")
        _check(self.vec_env in VEC_ENVS, "vec_env", self.vec_env, f"one of {list(VEC_ENVS)}")
        _check(bool(self.hidden_sizes) and all(isinstance(h, int) and not isinstance(h, bool) and h > 0
                                               for h in self.hidden_sizes),
               "hidden_sizes", self.hidden_sizes, "a non-empty list of positive ints")
        check_network_size("mlp", {"num_players": self.num_players, "hidden_sizes": self.hidden_sizes}, "hidden_sizes")
        from tt_env.agents.registry import is_checkpoint_spec  # network agents have a batched version

        _check(bool(self.opponents), "opponents", self.opponents, "a non-empty list of agent names")
        check_agent_names("opponents", self.opponents)
        check_agents_fit("opponents", self.opponents, self.train_rules())  # a worker process's traceback, else
        for name in self.opponents:
            if self.vec_env == "batched":
                _check(name in ("greedy-v0", "random-v0") or is_checkpoint_spec(name), "opponents", name,
                       "with vec_env: batched, agents with a batched version: greedy-v0, random-v0 or network "
                       "agents (or use vec_env: subproc or dummy)")


VEC_ENVS = ("subproc", "dummy", "batched")
"""``SB3Config.vec_env``: how ``training/train_sb3.py`` runs its environments."""


# ---------------------------------------------------------------- loading
RUN_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
MAX_CONFIG_BYTES = 1 << 20
"""A config file larger than this is refused before it is read."""


def _type_ok(value: Any, annotation: Any) -> bool:
    """Whether ``value`` fits a field annotation (int, float, bool, str, list, dict, X | None)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return any(_type_ok(value, a) for a in typing.get_args(annotation))
    if annotation is None or annotation is type(None):
        return value is None
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, annotation)


def from_dict(cls: type[C], data: dict[str, Any]) -> C:
    """A validated config of class ``cls`` from plain data; unknown keys and bad types are errors."""
    if not isinstance(data, dict):
        raise ConfigError(f"a config must be a mapping of keys to values, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    unknown = sorted(set(data) - set(fields), key=repr)  # (YAML keys may be ints too)
    if unknown:
        listed = sorted(set(fields) - set(getattr(cls, "UNLISTED_KEYS", ())))  # a retired key is tolerated, not offered
        raise ConfigError(f"unknown config key(s) {unknown}: allowed are {listed}")
    data = dict(data)
    for key, value in data.items():
        check_value_size(key, value)  # before anything walks or prints it
        if isinstance(value, str) and hints[key] is float:
            try:
                data[key] = value = float(value)  # YAML reads 1e-3 (no dot) as a string
            except ValueError:
                pass
        if not _type_ok(value, hints[key]):
            raise ConfigError(f"{key}={short(value)} has the wrong type: expected {fields[key].type}")
    values = {k: float(v) if hints[k] is float else v for k, v in data.items()}
    config = cls(**values)
    config.validate()
    return config


def apply_overrides(data: dict[str, Any], overrides: list[str], cls: type | None = None) -> dict[str, Any]:
    """``data`` with each ``key=value`` (value parsed as YAML; ``a.b=v`` sets a nested key) applied.

    A nested key reaches one level into a mapping: ``rules.rounds``, ``network_kwargs.channels``.
    With ``cls`` (the config class), ``a.b=v`` is refused unless field ``a`` is a mapping.
    """
    out = dict(data)
    hints = typing.get_type_hints(cls) if cls is not None else {}
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not key=value")
        key, raw = item.split("=", 1)
        if not key.strip():
            raise ConfigError(f"override {item!r} has no key: use key=value")
        value = _yaml_value(raw, f"override {item!r}: the value")
        head, dot, rest = key.strip().partition(".")
        if dot:
            mappings = sorted(k for k, t in hints.items() if t is dict)
            where = f" (mapping fields: {', '.join(mappings)})" if mappings else ""
            if "." in rest or not rest.strip() or not head:
                raise ConfigError(f"override {item!r}: a nested key is FIELD.KEY, one level into a mapping{where}")
            current = out.get(head)
            if (current is not None and not isinstance(current, dict)) or (hints and hints.get(head, dict) is not dict):
                raise ConfigError(f"override {item!r}: {head} is not a mapping, so {head}.{rest} does not exist: "
                                  f"nested keys reach into mapping fields{where}")
            inner = dict(current or {})
            inner[rest] = value
            out[head] = inner
        else:
            out[head] = value
    return out


def _yaml_value(text: str, what: str, problem: str = "{what} is not valid YAML ({problem})") -> Any:
    """``yaml.safe_load(text)`` (a repeated key refused), every failure (also nesting too deep) one ``ConfigError``."""
    try:
        return safe_load_unique(text)
    except yaml.YAMLError as exc:
        raise ConfigError(problem.format(what=what, problem=_yaml_problem(exc))) from None
    except RecursionError:
        raise ConfigError(f"{what} is nested too deeply") from None


def load_config(cls: type[C], path: str | Path | None, overrides: list[str] | None = None) -> C:
    """Load ``path`` (YAML; None for the defaults), apply ``overrides``, validate."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            path = resolve_config(path)  # a file, or a shipped config's name (training/common/config_files.py)
        except FileNotFoundError as exc:
            raise ConfigError(str(exc)) from None
        try:
            if path.is_dir():
                raise ConfigError(f"config file {str(path)!r} is a folder: give a YAML file")
            if not path.is_file():  # a FIFO would block the read
                raise ConfigError(f"config file {str(path)!r} is not a regular file")
            if path.stat().st_size > MAX_CONFIG_BYTES:
                raise ConfigError(f"config file {str(path)!r} is {path.stat().st_size} bytes, over the "
                                  f"{MAX_CONFIG_BYTES} a config may have")
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {str(path)!r} cannot be read: {exc}") from None
        loaded = _yaml_value(text, f"config file {str(path)!r}", "{what} is not valid YAML: {problem}")
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"config file {str(path)!r} must hold a mapping of keys to values")
        data = loaded or {}
    return from_dict(cls, apply_overrides(data, overrides or [], cls))


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line: what PyYAML found wrong, and where."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else str(problem)


def dump_config(config: Any, path: str | Path) -> None:
    """Write the resolved config as YAML (the run's record of what it trained with), atomically."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(yaml.safe_dump(config.to_dict() if hasattr(config, "to_dict") else dataclasses.asdict(config),
                                  sort_keys=False))
    os.replace(tmp, path)


def config_arg_parser(description: str, cls: type, *, run_folder: bool = False,
                      prog: str | None = None) -> argparse.ArgumentParser:
    """The command line every training script shares: ``--config FILE`` and ``--set KEY=VALUE``.

    ``run_folder``: also ``--resume`` and ``--overwrite`` (what to do with an existing run folder).
    ``prog``: how the script is run, for ``--help`` and its one-line refusals.
    """
    parser = CommandParser(prog=prog, description=description)
    parser.add_argument("--config", default=None,
                        help=f"YAML config (keys: fields of {cls.__name__}): a file, or a shipped config by name "
                             f"(NAME or configs/NAME.yaml, found in an installed package too)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key (repeatable; nested: rules.rounds=[11])")
    if run_folder:
        add_run_folder_args(parser)
    return parser


def add_run_folder_args(parser: argparse.ArgumentParser) -> None:
    """``--resume`` / ``--overwrite``: a run never silently replaces the run already in its folder."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--resume", action="store_true",
                       help="continue the run in <run_dir>/<name> from checkpoints/latest.pt (with --set "
                            "total_steps=N: train a finished run longer)")
    group.add_argument("--overwrite", action="store_true",
                       help="delete the run in <run_dir>/<name> and start again (only what a run writes: a "
                            "folder that holds other files is refused)")


def parse_config(parser: argparse.ArgumentParser, cls: type[C], args: argparse.Namespace) -> C:
    """The config of ``args.config`` and ``args.overrides``; a bad one exits with one line (code 2)."""
    try:
        return load_config(cls, args.config, args.overrides)
    except ConfigError as exc:
        parser.error(str(exc))
