"""Bridges between a batch table and the scalar engine's :class:`~tt_env.engine.game.GameState`,
and the loading of a saved batch state.

A table holds as counts what carries no order in play (hands, known-taken cards, discards and
passed-over cards), so those come back as sorted lists; the stock and the discard pile keep
their exact order. The scalar state gets fresh random generators (the batch's streams cannot
be expressed as numpy ones) and no finished-round records: everything a rule, an observation
or a mask reads is exact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..engine.cardlist import CardList
from ..engine.game import PHASE_DISCARD, GameState
from ..engine.rules import hand_size
from .state import COUNT_DTYPE

if TYPE_CHECKING:
    from .game import BatchGame
    from .timestep import TimeStep

_DERIVED = ("_lockstep_phase", "_hand_penalty", "_mask")
"""What a ``BatchGame`` keeps besides its state and derives again on a load (restored if it fails)."""


def _cards(counts: list[int]) -> list[int]:
    """Sorted card ints from a 52-vector of copies."""
    return [card for card, k in enumerate(counts) for _ in range(k)]


def table_to_game_state(game: BatchGame, table: int) -> GameState:
    """Table ``table`` of ``game`` as a scalar :class:`GameState`.

    host: reads one table back to Python lists, a wait on the device by design (tests, rendering,
    search); never called inside ``BatchGame.step``."""
    if isinstance(table, bool) or not isinstance(table, (int, np.integer)) or not 0 <= table < game.num_tables:
        raise ValueError(f"table={table!r} is not allowed: use an int 0..{game.num_tables - 1}")
    row = {name: value[int(table)].tolist() for name, value in game.state.fields().items()}  # host: one table, once
    counts = {name: [[int(k) for k in seat] for seat in row[name]] for name in ("hands", "known_taken", "discards",
                                                                              "passed")}
    went_out, taken = row["went_out"], row["taken"]
    return GameState(
        rules=game.rules, rng=np.random.default_rng(), hands=[_cards(h) for h in counts["hands"]],
        stock=row["stock"][:row["stock_len"]], discard_pile=CardList(row["pile"][:row["pile_len"]]),
        round_index=row["round_index"], round_number=game.rules.rounds[row["round_index"]], dealer=row["dealer"],
        current_player=row["current"], phase=row["phase"], scores=row["scores"],
        went_out=None if went_out < 0 else went_out, turn=row["turn"], taken_this_turn=None if taken < 0 else taken,
        known_taken=[_cards(k) for k in counts["known_taken"]],
        discards=[CardList(_cards(d)) for d in counts["discards"]],
        passed=[CardList(_cards(p)) for p in counts["passed"]], round_results=[],
        game_over=row["game_over"])


def loaded(game: BatchGame, install: Callable[[], None]) -> TimeStep:
    """``install()`` the new state, derive again what the engine keeps besides it (the lockstep,
    the kept penalties, the masks) and return its TimeStep; if any of it fails (a value no game
    holds, found by the checks or the kernels), the game is left as it was before."""
    saved = game.state.fields()  # the tensors themselves: a load replaces them, never writes into them
    derived = {name: getattr(game, name, None) for name in _DERIVED}
    try:
        install()
        game._lockstep_phase = loaded_lockstep(game)
        if game._cached_scoring:
            game._solve_every_hand()
        return game._quiet_timestep()
    except BaseException:
        for name, value in saved.items():
            setattr(game.state, name, value)
        for name, value in derived.items():
            setattr(game, name, value)
        raise


def load_game_states(game: BatchGame, states: Sequence[GameState]) -> TimeStep:
    """Overwrite every table of ``game`` with ``states`` (one per table, all under ``game.rules``)."""
    if not isinstance(states, Sequence) or isinstance(states, (str, bytes)):
        raise TypeError(f"from_game_states takes a sequence of GameState, one per table, got a {type(states).__name__}")
    if len(states) != game.num_tables:
        raise ValueError(f"from_game_states needs one state per table: got {len(states)} for {game.num_tables} tables")
    for k, st in enumerate(states):
        if not isinstance(st, GameState):
            raise TypeError(f"states[{k}] is a {type(st).__name__}, not a GameState")
        if st.rules != game.rules:
            raise ValueError(f"states[{k}] plays other rules ({st.rules}) than the batch ({game.rules})")
        if st.game_over and game.autoreset:  # it would stay over: auto-reset deals at a game's last step only
            raise ValueError(f"states[{k}] is a finished game, which a batch with autoreset=True never holds: load "
                             f"it into BatchGame(..., autoreset=False), or a game in play")
        size = hand_size(st.round_number)
        extra = int(st.phase == PHASE_DISCARD and not st.game_over)
        want = [size + (extra if seat == st.current_player else 0) for seat in range(game.num_players)]
        if [len(h) for h in st.hands] != want:
            raise ValueError(f"states[{k}] holds hands of {[len(h) for h in st.hands]} cards, which no game reaches "
                             f"in round {st.round_number} (expected {want}): the batched engine plays only states "
                             f"reached by play")
        problem = _cards_problem(st, game.rules.num_decks)
        if problem:
            raise ValueError(f"states[{k}] {problem}: the batched engine plays only states reached by play")
    n, size = game.num_players, game.shoe_size

    def counts(lists: Sequence[Sequence[int]]) -> list[list[int]]:
        out = []
        for cards in lists:
            row = [0] * 52
            for c in cards:
                row[c] += 1
            out.append(row)
        return out

    def padded(cards: Sequence[int]) -> list[int]:
        return list(cards) + [0] * (size - len(cards))

    def tensor(values: object, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        return torch.tensor(values, dtype=dtype, device=game.device)

    try:  # every field made before any is installed
        fields = {
            "hands": tensor([counts(st.hands) for st in states], COUNT_DTYPE),
            "stock": tensor([padded(st.stock) for st in states]),
            "stock_len": tensor([len(st.stock) for st in states]),
            "pile": tensor([padded(st.discard_pile) for st in states]),
            "pile_len": tensor([len(st.discard_pile) for st in states]),
            "pile_counts": tensor([counts([st.discard_pile])[0] for st in states], COUNT_DTYPE),
            "known_taken": tensor([counts(st.known_taken) for st in states], COUNT_DTYPE),
            "discards": tensor([counts(st.discards) for st in states], COUNT_DTYPE),
            "passed": tensor([counts(st.passed or [[] for _ in range(n)]) for st in states], COUNT_DTYPE),
            "round_index": tensor([st.round_index for st in states]),
            "dealer": tensor([st.dealer for st in states]),
            "current": tensor([st.current_player for st in states]),
            "phase": tensor([st.phase for st in states]),
            "scores": tensor([list(st.scores) for st in states]),
            "went_out": tensor([-1 if st.went_out is None else st.went_out for st in states]),
            "turn": tensor([st.turn for st in states]),
            "taken": tensor([-1 if st.taken_this_turn is None else st.taken_this_turn for st in states]),
            "game_over": tensor([bool(st.game_over) for st in states], torch.bool),
        }
    except (TypeError, ValueError, IndexError, RuntimeError) as exc:  # ragged or non-int fields
        raise ValueError(f"from_game_states: a state's fields do not make this batch's tables "
                         f"({str(exc).splitlines()[0]}): give states of {n} seats reached by play") from None

    def install() -> None:
        for name, value in fields.items():
            setattr(game.state, name, value)

    return loaded(game, install)


def _cards_problem(state: GameState, decks: int) -> str | None:
    """Why ``state``'s cards are not a shoe's (``decks`` copies of each of the 52, between the hands,
    the stock and the discard pile), or None."""
    held = [*[c for hand in state.hands for c in hand], *state.stock, *state.discard_pile]
    bad = [c for c in held if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 0 <= c < 52]
    if bad:
        return f"holds cards {bad[:5]} that are not card ints 0..51"
    copies = np.bincount(np.asarray(held, dtype=np.int64), minlength=52)
    if (copies != decks).any():
        wrong = [int(c) for c in np.flatnonzero(copies != decks)[:5]]  # host: numpy on the state's lists, a load only
        return (f"holds {[int(copies[c]) for c in wrong]} copies of cards {wrong} between its hands, stock and "
                f"discard pile, where a shoe of {decks} deck(s) has {decks} of each")
    return None


def load_state_fields(game: BatchGame, fields: Mapping[str, torch.Tensor]) -> TimeStep:
    """Put copies of ``fields`` (a state's tensors by name, as ``BatchState.fields()`` gives them)
    into ``game.state``; a ``ValueError`` names what does not fit this game's state."""
    current = game.state.fields()
    if not isinstance(fields, Mapping):
        raise ValueError(f"load_state takes a mapping of the state's fields by name (as state.fields() gives "
                         f"them), got a {type(fields).__name__}")
    if set(fields) != set(current):
        raise ValueError(f"load_state takes a mapping of exactly the state's fields {sorted(current)}: "
                         f"missing {sorted(set(current) - set(fields))}, unknown {sorted(set(fields) - set(current))}")
    for name, old in current.items():
        value = fields[name]
        if not isinstance(value, torch.Tensor) or value.shape != old.shape or value.dtype != old.dtype:
            got = (f"shape {tuple(value.shape)} and dtype {value.dtype}" if isinstance(value, torch.Tensor)
                   else f"a {type(value).__name__}")
            raise ValueError(f"field {name} must be a tensor of shape {tuple(old.shape)} and dtype {old.dtype} "
                             f"(this game's: same rules and num_tables), got {got}")
    copies = {name: fields[name].to(device=game.device, copy=True) for name in current}

    def install() -> None:
        for name, value in copies.items():
            setattr(game.state, name, value)
        rounds = game.state.round_index
        if bool(((rounds < 0) | (rounds >= len(game.rules.rounds))).any()):  # host: a load only
            raise ValueError(f"field round_index holds rounds outside this game's {len(game.rules.rounds)} "
                             f"(rules.rounds={list(game.rules.rounds)}): load a state of the same rules")

    return loaded(game, install)


def loaded_lockstep(game: BatchGame) -> int | None:
    """The lockstep phase of a loaded state (``BatchGame.step``): the phase every table still
    playing is in (0 when none plays), or None when they differ.

    host: one read of the phases, on a load only."""
    s = game.state
    phases = torch.unique(s.phase[~s.game_over]).tolist()  # host: a load only
    if len(phases) > 1:
        return None
    return int(phases[0]) if phases else 0
