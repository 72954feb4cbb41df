"""What an OpenSpiel state of Three Thirteen holds: :class:`StateData`.

Its own module, below ``game`` (the pyspiel classes) and ``resample`` (the resampler of
information-set search), which both build on it. No pyspiel here.
"""

from __future__ import annotations

import numpy as np

from ..engine import game as engine
from ..engine.chosen_cards import cards_to_deal, collect_deal
from ..engine.rules import Rules

# The engine's own generator decides nothing here: it makes deals that collect_deal takes back
# and the order of a refilled stock, whose next card a chance node chooses anyway. So every
# engine state of this game shares this one (copies are cheaper without a generator each).
ENGINE_RNG = np.random.default_rng(0)


class StateData:
    """Everything a state holds, in one object so that ``clone`` copies it in one go.

    ``engine`` is None until the first dealer is chosen. This round's log, per turn in order:
    ``source`` (0 stock, 1 discard pile), ``drawn`` (the card, -1 while a stock draw waits for
    its chance node), ``discarded`` (-1 until the discard); ``dealt`` is the deal in order, the
    first discard last; ``refills`` lists each reshuffle as (turn, the cards that became the
    stock); ``out_turn`` is the turn on which someone went out (-1: nobody yet).
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.engine: engine.GameState | None = None
        self.to_deal = 0
        self.pending_draw = False
        self.dealt: list[int] = []
        self.source: list[int] = []
        self.drawn: list[int] = []
        self.discarded: list[int] = []
        self.refills: list[tuple[int, list[int]]] = []
        self.out_turn = -1

    def __deepcopy__(self, memo: dict) -> StateData:
        copied = StateData.__new__(StateData)
        copied.rules = self.rules  # frozen
        copied.engine = None if self.engine is None else self.engine.copy(ENGINE_RNG)
        copied.to_deal, copied.pending_draw, copied.out_turn = self.to_deal, self.pending_draw, self.out_turn
        copied.dealt, copied.source = list(self.dealt), list(self.source)
        copied.drawn, copied.discarded = list(self.drawn), list(self.discarded)
        copied.refills = list(self.refills)  # its card lists are never changed
        return copied

    def start_deal(self) -> None:
        """Take the engine's fresh deal back: the round is dealt by chance nodes, card by card."""
        collect_deal(self.engine)
        self.to_deal = cards_to_deal(self.engine)
        self.dealt, self.source, self.drawn, self.discarded, self.refills = [], [], [], [], []
        self.out_turn = -1

    def actor(self, turn: int) -> int:
        """Seat that plays turn ``turn`` (0-based) of this round."""
        return (self.engine.dealer + 1 + turn) % self.rules.num_players
