"""Policy-based inference: keep the sampled worlds in which the opponent's last discard makes sense.

Skat programs weigh sampled worlds by how likely a model of the opponents' play makes the
moves the opponents were seen to make (Solinas, Rebstock and Buro 2019). Here the move is the
last discard of the player who moved just before the observer, and the model is a policy
(``expert-v0`` by default): in a world, that player's hand before its discard is its hand
now plus the card it discarded; the world is *consistent* when the model, given that hand
and the table as the player then saw it, would discard that card. Search can then redraw
worlds that are not (:class:`~tt_env.agents.ismcts.ISMCTSAgent`'s ``infer`` option).

What the player saw when it discarded is rebuilt from the world: the discard pile without
that card, its discards this round without it, a turn less, the observer's hand one card
smaller and the stock one card larger when the observer has drawn since (the observer's
cards only enter as a count). What is not known (whether it had just taken the card under
its discard) is left out: it had not.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import game
from ..engine.game import DISCARD_BASE, PHASE_DISCARD, GameState
from ..observation import encode

Policy = Callable[[np.ndarray, np.ndarray, np.random.Generator], int]
_RNG = np.random.default_rng(0)  # the policies used here draw nothing from it


def last_discard_state(world: GameState) -> tuple[GameState, int] | None:
    """``(the state before the last discard of the seat before the observer, that card)``, or
    ``None`` when that discard cannot be told from the world (no discard of that seat this
    round, someone went out, the card is not where its last discard lies)."""
    n = world.rules.num_players
    prev = n - 1
    if world.went_out is not None or not world.discards[prev] or world.current_player != 0:
        return None
    before = world.copy(np.random.default_rng(0))
    if world.phase == PHASE_DISCARD:
        if world.taken_this_turn is not None:  # the observer took it
            card = world.taken_this_turn
            before.hands[0].remove(card)
        else:  # the observer drew from the stock: its discard is still on top
            if not world.discard_pile:
                return None
            card = before.discard_pile.pop()
            drawn = before.hands[0].pop()  # any card: the player saw only how many the observer held
            before.stock.append(drawn)
        before.known_taken[0] = [c for c in before.known_taken[0] if c != world.taken_this_turn]
        before.taken_this_turn = None
    else:
        if not world.discard_pile:
            return None
        card = before.discard_pile.pop()
    if card not in before.discards[prev]:
        return None
    before.discards[prev].remove(card)
    before.hands[prev].append(card)
    before.turn -= 1
    before.current_player = prev
    before.phase = PHASE_DISCARD
    return before, card


def discard_is_consistent(world: GameState, policy: Policy) -> bool:
    """Whether ``policy``, in the seat before the observer, would have made its last discard in
    ``world`` (``True`` when that discard cannot be told: nothing to test)."""
    found = last_discard_state(world)
    if found is None:
        return True
    before, card = found
    seat = before.current_player
    mask = game.action_mask(before)
    if not mask[DISCARD_BASE + card]:
        return True  # the world cannot replay the move (an unknown ban): no evidence either way
    return int(policy(encode(before, seat), mask, _RNG)) == DISCARD_BASE + card
