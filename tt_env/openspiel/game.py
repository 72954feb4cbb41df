"""Three Thirteen as an OpenSpiel game: ``python_three_thirteen``, a thin adapter over our engine.

Importing this module registers the game with ``pyspiel.register_game``; then
``pyspiel.load_game("python_three_thirteen", {"num_players": 3, "rounds": "9,10,11"})`` gives a
game on which OpenSpiel's algorithms run (``pip install -e ".[openspiel]"``, ``open_spiel>=1.5``).
Every rule is the engine's (``tt_env.engine.game``); this module only turns its transitions
into OpenSpiel's chance and decision nodes.

| | |
|---|---|
| Game type | sequential, explicit stochastic chance, imperfect information, zero-sum, terminal rewards |
| Players | `num_players`, 2..8 |
| Actions | 54: our action ids (0 draw stock, 1 take the discard, 2 + c discard card c) |
| Chance outcomes | 52 card types (and seats 0..N-1 for the first dealer) |
| Observation tensor | the env's observation (`tt_env.observation.encode`), 107 N + 80 floats |
| Information state tensor | the round's history as the player saw it, plus the hand (`tt_env.openspiel.observer`) |
| Returns | the env's `relative` reward mode summed over the game (below) |

## Parameters

Every option of `tt_env.engine.Rules`, with its defaults: `num_players` (int, 2),
`decks` (int: 0, the default, for "auto", else the number of decks), `aces` ("low" or
"high_or_low"), `rounds` (string of round numbers separated by "," or ";", such as "9,10,11";
default all 11), `discard_drawn_discard` (bool, false), `max_turns_per_round` (int, 200),
`meld_needs_natural` (bool, false). A game stores `rounds` as `"[9;10;11]"`: OpenSpiel's game
string (`python_three_thirteen(rounds=[9;10;11])`, written by `serialize_game_and_state` and
read back by `deserialize_game_and_state`) splits parameters at "," and reads a bare number
such as `11` as an int, so neither may appear in a string parameter there; for the same
reason `decks` is an int.

## Chance nodes

Every card that leaves the shoe is a chance outcome, a card type with probability
proportional to the copies of it left where it comes from:

* the first dealer (seats 0..N-1, uniform), once, at the start;
* the deal of each round: one card at a time, to each seat from the dealer's left in turn,
  then the first card of the discard pile, each drawn from the cards not yet dealt;
* every draw from the stock: the player's action 0 is followed by a chance node whose outcome
  is the card drawn, drawn from the cards in the stock.

Reshuffles need no chance node of their own. Since every stock draw is a chance node over the
stock's contents, the order of the stock never matters, only which cards are in it. When a
player draws from an empty stock, the outcomes of that draw's chance node are the cards of the
discard pile under its top card (the cards the reshuffle puts in the stock), and the engine's
``stack_stock`` refills the stock from them exactly as a draw would before the chosen card is
drawn. Taking the top of the discard pile is not a chance event: that card is public.

The engine state behind a game state (``state.game_state``) is dealt through the engine hooks
``collect_deal`` / ``deal_card`` (a deal made of the chance outcomes) and ``stack_stock`` (the
card a stock draw takes); the engine's own random generator decides nothing that matters, so
all states share one.

## Returns

Zero until the end, then per player the sum over the rounds of the env's `relative` reward,
(mean of the others' round penalties - own penalty) / 100, computed from the final totals in
integers, (sum of all totals - N * own total) / (100 (N - 1)): the numerators sum to exactly
zero, the returns to zero up to float rounding.
`min_utility`/`max_utility` are -/+ M / 100, M the largest total penalty a player can collect:
per round the sum of the most expensive hand-size cards of the shoe (a true bound, not tight).
`max_game_length` counts decisions: 2 per turn, at most `max_turns_per_round + N - 1` turns a
round (a player may go out on the turn that reaches the limit; the others then play once more).

## Information state and resampling

The information state (tensor and string) holds what the player saw this round in order: its
dealt cards, the first discard, every turn's draw (source, and the card when the player knows
it: its own stock draws and every card taken from the pile) and discard, who went out and the
hand they laid down (public by the rules; the env's observation does not carry it), plus the
round, dealer, totals and the current hand. It is perfect recall within the round; earlier
rounds enter only through the totals they left: a round starts afresh from a full shoe, so
nothing else of them bears on the rest of the game. ``resample_from_infostate`` deals the cards
the player cannot see anew (see ``tt_env.openspiel.resample``), so information-set search
(OpenSpiel's ``ISMCTSBot``) works.
``pyspiel.deserialize_game_and_state`` unpickles part of its input (pyspiel's format for every
Python game: it cannot be made safe from here), so deserialize only strings you made. For text
from elsewhere use :func:`state_to_json` / :func:`state_from_json`: plain JSON of the game's
parameters and action history, replayed action by action with every action checked, which
runs no code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel

from ..actions import action_name
from ..engine import game as engine
from ..engine.chosen_cards import cards_to_deal, collect_deal, deal_card, stack_stock
from ..engine.cards import card_str, card_value
from ..engine.rules import MAX_DECKS, Rules, hand_size, option_names
from ..engine.scoring import REWARD_SCALE, relative_returns
from .observer import make_observer
from .resample import resample
from .state_data import ENGINE_RNG as _ENGINE_RNG
from .state_data import StateData

GAME_NAME = "python_three_thirteen"
NUM_CARD_TYPES = 52
_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_MAX_CPP_INT = 2 ** 31 - 1
"""OpenSpiel holds parameters and ``max_game_length`` in C++ ints."""


# ---------------------------------------------------------------------------- parameters

def _param_value(name: str, value: Any) -> Any:
    """A rules field as an OpenSpiel game parameter (bool, int or string)."""
    if name == "rounds":
        return "[" + ";".join(str(r) for r in value) + "]"
    if name == "decks":
        return 0 if value == "auto" else value
    return value


def parse_rounds(text: str) -> tuple[int, ...]:
    """Round numbers from a string such as ``"9,10,11"``, ``"9;10;11"``, ``"[9;10;11]"`` or ``"11"``."""
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    tokens = body.replace(",", " ").replace(";", " ").split()
    if not tokens or not all(t.isdigit() for t in tokens):
        raise ValueError(f"rounds={text!r} is not allowed: give round numbers 1..11 separated by ',' or ';', "
                         f"such as '9,10,11' (in a game string: rounds=[9;10;11])")
    return tuple(int(t) for t in tokens)


def rules_from_params(params: Mapping[str, Any]) -> Rules:
    """:class:`Rules` from OpenSpiel game parameters; bad names or values raise ``ValueError``."""
    values = dict(params)
    if isinstance(values.get("rounds"), str):
        values["rounds"] = parse_rounds(values["rounds"])
    decks = values.get("decks")
    if decks == 0 and not isinstance(decks, bool):
        values["decks"] = "auto"
    elif isinstance(decks, int) and not isinstance(decks, bool) and not 0 <= decks <= MAX_DECKS:
        raise ValueError(f"decks={decks!r} is not allowed: use 0 (auto: 1 deck for 2 players, 2 for 3-4, "
                         f"more beyond) or a number of decks from 1 to {MAX_DECKS}")
    rules = Rules.from_dict(values)
    longest = game_info_numbers(rules)["max_game_length"]
    if longest > _MAX_CPP_INT:
        raise ValueError(f"max_turns_per_round={rules.max_turns_per_round} is not allowed in OpenSpiel: the longest "
                         f"game ({longest:,} decisions) must fit a 32-bit int; use at most "
                         f"{_MAX_CPP_INT // (2 * len(rules.rounds)) - rules.num_players + 1:,}")
    return rules


def params_from_rules(rules: Rules) -> dict[str, Any]:
    """OpenSpiel game parameters of ``rules`` (the inverse of :func:`rules_from_params`)."""
    return {name: _param_value(name, getattr(rules, name)) for name in option_names()}


def max_total_penalty(rules: Rules) -> int:
    """An upper bound on one player's total: per round, the priciest hand-size cards of the shoe."""
    values = sorted((card_value(rank, aces_high=rules.aces_high) for rank in range(1, 14)
                     for _ in range(4 * rules.num_decks)), reverse=True)
    return sum(sum(values[:hand_size(r)]) for r in rules.rounds)


def game_info_numbers(rules: Rules) -> dict[str, Any]:
    """The game's sizes and bounds, all derived from ``rules`` (the fields of :func:`game_info`)."""
    n = rules.num_players
    bound = max_total_penalty(rules) / REWARD_SCALE
    return dict(num_distinct_actions=engine.NUM_ACTIONS, max_chance_outcomes=NUM_CARD_TYPES, num_players=n,
                min_utility=-bound, max_utility=bound, utility_sum=0.0,
                max_game_length=engine.max_actions(rules))


def game_info(rules: Rules) -> pyspiel.GameInfo:
    """The game's sizes and bounds as OpenSpiel's ``GameInfo``."""
    return pyspiel.GameInfo(**game_info_numbers(rules))


_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Three Thirteen",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=8,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=params_from_rules(Rules()))


# ---------------------------------------------------------------------------- game

class ThreeThirteenGame(pyspiel.Game):
    """``python_three_thirteen``: the game for one set of rules (``self.rules``)."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        rules = rules_from_params(params or {})
        super().__init__(_GAME_TYPE, game_info(rules), params_from_rules(rules))
        self.rules = rules

    def new_initial_state(self) -> ThreeThirteenState:
        """The state before the first dealer is chosen."""
        return ThreeThirteenState(self)

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None,
                         params: Mapping[str, Any] | None = None) -> Any:
        """The observer of ``iig_obs_type``: perfect recall gives the information state, else the
        env's observation (default)."""
        if isinstance(iig_obs_type, Mapping):  # OpenSpiel calls make_py_observer(params) too
            iig_obs_type, params = None, iig_obs_type
        return make_observer(self.rules, iig_obs_type, params)


class ThreeThirteenState(pyspiel.State):
    """A position of ``python_three_thirteen``; every rule is the engine's."""

    def __init__(self, game: ThreeThirteenGame) -> None:
        super().__init__(game)
        self._data = StateData(game.rules)

    @property
    def game_state(self) -> engine.GameState | None:
        """The engine's state (None before the first dealer is chosen); read it, don't change it."""
        return self._data.engine

    @property
    def data(self) -> StateData:
        """The engine state and this round's log (for the observers and the resampler)."""
        return self._data

    # -- OpenSpiel API ------------------------------------------------------------------
    def current_player(self) -> int:
        d = self._data
        if d.engine is None or d.to_deal or d.pending_draw:
            return _CHANCE
        if d.engine.game_over:
            return _TERMINAL
        return d.engine.current_player

    def is_terminal(self) -> bool:
        return self._data.engine is not None and self._data.engine.game_over

    def _legal_actions(self, player: int) -> list[int]:
        return engine.legal_actions(self._data.engine)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        d = self._data
        if d.engine is None:
            n = d.rules.num_players
            return [(seat, 1.0 / n) for seat in range(n)]
        state = d.engine
        pool = state.discard_pile[:-1] if d.pending_draw and not state.stock else state.stock
        counts = [0] * NUM_CARD_TYPES
        for c in pool:
            counts[c] += 1
        size = len(pool)
        return [(c, k / size) for c, k in enumerate(counts) if k]

    def _apply_action(self, action: int) -> None:
        d = self._data
        state = d.engine
        if state is None:
            state = engine.new_game(d.rules, _ENGINE_RNG)
            collect_deal(state, dealer=action)
            d.engine, d.to_deal = state, cards_to_deal(state)
        elif d.to_deal:
            deal_card(state, action)
            d.dealt.append(action)
            d.to_deal -= 1
        elif d.pending_draw:
            below = None if state.stock else state.discard_pile[:-1]
            if stack_stock(state, action):
                d.refills.append((len(d.source) - 1, below))
            engine.apply(state, engine.DRAW_STOCK)
            d.drawn[-1] = action
            d.pending_draw = False
        elif action == engine.DRAW_STOCK:
            if engine.DRAW_STOCK not in engine.legal_actions(state):
                raise ValueError(f"illegal action 0 (draw stock) at {state.describe()}: legal actions are "
                                 f"{engine.legal_actions(state)}")
            d.pending_draw = True
            d.source.append(0)
            d.drawn.append(-1)
            d.discarded.append(-1)
        elif action == engine.TAKE_DISCARD:
            card = state.discard_pile[-1] if state.discard_pile else -1
            engine.apply(state, action)
            d.source.append(1)
            d.drawn.append(card)
            d.discarded.append(-1)
        else:
            result = engine.apply(state, action)
            d.discarded[-1] = action - engine.DISCARD_BASE
            if result.went_out:
                d.out_turn = len(d.source) - 1
            if result.round_record is not None and not result.game_over:
                d.start_deal()

    def _action_to_string(self, player: int, action: int) -> str:
        d = self._data
        if player == _CHANCE:
            if d.engine is None:
                return f"first dealer player_{action}"
            if d.to_deal == 1:
                return f"turn up {card_str(action)}"
            if d.to_deal:
                n = d.rules.num_players
                return f"deal {card_str(action)} to player_{d.actor(len(d.dealt) % n)}"
            return f"player_{d.engine.current_player} draws {card_str(action)}"
        state = d.engine
        if (action == engine.TAKE_DISCARD and state is not None and state.phase == engine.PHASE_DRAW
                and state.discard_pile):
            return f"take {card_str(state.discard_pile[-1])}"
        return action_name(action)

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self._data.rules.num_players
        return relative_returns(self._data.engine.scores)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> ThreeThirteenState:
        """A state the player cannot tell from this one: the cards it cannot see dealt anew.

        ``probability_sampler()`` (such as ``pyspiel.UniformProbabilitySampler(0., 1.)``) gives
        the randomness. The new state's own ``history()`` starts empty: pyspiel keeps the action
        history in C++, and the real one would tell the hidden cards.
        """

        seed = int(probability_sampler() * 2.0**52)
        fresh = self.get_game().new_initial_state()
        fresh._data = resample(self._data, player_id, np.random.default_rng(seed))
        return fresh

    def __str__(self) -> str:
        d = self._data
        state = d.engine
        if state is None:
            return "first dealer not chosen yet"
        if d.to_deal:
            stage = f"dealing: {d.to_deal} cards to deal"
        elif d.pending_draw:
            stage = f"player_{state.current_player} draws from the stock"
        else:
            stage = "game over" if state.game_over else f"player_{state.current_player} to move"
        lines = [f"{state.describe()}; dealer {state.dealer}; {stage}"]
        for seat, hand in enumerate(state.hands):
            lines.append(f"player_{seat} ({state.scores[seat]}): {_names(sorted(hand))}")
        lines.append(f"discard pile: {_names(state.discard_pile)}")
        lines.append(f"stock: {_names(sorted(state.stock))}")
        return "\n".join(lines)


JSON_FORMAT = "python_three_thirteen-state/1"


def state_to_json(state: ThreeThirteenState) -> str:
    """The state as JSON: the game's parameters and the history of actions (chance outcomes too).

    A resampled state (``resample_from_infostate``) has no history of its own and cannot be
    written this way.
    """
    from ..jsonio import dumps

    game = state.get_game()
    if state.history() == [] and state.game_state is not None:
        raise ValueError("this state has no action history (a resampled state?): it cannot be written as JSON")
    params = {k: v for k, v in game.get_parameters().items()}
    return dumps({"format": JSON_FORMAT, "game": GAME_NAME, "params": params, "history": list(state.history())})


def max_history_length(rules: Rules) -> int:
    """An upper bound on the actions of a whole game, chance outcomes included: the first dealer, every
    card dealt, every decision, and a chance outcome for at most every other decision (stock draws)."""
    n = rules.num_players
    dealt = sum(n * hand_size(r) + 1 for r in rules.rounds)
    decisions = game_info_numbers(rules)["max_game_length"]
    return 1 + dealt + decisions + decisions // 2


def state_from_json(text: str) -> tuple[pyspiel.Game, ThreeThirteenState]:
    """``(game, state)`` from :func:`state_to_json`'s text; ``ValueError`` names what is wrong.

    Safe for untrusted text: it is parsed as bounded JSON (:func:`tt_env.jsonio.loads`), the
    parameters are checked as :class:`Rules` before OpenSpiel sees them, the history's length
    against the longest game those rules allow, and every action against the legal actions (or
    chance outcomes) of the state it is applied to. Whatever the text, the only error is
    ``ValueError``.
    """
    from ..jsonio import loads

    try:
        data = loads(text, "it")
    except ValueError as exc:
        raise ValueError(f"not a {JSON_FORMAT} text: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
        shown = data.get("format") if isinstance(data, dict) else None
        raise ValueError(f"not a {JSON_FORMAT} text (its 'format' is {str(shown)[:80]!r})")
    if data.get("game", GAME_NAME) != GAME_NAME:
        raise ValueError(f"a {JSON_FORMAT} text is a state of {GAME_NAME!r}, not of {str(data['game'])[:80]!r}")
    params, history = data.get("params"), data.get("history")
    if not isinstance(params, dict) or not isinstance(history, list):
        raise ValueError("a state text needs 'params' (an object) and 'history' (a list of action ids)")
    rules = rules_from_params(params)  # ValueError for any name or value the game does not take
    if len(history) > max_history_length(rules):
        raise ValueError(f"a history of {len(history):,} actions is longer than any game under these rules "
                         f"(at most {max_history_length(rules):,})")
    game = pyspiel.load_game(GAME_NAME, params_from_rules(rules))
    state = game.new_initial_state()
    for step, action in enumerate(history):
        if not isinstance(action, int) or isinstance(action, bool):
            raise ValueError(f"history[{step}] = {str(action)[:40]!r} is not an action id")
        if state.is_terminal():
            raise ValueError(f"history[{step}]: the game is already over")
        allowed = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions())
        if action not in allowed:
            raise ValueError(f"history[{step}] = {action} is not legal there: allowed are {allowed}")
        state.apply_action(action)
    return game, state


_CARD_NAMES = [card_str(c) for c in range(NUM_CARD_TYPES)]


def _names(cards: list[int]) -> str:
    """``cards_str``, by table lookup (``__str__`` runs at every step of OpenSpiel's tests)."""
    return " ".join([_CARD_NAMES[c] for c in cards])


if GAME_NAME not in pyspiel.registered_names():
    pyspiel.register_game(_GAME_TYPE, ThreeThirteenGame)
