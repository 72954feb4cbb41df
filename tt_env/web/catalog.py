"""The agents the server may seat: the registered names and the checkpoints named at start-up.

The browser chooses agents by name only. A name is one of ``tt_env.agents.list_agents()``
(scripted agents, and the shipped trained ones when torch is installed) or one of the
checkpoint paths given with ``--checkpoint`` on the command line, exactly as given there. A
path the browser makes up is refused like any unknown name: nothing else is read from disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..agents import Agent, list_agents, make_agent
from ..agents.registry import without_rule_mismatch_hint
from ..engine.rules import Rules
from .validate import RequestError, short_repr

DESCRIPTIONS = {
    "random-v0": "uniform over the legal moves",
    "greedy-v0": "keeps the cards that lower its penalty most",
    "expert-v0": "scripted expert with a one-draw lookahead",
    "ismcts-v0": "information-set search (about 0.1 s a move)",
    "ismcts-v1": "information-set search on a learned belief of the hidden cards (about 0.1 s a move)",
}
SEARCH_AGENTS = ("ismcts-v0", "ismcts-v1")
"""The slow agents: each move is a search of about 0.1 s (more in big rounds), a thousand times an
expert-v0 move or a network's. An evaluation's work is bounded by how many of them it seats."""


@dataclass(frozen=True)
class AgentInfo:
    """One agent a seat may have: its name, kind, the player count it plays (None: any)."""

    name: str
    kind: str
    players: int | None
    description: str

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "players": self.players, "description": self.description}


class AgentCatalog:
    """Names to agents; :meth:`make` builds one for a game's rules (400 for a name not offered)."""

    def __init__(self, checkpoints: Sequence[str] = ()) -> None:
        registered = list_agents()
        self._infos: dict[str, AgentInfo] = {}
        for name in registered:
            players = _shipped_players(name)
            kind = "scripted" if players is None else "trained"
            self._infos[name] = AgentInfo(name, kind, players, DESCRIPTIONS.get(name, "trained network"))
        for path in checkpoints:
            if path in self._infos:
                raise ValueError(f"--checkpoint {path}: the name is already an agent's: "
                                 f"give it as a path such as ./{path}")
            self._infos[path] = AgentInfo(path, "checkpoint", checkpoint_players(path), f"checkpoint {Path(path).name}")

    def infos(self) -> list[AgentInfo]:
        """Every agent offered, scripted first."""
        order = {"scripted": 0, "trained": 1, "checkpoint": 2}
        return sorted(self._infos.values(), key=lambda a: (order[a.kind], a.name))

    def check(self, name: object, num_players: int) -> str:
        """``name`` if it is offered and plays ``num_players`` players, else a :class:`RequestError`."""
        info = self._infos.get(name) if isinstance(name, str) else None
        if info is None:
            raise RequestError(f"unknown agent {short_repr(name)}: choose one of {list(self._infos)}")
        if info.players is not None and info.players != num_players:
            raise RequestError(f"{name} plays {info.players}-player games only, not {num_players}")
        return name

    def is_slow(self, name: str) -> bool:
        """Whether agent ``name`` searches at every move (:data:`SEARCH_AGENTS`)."""
        return name in SEARCH_AGENTS

    def make(self, name: object, rules: Rules) -> Agent:
        """A new agent ``name`` for ``rules`` (a checkpoint that refuses the rules gives a 400)."""
        self.check(name, rules.num_players)
        try:
            return make_agent(name, rules)
        except (ValueError, ImportError, OSError) as exc:  # (the app has no allow_rule_mismatch to advise)
            reason = without_rule_mismatch_hint(exc)
            raise RequestError(f"agent {name} cannot play these rules: {reason}") from None


def checkpoint_players(path: str) -> int:
    """The player count a checkpoint was trained for, after loading it once (a bad file: ValueError)."""
    try:
        from models.checkpoint import read_metadata
    except ImportError as exc:
        raise ValueError(f"--checkpoint {path}: checkpoints need torch (pip install -e '.[train]'): {exc}") from None
    if not Path(path).is_file():
        raise ValueError(f"--checkpoint {path}: no such file")
    try:
        if path.lower().endswith(".zip"):  # a Stable-Baselines3 model.zip: no sidecar, the count is in the weights
            from models.sb3_zip import read_sb3_zip

            players = int(read_sb3_zip(path)[1]["num_players"])
        else:
            players = int(read_metadata(path)["num_players"])
        make_agent(path, Rules(num_players=players))
    except (ValueError, KeyError, OSError) as exc:
        raise ValueError(f"--checkpoint {path}: cannot load it: {exc}") from None
    return players


def _shipped_players(name: str) -> int | None:
    """The player count of a shipped trained agent; None for a scripted one."""
    try:
        from models.agent_loader import CHECKPOINT_DIR, SHIPPED
        from models.checkpoint import read_metadata
    except ImportError:
        return None
    if name not in SHIPPED:
        return None
    return int(read_metadata(CHECKPOINT_DIR / SHIPPED[name])["num_players"])
