"""The game state machine: deal, draw, discard, go out, score, next round.

``GameState`` is plain data; only the transition functions here change it
(:func:`new_game`, :func:`apply`). All randomness comes from the state's seeded
``numpy.random.Generator``. Actions use the flat ids of ``tt_env.actions``: 0 draws from the
stock, 1 takes the top of the discard pile, ``2 + c`` discards card ``c``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cards import card_str
from .cardlist import CardList
from .melds import least_penalty
from .rules import Rules, hand_size, wild_rank

DRAW_STOCK = 0
TAKE_DISCARD = 1
DISCARD_BASE = 2
NUM_ACTIONS = DISCARD_BASE + 52

PHASE_DRAW = 0
PHASE_DISCARD = 1


@dataclass
class RoundRecord:
    """What happened in one finished round."""

    round_number: int
    dealer: int
    went_out: int | None
    hands: list[list[int]]
    points: list[int]
    turns: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class StepResult:
    """What one call of :func:`apply` did beyond moving a card."""

    went_out: bool = False
    round_record: RoundRecord | None = None
    game_over: bool = False
    reshuffled: bool = False


@dataclass
class GameState:
    """Everything about a game in progress; every card is in exactly one of hands, stock, discard_pile.

    Public knowledge is kept with the cards: ``known_taken[p]`` lists the cards seat ``p``
    took from the discard pile this round and still holds, ``discards[p]`` what it discarded
    this round (in order), ``passed[p]`` the top discards it passed over this round (the card
    on top of the pile each time it drew from the stock instead, in order).
    ``taken_this_turn`` is the card type just taken from the discard pile (it may not be
    discarded again this turn unless the rules allow it).
    """

    rules: Rules
    rng: np.random.Generator
    hands: list[list[int]]
    stock: list[int]
    discard_pile: list[int]
    round_index: int
    round_number: int
    dealer: int
    current_player: int
    phase: int
    scores: list[int]
    went_out: int | None = None
    turn: int = 0
    taken_this_turn: int | None = None
    known_taken: list[list[int]] = field(default_factory=list)
    discards: list[list[int]] = field(default_factory=list)
    passed: list[list[int]] = field(default_factory=list)
    round_results: list[RoundRecord] = field(default_factory=list)
    game_over: bool = False
    shuffle_rng: np.random.Generator | None = None
    """Generator of the reshuffles of an empty stock; ``None``: ``rng``. A separate one keeps
    the deals of later rounds independent of play (duplicate evaluation replays deals)."""

    def __post_init__(self) -> None:
        if not self.passed:  # states built by hand (search, tests) start with nothing passed over
            self.passed = [CardList() for _ in range(self.rules.num_players)]

    @property
    def wild_rank(self) -> int:
        """Rank (1..13) that is wild this round."""
        return wild_rank(self.round_number)

    def penalty(self, seat: int) -> int:
        """Least penalty of the hand ``seat`` holds now."""
        r = self.rules
        return least_penalty(self.hands[seat], self.wild_rank, r.aces_high, r.meld_needs_natural)

    def clone(self) -> GameState:
        """An independent copy (random generators included, deep-copied), for what-ifs."""
        return copy.deepcopy(self)

    def copy(self, rng: np.random.Generator | None = None) -> GameState:
        """A cheap independent copy for simulation: card lists copied, rules and finished rounds shared.

        With ``rng`` the copy deals and reshuffles from ``rng`` (nothing is copied: the search's
        hot path); without, its generators are deep copies of this state's (the copy then
        replays exactly what this state would). Finished :class:`RoundRecord` s are shared,
        never mutated.
        """
        dup = copy.copy(self)
        dup.hands = [list(h) for h in self.hands]
        dup.stock = list(self.stock)
        dup.discard_pile = _copy_cards(self.discard_pile)
        dup.scores = list(self.scores)
        dup.known_taken = [list(k) for k in self.known_taken]
        dup.discards = [_copy_cards(d) for d in self.discards]
        dup.passed = [_copy_cards(d) for d in self.passed]
        dup.round_results = list(self.round_results)
        if rng is not None:
            dup.rng, dup.shuffle_rng = rng, None
        else:
            dup.rng = copy.deepcopy(self.rng)
            dup.shuffle_rng = None if self.shuffle_rng is None else copy.deepcopy(self.shuffle_rng)
        return dup

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready snapshot, random generator state included."""
        skip = ("rules", "rng", "shuffle_rng", "round_results")
        out = {k: copy.deepcopy(v) for k, v in self.__dict__.items() if k not in skip}
        out["rules"] = self.rules.to_dict()
        out["rng"] = self.rng.bit_generator.state
        out["shuffle_rng"] = None if self.shuffle_rng is None else self.shuffle_rng.bit_generator.state
        out["round_results"] = [r.to_dict() for r in self.round_results]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameState:
        """Inverse of :meth:`to_dict`."""
        values = dict(data)
        rules = Rules.from_dict(values.pop("rules"))
        rng = np.random.default_rng()
        rng.bit_generator.state = values.pop("rng")
        shuffle_state = values.pop("shuffle_rng", None)
        if shuffle_state is not None:
            values["shuffle_rng"] = np.random.default_rng()
            values["shuffle_rng"].bit_generator.state = shuffle_state
        records = [RoundRecord(**r) for r in values.pop("round_results")]
        values["discard_pile"] = CardList(values["discard_pile"])
        values["discards"] = [CardList(d) for d in values["discards"]]
        values["passed"] = [CardList(d) for d in values.get("passed", [[] for _ in values["discards"]])]
        return cls(rules=rules, rng=rng, round_results=records, **values)

    def describe(self) -> str:
        """One-line summary for logs and failing-test messages."""
        top = card_str(self.discard_pile[-1]) if self.discard_pile else "--"
        return (f"round {self.round_number} turn {self.turn} seat {self.current_player} "
                f"{'draw' if self.phase == PHASE_DRAW else 'discard'}; top {top}; "
                f"stock {len(self.stock)}; scores {self.scores}")


def _copy_cards(cards: list[int]) -> list[int]:
    """A copy of a card list, keeping a :class:`CardList` a ``CardList``."""
    return cards.copy()


def new_game(rules: Rules, rng: np.random.Generator, *,
             shuffle_rng: np.random.Generator | None = None) -> GameState:
    """A game at the first turn of its first round; the first dealer and the deals come from
    ``rng``, the reshuffles of an empty stock from ``shuffle_rng`` (default: ``rng`` too)."""
    n = rules.num_players
    state = GameState(rules=rules, rng=rng, hands=[[] for _ in range(n)], stock=[], discard_pile=[],
                      round_index=0, round_number=rules.rounds[0], dealer=int(rng.integers(n)),
                      current_player=0, phase=PHASE_DRAW, scores=[0] * n, shuffle_rng=shuffle_rng)
    _deal(state)
    return state


def _deal(state: GameState) -> None:
    """Shuffle the shoe, deal the round's hands from the dealer's left, turn up the first discard."""
    rules, n = state.rules, state.rules.num_players
    shoe = [int(c) for c in state.rng.permutation(rules.num_cards) % 52]
    size = hand_size(state.round_number)
    order = [(state.dealer + 1 + i) % n for i in range(n)]
    state.hands = [[] for _ in range(n)]
    for _ in range(size):
        for seat in order:
            state.hands[seat].append(shoe.pop())
    state.discard_pile = CardList([shoe.pop()])
    state.stock = shoe
    state.current_player = order[0]
    state.phase = PHASE_DRAW
    state.went_out = None
    state.turn = 0
    state.taken_this_turn = None
    state.known_taken = [[] for _ in range(n)]
    state.discards = [CardList() for _ in range(n)]
    state.passed = [CardList() for _ in range(n)]


def max_actions(rules: Rules) -> int:
    """The most actions a whole game can take: two a turn, at most ``max_turns_per_round + N - 1``
    turns a round (someone may go out on the turn that reaches the limit; the others then play once)."""
    return len(rules.rounds) * 2 * (rules.max_turns_per_round + rules.num_players - 1)


def legal_actions(state: GameState) -> list[int]:
    """Ids of the actions the player to move may take now (empty once the game is over)."""
    if state.game_over:
        return []
    if state.phase == PHASE_DRAW:
        acts = []
        if state.stock or len(state.discard_pile) > 1:
            acts.append(DRAW_STOCK)
        if state.discard_pile:
            acts.append(TAKE_DISCARD)
        return acts
    hand = state.hands[state.current_player]
    banned = state.taken_this_turn
    if banned is None or state.rules.discard_drawn_discard or all(c == banned for c in hand):
        return sorted({DISCARD_BASE + c for c in hand})
    return sorted({DISCARD_BASE + c for c in hand if c != banned})


def action_mask(state: GameState) -> np.ndarray:
    """int8 mask over the 54 action ids: 1 where :func:`legal_actions` allows it."""
    mask = bytearray(NUM_ACTIONS)
    if state.game_over:
        return np.frombuffer(mask, dtype=np.int8)
    if state.phase == PHASE_DRAW:
        if state.stock or len(state.discard_pile) > 1:
            mask[DRAW_STOCK] = 1
        if state.discard_pile:
            mask[TAKE_DISCARD] = 1
    else:
        hand = state.hands[state.current_player]
        for c in hand:
            mask[DISCARD_BASE + c] = 1
        banned = state.taken_this_turn
        if banned is not None and not state.rules.discard_drawn_discard and any(c != banned for c in hand):
            mask[DISCARD_BASE + banned] = 0
    return np.frombuffer(mask, dtype=np.int8)


def _is_legal(state: GameState, action: int) -> bool:
    """Whether ``action`` is legal now (the same answer as :func:`legal_actions`, faster)."""
    if state.phase == PHASE_DRAW:
        if action == DRAW_STOCK:
            return bool(state.stock) or len(state.discard_pile) > 1
        return action == TAKE_DISCARD and bool(state.discard_pile)
    card = action - DISCARD_BASE
    hand = state.hands[state.current_player]
    if not 0 <= card < 52 or card not in hand:
        return False
    banned = state.taken_this_turn
    if card != banned or banned is None or state.rules.discard_drawn_discard:
        return True
    return all(c == banned for c in hand)


ACTION_TYPES_TEXT = ("an int 0..53: a Python int, a numpy integer scalar or a 0-d numpy integer array "
                     "(not a bool, float, string, None or longer array)")


def as_action(action: Any) -> int:
    """``action`` as a plain ``int``; ``TypeError`` naming the allowed types for anything else.

    Accepted: ``int``, numpy integer scalars (``np.int64(5)``) and 0-d integer arrays
    (``np.array(5)``). Rejected, because they are almost always a bug upstream (a policy
    output not turned into an action, a mask passed by mistake): bools, floats (even
    ``2.0``), strings, ``None`` and arrays with a shape.
    """
    if type(action) is int:
        return action
    if isinstance(action, np.integer):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return int(action)
    shown = f"array of shape {action.shape} and dtype {action.dtype}" if isinstance(action, np.ndarray) \
        else f"{action!r} ({type(action).__name__})"
    raise TypeError(f"action {shown} is not an action: use {ACTION_TYPES_TEXT}")


def apply(state: GameState, action: int) -> StepResult:
    """Play ``action`` for the player to move; raises ``ValueError`` naming the legal ones if illegal
    (``TypeError`` if ``action`` is not an integer, see :func:`as_action`)."""
    if state.game_over:
        raise ValueError("the game is over: no action is legal; reset to play again")
    if type(action) is not int:
        action = as_action(action)
    if not _is_legal(state, action):
        raise ValueError(f"illegal action {action!r} at {state.describe()}: legal actions are "
                         f"{legal_actions(state)} (0 draw stock, 1 take discard, 2+c discard card c)")
    seat = state.current_player
    hand = state.hands[seat]
    result = StepResult()
    if state.phase == PHASE_DRAW:
        if action == DRAW_STOCK:
            if state.discard_pile:
                state.passed[seat].append(state.discard_pile[-1])
            if not state.stock:
                _refill_stock(state)
                result.reshuffled = True
            hand.append(state.stock.pop())
        else:
            card = state.discard_pile.pop()
            hand.append(card)
            state.known_taken[seat].append(card)
            state.taken_this_turn = card
        state.phase = PHASE_DISCARD
        return result

    card = action - DISCARD_BASE
    hand.remove(card)
    state.discard_pile.append(card)
    state.discards[seat].append(card)
    if card in state.known_taken[seat]:
        state.known_taken[seat].remove(card)
    state.taken_this_turn = None
    state.turn += 1
    if state.went_out is None and state.penalty(seat) == 0:
        state.went_out = seat
        result.went_out = True
    nxt = (seat + 1) % state.rules.num_players
    if nxt == state.went_out or (state.went_out is None and state.turn >= state.rules.max_turns_per_round):
        result.round_record = _end_round(state)
        result.game_over = state.game_over
    else:
        state.current_player = nxt
        state.phase = PHASE_DRAW
    return result


def applied(state: GameState, action: int, rng: np.random.Generator | None = None
            ) -> tuple[GameState, StepResult]:
    """``action`` played on a copy of ``state`` (:meth:`GameState.copy` with ``rng``); ``state`` is untouched."""
    child = state.copy(rng)
    return child, apply(child, action)


def round_penalties(state: GameState) -> list[int]:
    """Points each seat would score if the round ended now: its least penalty, 0 for who went out."""
    return [0 if seat == state.went_out else state.penalty(seat) for seat in range(state.rules.num_players)]


def _end_round(state: GameState) -> RoundRecord:
    """Score every hand, add to the totals, record the round, and deal the next (or end the game)."""
    n = state.rules.num_players
    points = round_penalties(state)
    record = RoundRecord(round_number=state.round_number, dealer=state.dealer, went_out=state.went_out,
                         hands=[list(h) for h in state.hands], points=points, turns=state.turn)
    state.round_results.append(record)
    state.scores = [s + p for s, p in zip(state.scores, points, strict=True)]
    if state.round_index + 1 >= len(state.rules.rounds):
        state.game_over = True
        return record
    state.round_index += 1
    state.round_number = state.rules.rounds[state.round_index]
    state.dealer = (state.dealer + 1) % n
    _deal(state)
    return record


def winners(state: GameState) -> list[int]:
    """Seats with the lowest total score (several on a tie)."""
    low = min(state.scores)
    return [seat for seat, s in enumerate(state.scores) if s == low]


def _refill_stock(state: GameState) -> None:
    """Shuffle the discard pile under its top card into a new stock (the pile keeps its top)."""
    top = state.discard_pile.pop()
    shuffler = state.rng if state.shuffle_rng is None else state.shuffle_rng
    state.stock = [state.discard_pile[i] for i in shuffler.permutation(len(state.discard_pile))]
    state.discard_pile = CardList([top])


_MOVED_TO_CHOSEN_CARDS = ("collect_deal", "cards_to_deal", "deal_card", "stack_stock")


def __getattr__(name: str) -> Any:
    """The chosen-cards functions moved to :mod:`tt_env.engine.chosen_cards`: warn, then give them."""
    if name in _MOVED_TO_CHOSEN_CARDS:
        import warnings

        from . import chosen_cards

        warnings.warn(f"tt_env.engine.game.{name} is deprecated: import it from tt_env.engine.chosen_cards",
                      DeprecationWarning, stacklevel=2)
        return getattr(chosen_cards, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
