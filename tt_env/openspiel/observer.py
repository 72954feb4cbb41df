"""Observers of ``python_three_thirteen``: the env's observation and the information state.

Both follow OpenSpiel's Python observers (``kuhn_poker.KuhnPokerObserver``): one flat float32
``tensor`` and ``dict``, named views that partition it in order, filled by
``set_from(state, player)``; ``string_from`` gives the same information as text. Both are
built only from what ``player`` may know.

* Observation (``perfect_recall=False``, the default): ``tt_env.observation.encode`` of the
  engine state, the vector our AEC env gives (its pieces as the views), and as text the table
  as ``player`` sees it (``tt_env.ui.render_text``).
* Information state (``perfect_recall=True``), with T = ``max_turns_per_round + N - 1`` turn
  rows (the most a round can have) and absolute seats:

| piece | shape | meaning |
|---|---|---|
| `player` | N | the observing seat (one-hot) |
| `round` | 11 | round number (one-hot) |
| `dealer` | N | this round's dealer (one-hot) |
| `scores` | N | totals of the finished rounds (/ 100) |
| `went_out` | N | who went out this round (one-hot; all 0 if nobody yet) |
| `out_hand` | 52 | the hand laid down by whoever went out (counts; public by the rules) |
| `hand` | 52 | the hand now (counts) |
| `dealt` | 52 | the hand as dealt this round (counts) |
| `upcard` | 52 | the first card of this round's discard pile (one-hot) |
| `draw_source` | T x 2 | per turn of this round in order: drew from the stock, took the discard |
| `drawn` | T x 52 | per turn: the card drawn, when the player knows it (its own stock draws; every card taken from the pile) |
| `discarded` | T x 52 | per turn: the card discarded |

Turn t of a round is played by seat (dealer + 1 + t) mod N.
"""  # noqa: E501  (markdown tables: one row a line)

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel

from ..engine.cards import card_str, cards_str
from ..engine.rules import Rules, hand_size
from ..observation import encode, get_layout
from ..ui.render_text import render_text

SCORE_SCALE = 100.0
NUM_ROUNDS = 11
_NAMES = [card_str(c) for c in range(52)]


def make_observer(rules: Rules, iig_obs_type: pyspiel.IIGObservationType | None,
                  params: Mapping[str, Any] | None) -> Any:
    """The observer for ``iig_obs_type`` (default: the observation)."""
    if params:
        raise ValueError(f"observation parameters are not supported (got {dict(params)}): pass none")
    obs_type = iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False)
    if obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not obs_type.public_info:
        raise ValueError("python_three_thirteen observes for one player: use IIGObservationType with "
                         "public_info=True and private_info=SINGLE_PLAYER (perfect_recall True or False)")
    return InfoStateObserver(rules) if obs_type.perfect_recall else EnvObservationObserver(rules)


def _views(pieces: list[tuple[str, tuple[int, ...]]]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A zeroed flat tensor and its named views, in the order of ``pieces``."""
    sizes = [int(np.prod(shape)) for _, shape in pieces]
    tensor = np.zeros(sum(sizes), np.float32)
    views, start = {}, 0
    for (name, shape), size in zip(pieces, sizes, strict=True):
        views[name] = tensor[start:start + size].reshape(shape)
        start += size
    return tensor, views


def _stage(state: Any) -> str:
    """The public stage of the state: dealing, a stock draw waiting for its card, or play."""
    d = state.data
    if d.to_deal:
        return f"dealing: {d.to_deal} cards to deal"
    if d.pending_draw:
        return f"player_{d.engine.current_player} draws from the stock"
    return ""


class EnvObservationObserver:
    """The env's observation vector of the player's seat (``tt_env.observation.encode``)."""

    def __init__(self, rules: Rules) -> None:
        lay = get_layout(rules.num_players)
        self.tensor, self.dict = _views([(name, (size,)) for name, size, _ in lay.pieces])

    def set_from(self, state: Any, player: int) -> None:
        engine_state = state.data.engine
        if engine_state is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = encode(engine_state, player)

    def string_from(self, state: Any, player: int) -> str:
        engine_state = state.data.engine
        if engine_state is None:
            return "first dealer not chosen yet"
        stage = _stage(state)
        text = render_text(engine_state, player)
        return f"{stage}\n{text}" if stage else text


class InfoStateObserver:
    """What the player saw this round, in order, plus the round's public facts and its hand."""

    def __init__(self, rules: Rules) -> None:
        n = rules.num_players
        self.num_players = n
        self.turn_rows = rules.max_turns_per_round + n - 1
        t = self.turn_rows
        self.tensor, self.dict = _views([
            ("player", (n,)), ("round", (NUM_ROUNDS,)), ("dealer", (n,)), ("scores", (n,)),
            ("went_out", (n,)), ("out_hand", (52,)), ("hand", (52,)), ("dealt", (52,)), ("upcard", (52,)),
            ("draw_source", (t, 2)), ("drawn", (t, 52)), ("discarded", (t, 52)),
        ])

    def set_from(self, state: Any, player: int) -> None:
        self.tensor.fill(0.0)
        v = self.dict
        v["player"][player] = 1.0
        d = state.data
        s = d.engine
        if s is None:
            return
        n = self.num_players
        v["round"][s.round_number - 1] = 1.0
        v["dealer"][s.dealer] = 1.0
        v["scores"][:] = np.asarray(s.scores, dtype=np.float32) / SCORE_SCALE
        if s.went_out is not None:
            v["went_out"][s.went_out] = 1.0
            out_hand = v["out_hand"]
            for c in s.hands[s.went_out]:
                out_hand[c] += 1.0
        hand, dealt = v["hand"], v["dealt"]
        for c in s.hands[player]:
            hand[c] += 1.0
        for c in own_dealt(d, player):
            dealt[c] += 1.0
        if len(d.dealt) == n * hand_size(s.round_number) + 1:
            v["upcard"][d.dealt[-1]] = 1.0
        turns = len(d.source)
        if turns:
            rows = np.arange(turns)
            src = np.array(d.source)
            card = np.array(d.drawn)
            gone = np.array(d.discarded)
            v["draw_source"][rows, src] = 1.0
            mine = (player - s.dealer - 1) % n  # this player's turns are mine, mine + n, ...
            seen = (card >= 0) & ((src == 1) | (rows % n == mine))
            v["drawn"][rows[seen], card[seen]] = 1.0
            done = gone >= 0
            v["discarded"][rows[done], gone[done]] = 1.0

    def string_from(self, state: Any, player: int) -> str:
        d = state.data
        s = d.engine
        if s is None:
            return f"player {player}; first dealer not chosen yet"
        n = self.num_players
        parts = [f"player {player}; round {s.round_number}; dealer {s.dealer}; "
                 f"scores {' '.join(map(str, s.scores))}",
                 "dealt: " + " ".join([_NAMES[c] for c in own_dealt(d, player)])]
        if len(d.dealt) == n * hand_size(s.round_number) + 1:
            parts.append(f"up: {_NAMES[d.dealt[-1]]}")
        if d.source:
            mine = (player - s.dealer - 1) % n  # this player's turns are mine, mine + n, ...
            drawn = ["take " + _NAMES[c] if src else ("stock " + _NAMES[c] if t % n == mine and c >= 0 else "stock ?")
                     for t, (src, c) in enumerate(zip(d.source, d.drawn, strict=True))]
            seats = [str((s.dealer + 1 + t) % n) for t in range(n)]
            parts.append(" / ".join([f"{seats[t % n]}:{move}, {_NAMES[x]}" if x >= 0 else f"{seats[t % n]}:{move}"
                                     for t, (move, x) in enumerate(zip(drawn, d.discarded, strict=True))]))
        if s.went_out is not None:
            parts.append(f"out: {s.went_out} ({cards_str(sorted(s.hands[s.went_out]))})")
        parts.append(f"hand: {cards_str(sorted(s.hands[player]))}")
        return " | ".join(parts)


def own_dealt(data: Any, player: int) -> list[int]:
    """The cards dealt to ``player`` so far this round, in the order dealt."""
    n = data.rules.num_players
    size = n * hand_size(data.engine.round_number)
    start = (player - data.engine.dealer - 1) % n
    return data.dealt[start:size:n]
