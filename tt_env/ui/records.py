"""Game records: a small JSON file that replays a game exactly.

A record holds what a game needs to be played again move for move: the rules, the seed of
the game's random generator (deals and reshuffles come from it alone), the agent playing
each seat and every action id in order. Agents' own randomness is not needed: their
actions are stored. A record looks like::

    {
      "format": "three-thirteen-game",
      "format_version": 1,
      "rules": {"num_players": 2, "decks": "auto", ...},
      "reward_mode": "relative",
      "seed": 7,
      "seats": ["human", "greedy-v0"],
      "actions": [0, 17, 1, 40, ...],
      "final_scores": [41, 63]
    }

``seed`` is what ``numpy.random.default_rng`` was given for the game's generator (as
``env.reset(seed=...)`` does): an int, or a list of ints (a ``SeedSequence`` entropy, such as
the evaluator's ``[seed, deal, 0]``). A record may instead carry ``rng_state``, the
generator's ``bit_generator.state`` at the start of the game. Optional ``reshuffle_seed``
(int or list) names a second generator that served only the reshuffles of an empty stock, as
the evaluator's duplicate games do so that every seating sees the same deals. ``final_scores``
is present once the game is over; a replay checks it. An unfinished game (saved on quitting)
replays up to its last action.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import jsonio
from ..actions import action_name
from ..engine import game
from ..engine.rules import Rules
from ..jsonio import MAX_CHARS, loads
from ..quoting import short, short_repr

FORMAT_NAME = "three-thirteen-game"
FORMAT_VERSION = 1
REQUIRED_KEYS = ("format_version", "rules", "seed", "seats", "actions")
OPTIONAL_KEYS = ("format", "reward_mode", "final_scores", "rng_state", "reshuffle_seed", "tt_env_version")
Seed = int | tuple[int, ...]
MAX_SEED_WORDS = 64
"""A seed list longer than this is refused (the evaluator's have three entries)."""


@dataclass(frozen=True)
class GameRecord:
    """One game: rules, seed (or generator state), seat names, actions, and the final scores if over."""

    rules: Rules
    seed: Seed | None
    seats: tuple[str, ...]
    actions: tuple[int, ...]
    reward_mode: str = "relative"
    final_scores: tuple[int, ...] | None = None
    rng_state: Mapping[str, Any] | None = field(default=None, compare=False)
    reshuffle_seed: Seed | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the file format)."""
        from .. import __version__

        out: dict[str, Any] = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "tt_env_version": __version__,
            "rules": self.rules.to_dict(),
            "reward_mode": self.reward_mode,
            "seed": _plain(self.seed),
            "seats": list(self.seats),
            "actions": list(self.actions),
        }
        if self.rng_state is not None:
            out["rng_state"] = dict(self.rng_state)
        if self.reshuffle_seed is not None:
            out["reshuffle_seed"] = _plain(self.reshuffle_seed)
        if self.final_scores is not None:
            out["final_scores"] = list(self.final_scores)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "the record") -> GameRecord:
        """Validate and read a record; a clear ``ValueError`` names what is wrong and where."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{source} is not a game record: expected a JSON object, got {type(data).__name__}")
        version = data.get("format_version")
        if "format_version" in data and (type(version) is not int or version != FORMAT_VERSION):  # (not true, 1.0)
            raise ValueError(f"{source} has format_version {short_repr(version)}; this version of tt_env reads "
                             f"format_version {FORMAT_VERSION} only")
        missing = [k for k in REQUIRED_KEYS if k not in data]
        if missing:
            raise ValueError(f"{source} is missing the key(s) {missing}: a game record needs {list(REQUIRED_KEYS)}")
        unknown = sorted(set(data) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
        if unknown:
            raise ValueError(f"{source} has unknown key(s) {unknown}: allowed are "
                             f"{list(REQUIRED_KEYS) + list(OPTIONAL_KEYS)}")
        if data.get("format", FORMAT_NAME) != FORMAT_NAME:
            raise ValueError(f"{source} has format {short_repr(data['format'])}, not {FORMAT_NAME!r}")
        if not isinstance(data["rules"], Mapping):
            raise ValueError(f"{source} has rules {str(data['rules'])[:80]!r}: use an object of rule options "
                             f"(as Rules.to_dict() writes)")
        try:
            rules = Rules.from_dict(data["rules"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source} has bad rules: {exc}") from exc
        seed = _seed(data["seed"], "seed", source)
        reshuffle_seed = _seed(data.get("reshuffle_seed"), "reshuffle_seed", source)
        rng_state = data.get("rng_state")
        if seed is None and rng_state is None:
            raise ValueError(f"{source} has seed null and no rng_state: the deal cannot be reproduced")
        if rng_state is not None and not isinstance(rng_state, Mapping):
            raise ValueError(f"{source} has rng_state {str(rng_state)[:80]!r}: use a numpy bit_generator.state "
                             f"object")
        seats = data["seats"]
        if (not isinstance(seats, list) or len(seats) != rules.num_players
                or not all(isinstance(s, str) for s in seats)):
            raise ValueError(f"{source} has seats {short_repr(seats)}: use a list of {rules.num_players} agent names "
                             f"(one per seat, as rules.num_players says)")
        actions = data["actions"]
        if isinstance(actions, list) and len(actions) > game.max_actions(rules):
            raise ValueError(f"{source} has {len(actions):,} actions: a whole game under its rules takes at most "
                             f"{game.max_actions(rules):,}")
        if not isinstance(actions, list) or not all(
                isinstance(a, int) and not isinstance(a, bool) and 0 <= a < game.NUM_ACTIONS for a in actions):
            raise ValueError(f"{source} has bad actions: use a list of action ids 0..{game.NUM_ACTIONS - 1}")
        from ..three_thirteen_v0 import REWARD_MODES

        reward_mode = data.get("reward_mode", "relative")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"{source} has reward_mode {short_repr(reward_mode)}: use one of {list(REWARD_MODES)}")
        final = data.get("final_scores")
        if final is not None and (not isinstance(final, list) or len(final) != rules.num_players
                                  or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in final)):
            raise ValueError(f"{source} has final_scores {str(final)[:80]!r}: use a list of {rules.num_players} "
                             f"integers >= 0")
        record = cls(rules=rules, seed=seed, seats=tuple(seats), actions=tuple(actions), reward_mode=reward_mode,
                     final_scores=tuple(final) if final is not None else None, rng_state=rng_state,
                     reshuffle_seed=reshuffle_seed)
        if rng_state is not None:
            try:
                record.new_generator()  # a bad state is refused now, not when the replay starts
            except ValueError as exc:
                raise ValueError(f"{source}: {exc}") from None
        return record

    def new_generator(self) -> np.random.Generator:
        """The game's random generator as it was when the game began."""
        if self.rng_state is not None:
            rng = np.random.default_rng()
            try:
                rng.bit_generator.state = dict(self.rng_state)
            except (TypeError, ValueError, KeyError, OverflowError) as exc:
                detail = f"no key {short_repr(exc.args[0])}" if isinstance(exc, KeyError) else short(str(exc))
                raise ValueError(f"the record's rng_state is not a state of numpy's default generator ({detail}): "
                                 f"use the object np.random.default_rng(seed).bit_generator.state gives, "
                                 f"{{'bit_generator': 'PCG64', 'state': {{'state': ..., 'inc': ...}}, "
                                 f"'has_uint32': ..., 'uinteger': ...}}") from exc
            return rng
        return np.random.default_rng(_plain(self.seed))


def _seed(value: Any, name: str, source: str) -> Seed | None:
    """A seed read from a record: ``None``, a non-negative int, or a non-empty list of them."""
    def ok(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if value is None or ok(value):
        return value
    if isinstance(value, (list, tuple)) and 0 < len(value) <= MAX_SEED_WORDS and all(ok(v) for v in value):
        return tuple(value)
    raise ValueError(f"{source} has {name} {short_repr(value)}: use a non-negative integer or a list of 1 to "
                     f"{MAX_SEED_WORDS} of them" + (" (or null with rng_state)" if name == "seed" else ""))


def _plain(seed: Seed | None) -> int | list[int] | None:
    return list(seed) if isinstance(seed, tuple) else seed


def record_from_game(rules: Rules, seed: int | Sequence[int] | None, seat_names: Sequence[str],
                     actions: Sequence[int], final_scores: Sequence[int] | None = None, *,
                     reward_mode: str = "relative", rng_state: Mapping[str, Any] | None = None,
                     reshuffle_seed: int | Sequence[int] | None = None) -> GameRecord:
    """A validated record of a game played by any loop (the evaluator's, a notebook's).

    The game must have begun as ``game.new_game(rules, np.random.default_rng(seed))`` (or from
    a generator whose ``bit_generator.state`` at that moment is ``rng_state``); ``actions``
    are the ids applied in order, ``seat_names[s]`` the agent at seat ``s`` and
    ``final_scores[s]`` its total. With ``reshuffle_seed``, every draw from an empty stock was
    applied with ``state.rng`` set to a generator made once from that seed.
    """
    def plain(value: Any) -> Any:
        return [int(v) for v in value] if isinstance(value, (list, tuple, np.ndarray)) else (
            None if value is None else int(value))

    data: dict[str, Any] = {
        "format_version": FORMAT_VERSION, "rules": rules.to_dict(), "reward_mode": reward_mode,
        "seed": plain(seed), "seats": [str(s) for s in seat_names], "actions": [int(a) for a in actions],
    }
    if reshuffle_seed is not None:
        data["reshuffle_seed"] = plain(reshuffle_seed)
    if final_scores is not None:
        data["final_scores"] = [int(s) for s in final_scores]
    if rng_state is not None:
        data["rng_state"] = rng_state
    return GameRecord.from_dict(data)


def save_record(record: GameRecord, path: str | Path) -> Path:
    """Write ``record`` as strict JSON (one key a line, actions on one line); returns the path.

    Missing parent folders are created. The file is written beside the target and then moved
    into place, so a failed save (``OSError``) leaves no half-written record behind.
    """
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    data = record.to_dict()
    lines = [f"  {jsonio.dumps(key)}: {jsonio.dumps(value)}" for key, value in data.items()]
    with jsonio.replaced_atomically(path) as tmp:
        tmp.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return path


def load_record(path: str | Path) -> GameRecord:
    """Read and validate a record file; ``ValueError`` names the file and what is wrong.

    At most :data:`~tt_env.jsonio.MAX_CHARS` characters are read (a record of the longest
    default game is about 30 KB), so a huge or endless file (``/dev/zero``) is refused at once.
    """
    path = Path(path)
    where = f"game record {str(path)!r}"
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(MAX_CHARS + 1)
    except FileNotFoundError:
        raise FileNotFoundError(f"{where} does not exist") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where} is not a text file: {exc}") from None
    data = loads(text, where, max_chars=MAX_CHARS)
    return GameRecord.from_dict(data, source=where)


def _as_record(record: GameRecord | Mapping[str, Any] | str | Path) -> GameRecord:
    if isinstance(record, GameRecord):
        return record
    if isinstance(record, (str, Path)):
        return load_record(record)
    return GameRecord.from_dict(record)


def make_env(record: GameRecord, render_mode: str | None = None, reveal_all: bool = False) -> Any:
    """A raw AEC env reset to the start of the recorded game."""
    from ..three_thirteen_v0 import raw_env

    options = record.rules.to_dict()
    env = raw_env(reward_mode=record.reward_mode, render_mode=render_mode, reveal_all=reveal_all, **options)
    if record.rng_state is None:
        env.reset(seed=_plain(record.seed))
    else:
        env._rng = record.new_generator()  # reset() without a seed deals from the env's generator
        env.reset()
    return env


def replay(record: GameRecord | Mapping[str, Any] | str | Path, *, render_mode: str | None = None,
           reveal_all: bool = False) -> Iterator[tuple[int, Any]]:
    """Step through a recorded game: yields ``(i, env)`` after ``i`` actions, from 0 to ``len(actions)``.

    The env is a ``raw_env`` (``env.game_state`` is the position). An action that is illegal
    at its point, actions past the end of the game, or final scores that differ from the
    record's raise ``ValueError`` naming the step (steps count from 1).
    """
    record = _as_record(record)
    env = make_env(record, render_mode=render_mode, reveal_all=reveal_all)
    if record.reshuffle_seed is not None:  # the reshuffles had a stream of their own (the evaluator's games)
        env.game_state.shuffle_rng = np.random.default_rng(_plain(record.reshuffle_seed))
    yield 0, env
    for i, action in enumerate(record.actions, start=1):
        state = env.game_state
        if state.game_over:
            raise ValueError(f"step {i} of {len(record.actions)}: the game is already over, but the record "
                             f"has {len(record.actions) - i + 1} more action(s)")
        legal = game.legal_actions(state)
        if action not in legal:
            names = ", ".join(f"{a} ({action_name(a)})" for a in legal)
            raise ValueError(f"step {i} of {len(record.actions)}: action {action} ({action_name(action)}) "
                             f"by player_{state.current_player} is illegal at {state.describe()}; "
                             f"legal were {names}")
        env.step(action)
        yield i, env
    if record.final_scores is not None:
        state = env.game_state
        if not state.game_over:
            raise ValueError(f"after step {len(record.actions)} (the last) the game is not over, but the record "
                             f"has final_scores {list(record.final_scores)}")
        if list(state.scores) != list(record.final_scores):
            raise ValueError(f"after step {len(record.actions)} (the last) the scores are {state.scores}, but the "
                             f"record has final_scores {list(record.final_scores)}")


def replay_final(record: GameRecord | Mapping[str, Any] | str | Path) -> Any:
    """The env at the end of a recorded game (every step checked)."""
    env = None
    for _, env in replay(record):
        pass
    return env


class GameRecorder:
    """Steps an AEC env (raw or wrapped) and keeps every action, so the game can be saved.

    ``reset`` always seeds the env (a fresh random seed when none is given) so that every
    game is replayable. ``step(None)`` for a finished agent passes through unrecorded.
    """

    def __init__(self, env: Any, seats: Sequence[str]) -> None:
        self.env = env
        base = getattr(env, "unwrapped", env)
        self.rules: Rules = base.rules
        self.reward_mode: str = base.reward_mode
        if len(seats) != self.rules.num_players:
            raise ValueError(f"seats={list(seats)!r} names {len(seats)} agents, but the game has "
                             f"{self.rules.num_players} seats")
        self.seats = [str(s) for s in seats]
        self.seed: int | None = None
        self.actions: list[int] = []

    def reset(self, seed: int | None = None) -> None:
        """Reset the env with ``seed`` (or a fresh one) and start a new record."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**63))
        self.seed = int(seed)
        self.actions = []
        self.env.reset(seed=self.seed)

    def step(self, action: int | None) -> None:
        """Step the env, recording ``action`` (``None`` is a finished agent's dead step)."""
        if self.seed is None:
            raise ValueError("call GameRecorder.reset(seed) before step(): the record needs the seed")
        if action is not None:
            self.actions.append(int(action))
        self.env.step(action)

    def to_record(self) -> GameRecord:
        """The record so far (with ``final_scores`` once the game is over)."""
        if self.seed is None:
            raise ValueError("nothing to record: call GameRecorder.reset(seed) first")
        state = getattr(self.env, "unwrapped", self.env).game_state
        final = state.scores if state.game_over else None
        return record_from_game(self.rules, self.seed, self.seats, self.actions, final,
                                reward_mode=self.reward_mode)

    def save(self, path: str | Path) -> Path:
        """Save the record so far to ``path``."""
        return save_record(self.to_record(), path)
