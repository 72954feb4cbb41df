"""Search over sampled hidden cards: :func:`determinize` turns what a seat knows into a full game.

A seat's observation (``tt_env.observation``) fixes its own hand, the discard pile (top and
contents), the cards each opponent is known to hold (taken from the discard pile this round),
every hand size, the stock size, the scores, the round, the phase and the turn. Everything
else, the *hidden* cards, lies in the opponents' other slots and in the stock. A
determinization deals those hidden cards uniformly at random (one uniform permutation of the
hidden multiset, cut into the opponents' unknown slots and the stock), so every arrangement
consistent with the observation has positive probability, and it reads nothing but the
observation: the true hidden cards cannot influence it.

The state returned has the observer at seat 0 and its opponents at seats 1.. in the order of
the observation (the observer's left first), so ``encode(determinize(obs, rules, rng), 0)``
equals ``obs`` exactly. What the observation does not say is filled in as follows:

- the order of the discard pile below its top: a uniform permutation (it matters only for
  nothing: a reshuffle shuffles it anyway);
- the seat to move: the observer when ``action_mask`` has a legal action; otherwise the seat
  that the discard counts and hand sizes imply (the player to discard holds one card more;
  the seats that have discarded once more than the others are the first ones of the round),
  drawn uniformly when several fit;
- the dealer: the seat right of the round's first player (turns pass one seat at a time);
- the card the observer took from the discard pile this turn: the card the mask forbids
  (default rules) in the discard phase, else none;
- the observer's own discards of this round (its opponents' view of it, used only when
  search lets opponents move): the discard pile's cards not explained by the opponents'
  discards, as many as its discard count allows;
- the generators: fresh ones drawn from ``rng`` for the next deals and reshuffles.

``GameState.copy`` and ``game.applied`` make the cheap copies search plays on, and
``game.round_penalties`` gives the points of a round ending now.

:func:`sample_world` is what search samples from: a determinization whose opponents' hidden
cards are then tilted towards what they are likely to hold. Uniform hidden cards deal each
opponent a random hand, but a player who has been keeping what melds for t turns holds far
less deadwood than a uniform hand. The tilt is a short Metropolis walk that swaps an opponent's unknown
cards with the stock's, targeting a density proportional to ``exp(-belief * t * penalty)``
with t the opponent's discards this round (the default ``belief``, 0.04, was chosen so that
tilted hands held about as much deadwood as expert-v0's real hands in self-play), and that never
leaves the opponent a fully melded hand when it has discarded this round (it would have gone
out). Only unknown cards move, so the world still encodes to the same observation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from ..engine import game
from ..engine.cardlist import CardList
from ..engine.melds import least_penalty
from ..engine.rules import Rules, hand_size
from ..observation.checks import InconsistentObservation, as_vector, check_world, read_observation

_CARD_IDS = np.arange(52)


def _cards_of(counts: np.ndarray) -> list[int]:
    """Card ints of a count vector, each repeated by its count, in card order."""
    return _CARD_IDS.repeat(counts).tolist()


def determinize(observation: np.ndarray | Mapping[str, Any], rules: Rules, rng: np.random.Generator,
                action_mask: np.ndarray | None = None) -> game.GameState:
    """A full game state consistent with ``observation`` (the observer at seat 0), hidden cards sampled.

    ``observation`` is a seat's observation vector, or the env's dict with ``"observation"``
    and ``"action_mask"``. ``rules`` are the game's rules (public). Raises
    :class:`InconsistentObservation` when the observation (or the mask) cannot arise under
    ``rules``: every piece is checked before use (:mod:`tt_env.observation.checks`), and the
    world built must encode to the observation exactly.
    """
    obs, action_mask = as_vector(observation, action_mask)
    seen = read_observation(obs, rules)
    n = rules.num_players
    rows, row_sums, top, taken, discarded = seen.rows, seen.row_sums, seen.top, seen.taken, seen.discarded
    round_number, phase, went_out, turn = seen.round_number, seen.phase, seen.went_out, seen.turn
    sizes, stock_size, scores = seen.sizes, seen.stock_size, seen.scores

    # ---- the hidden cards and where they may go
    pile_counts = rows[1] + rows[2]  # the top (one-hot or zero) and the pile below it
    hidden = rules.num_decks - rows[:n + 2].sum(axis=0)  # less the hand, the pile and the opponents' taken cards
    if hidden.min() < 0:
        card = int(hidden.argmin())
        raise InconsistentObservation(f"card {card} is seen more often than the {rules.num_decks} deck(s) hold")
    slots = [sizes[k] - row_sums[2 + k] for k in range(1, n)]
    if min(slots, default=0) < 0 or sizes[0] != row_sums[0]:
        raise InconsistentObservation(f"hand sizes {sizes} do not fit the cards seen in the hands")
    num_hidden = int(hidden.sum())
    if sum(slots) + stock_size != num_hidden:
        raise InconsistentObservation(f"{num_hidden} hidden cards do not fill {sum(slots)} unknown hand "
                                      f"slots and a stock of {stock_size}")
    pool = _CARD_IDS.repeat(hidden)
    dealt = pool[rng.permutation(pool.size)].tolist()

    known_taken = [[]] + [_cards_of(t) for t in taken]
    hands = [_cards_of(seen.hand)]
    pos = 0
    for k in range(1, n):
        hands.append(known_taken[k] + dealt[pos:pos + slots[k - 1]])
        pos += slots[k - 1]
    stock = dealt[pos:]
    rest = _cards_of(seen.below)
    rest = [rest[i] for i in rng.permutation(len(rest)).tolist()]
    discard_pile = CardList(rest + ([top] if top is not None else []))

    # ---- who is to move, who dealt, what the observer took and threw
    per_opponent = row_sums[n + 2:]
    own_discards = turn - sum(per_opponent)  # >= 0: read_observation checked it
    per_seat = [own_discards] + per_opponent
    legal_now = action_mask is not None and bool(action_mask.any())
    movers = [0] if legal_now else _possible_movers(per_seat, turn, n, sizes, hand_size(round_number), phase,
                                                    went_out)
    if not movers:
        raise InconsistentObservation(f"no seat can be the one to move (discards per seat {per_seat}, turn "
                                      f"{turn}, hand sizes {sizes}, phase {phase})")
    current = movers[int(rng.integers(len(movers)))] if len(movers) > 1 else movers[0]
    if legal_now and current not in _possible_movers(per_seat, turn, n, sizes, hand_size(round_number), phase,
                                                     went_out):
        raise InconsistentObservation("the action mask says the observer is to move, but the observation's "
                                      "turn and hand sizes say otherwise")
    first = (current - turn) % n
    taken_this_turn = None
    if legal_now and phase == game.PHASE_DISCARD and not rules.discard_drawn_discard:
        banned = [c for c in set(hands[0]) if not action_mask[game.DISCARD_BASE + c]]
        if banned:
            taken_this_turn = banned[0]
            known_taken[0] = [taken_this_turn]
    unexplained = np.maximum(pile_counts - discarded.sum(axis=0), 0)
    mine = _cards_of(unexplained)[:own_discards]
    discards = [CardList(mine)] + [CardList(_cards_of(d)) for d in discarded]

    deal_seed, shuffle_seed = rng.integers(2 ** 63, size=2)
    world = game.GameState(
        rules=rules, rng=np.random.default_rng(int(deal_seed)), hands=hands, stock=stock,
        discard_pile=discard_pile, round_index=rules.rounds.index(round_number), round_number=round_number,
        dealer=(first - 1) % n, current_player=current, phase=phase, scores=scores, went_out=went_out,
        turn=turn, taken_this_turn=taken_this_turn, known_taken=known_taken, discards=discards,
        shuffle_rng=np.random.default_rng(int(shuffle_seed)))
    check_world(world, obs, action_mask if legal_now else None)
    return world


def _possible_movers(per_seat: list[int], turn: int, n: int, sizes: list[int], size: int, phase: int,
                     went_out: int | None) -> list[int]:
    """Seats that can be the one to move, given each seat's discards this round and the hand sizes."""
    movers = []
    for seat in range(n):
        first = (seat - turn) % n
        expected = [(turn - ((s - first) % n) + n - 1) // n for s in range(n)]
        if expected != per_seat or seat == went_out:
            continue
        want = [size + (1 if (s == seat and phase == game.PHASE_DISCARD) else 0) for s in range(n)]
        if want != sizes:
            continue
        movers.append(seat)
    return movers


class HandBelief(Protocol):
    """A model of the opponents' unknown cards that reads only the observation (``models.belief.Belief``)."""

    def sample_unknown(self, observation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``(opponents, 52)`` counts of one draw of every opponent's unknown cards (the observation's order)."""

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """``(opponents, 52)``: the log weight of each unseen copy of each card type in each opponent's hand."""


MAX_REDRAWS = 20
"""Draws of a learned belief's hands before a world keeps a fully melded hand it cannot hold (the
opponent would have gone out); each redraw is a fresh draw of every opponent's unknown cards."""


def sample_world(observation: np.ndarray | Mapping[str, Any], rules: Rules, rng: np.random.Generator,
                 action_mask: np.ndarray | None = None, *, belief: float | HandBelief = 0.04,
                 steps: int = 60, tilt: float = 0.0) -> game.GameState:
    """:func:`determinize`, then the opponents' hidden cards from ``belief`` (module docstring).

    ``belief`` a number: each opponent's hidden cards tilted by it. ``belief`` a model (a
    :class:`HandBelief`, such as ``models.belief.load_belief("belief-2p-v0")``): every
    opponent's unknown cards drawn from the model, the rest of the unseen cards left to the
    stock in a uniform order; a draw that leaves an opponent who has discarded this round, and
    did not go out, a fully melded hand (it would have gone out) is drawn again, up to
    :data:`MAX_REDRAWS` times. With ``tilt`` > 0 the model's hands are then tilted as the
    numeric belief tilts uniform ones (``steps`` Metropolis steps per opponent, towards the
    model's hand probability times ``exp(-tilt * discards * penalty)``).
    """
    state = determinize(observation, rules, rng, action_mask=action_mask)
    if not isinstance(belief, (int, float)):
        _deal_from_belief(state, observation, belief, rng)
        if tilt > 0 and steps > 0:
            obs = observation["observation"] if isinstance(observation, Mapping) else observation
            logits = belief.logits(obs)
            for seat in range(1, rules.num_players):
                tilt_hidden_hand(state, seat, tilt * len(state.discards[seat]), steps, rng, logits[seat - 1])
    elif belief > 0 and steps > 0:
        for seat in range(1, rules.num_players):
            tilt_hidden_hand(state, seat, belief * len(state.discards[seat]), steps, rng)
    return state


def _deal_from_belief(state: game.GameState, observation: np.ndarray | Mapping[str, Any], belief: HandBelief,
                      rng: np.random.Generator) -> None:
    """Replace the opponents' unknown cards of ``state`` (and so the stock) by a draw from ``belief``."""
    obs = observation["observation"] if isinstance(observation, Mapping) else observation
    n = state.rules.num_players
    unknown = [list(state.hands[k][len(state.known_taken[k]):]) for k in range(1, n)]  # determinize's layout
    pool = np.bincount([c for cards in unknown for c in cards] + list(state.stock), minlength=52)
    rules = state.rules
    for _ in range(MAX_REDRAWS):
        counts = np.asarray(belief.sample_unknown(obs, rng), dtype=np.int64)
        if counts.shape != (n - 1, 52) or (counts < 0).any() or (counts.sum(axis=0) > pool).any() or \
                [int(x) for x in counts.sum(axis=1)] != [len(u) for u in unknown]:
            raise InconsistentObservation(f"the belief's draw of shape {counts.shape} does not fit the observation's "
                                          f"unseen cards and unknown hand slots")
        hands = [list(state.known_taken[k]) + _cards_of(counts[k - 1]) for k in range(1, n)]
        if not any(_cannot_hold(state, k, hands[k - 1], rules) for k in range(1, n)):
            break
    for k in range(1, n):
        state.hands[k] = hands[k - 1]
    rest = _cards_of(pool - counts.sum(axis=0))
    state.stock = [rest[i] for i in rng.permutation(len(rest))]


def _cannot_hold(state: game.GameState, seat: int, hand: list[int], rules: Rules) -> bool:
    """Whether ``seat`` would already have gone out with ``hand`` (it discarded this round, fully melded)."""
    return (len(state.discards[seat]) > 0 and state.went_out != seat
            and least_penalty(hand, state.wild_rank, rules.aces_high, rules.meld_needs_natural) == 0)


def tilt_hidden_hand(state: game.GameState, seat: int, strength: float, steps: int,
                     rng: np.random.Generator, log_weights: np.ndarray | None = None) -> None:
    """Metropolis swaps of ``seat``'s unknown cards with the stock's, towards ``exp(-strength * penalty)``
    times, with ``log_weights`` (per card type), ``prod exp(log_weights[c])`` over the hand's unknown cards.

    Cards ``seat`` is known to hold stay; a fully melded hand is refused when the seat has
    discarded this round and not gone out. The stock is shuffled afterwards, so its order stays
    uniform.
    """
    hand, stock = state.hands[seat], state.stock
    held = {}
    for c in state.known_taken[seat]:
        held[c] = held.get(c, 0) + 1
    free = []
    for i, c in enumerate(hand):
        if held.get(c, 0) > 0:
            held[c] -= 1
        else:
            free.append(i)
    if not free or not stock or strength <= 0:
        return
    rules = state.rules
    wild, aces_high, natural = state.wild_rank, rules.aces_high, rules.meld_needs_natural
    no_melded = len(state.discards[seat]) > 0 and state.went_out != seat
    penalty = least_penalty(hand, wild, aces_high, natural)
    if penalty == 0 and no_melded:
        penalty = 10 ** 6  # an impossible start: the first hand that is not fully melded is taken
    slots = rng.integers(len(free), size=steps)
    picks = rng.integers(len(stock), size=steps)
    coins = rng.random(steps)
    weights = None if log_weights is None else np.asarray(log_weights, dtype=np.float64).tolist()
    for i, j, u in zip(slots.tolist(), picks.tolist(), coins.tolist(), strict=True):
        i = free[i]
        hand[i], stock[j] = stock[j], hand[i]
        new = least_penalty(hand, wild, aces_high, natural)
        log_ratio = -strength * (new - penalty)
        if weights is not None:
            log_ratio += weights[hand[i]] - weights[stock[j]]  # the card taken in over the card given up
        if (new == 0 and no_melded) or (log_ratio < 0 and u >= math.exp(log_ratio)):
            hand[i], stock[j] = stock[j], hand[i]  # rejected
        else:
            penalty = new
    order = rng.permutation(len(stock))
    state.stock = [stock[k] for k in order]
