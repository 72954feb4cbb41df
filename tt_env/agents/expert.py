"""``expert-v0``: the strongest scripted player here, a one-draw lookahead on the exact solver.

It reads only its observation (:mod:`tt_env.observation.decode`) and values a hand as

    V(hand) = penalty(hand) - gamma * E_u[ improvement after drawing u and discarding best ]

where ``u`` ranges over the cards still unseen (not in its hand, the discard pile, or known
to be held by an opponent), weighted by how many copies remain: so pairs, near-runs and
wild cards count for what they can become, and dead cards (already discarded) count for
nothing. A drawn card that lets it go out earns a bonus that grows with the hand size. It takes
the discard when the hand it would keep is worth more than the expected hand after a stock
draw; it discards the card whose remaining hand has the best value plus feeding cost, among
the few discards that leave the least penalty. ``gamma`` shrinks as the round
gets long and as opponents take cards from the discard pile (they are getting close to
going out, so the cards held now are what will be scored). Discards that feed the next
player (wild cards, cards matching what it took from the discard pile, ranks it has not
thrown away) cost extra. On the last turn after someone went out it plays greedily.

The lookahead of all the hands one decision weighs is one solver call (``draw_gains``), the
discards' penalties another (``discard_penalties``); ``tests/expert_reference.py`` keeps the
slower code this replaced, which made every decision the same.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..engine.cards import card_value, rank_of, suit_of
from ..engine.game import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD
from ..engine.melds import after_draw_values, discard_penalties, draw_gains, least_penalty
from ..engine.rules import Rules
from .base import checked_mask
from .greedy import discard_key, without
from ..observation.decode import ObservationView, decode_observation


def neighbour_masks(aces_high: bool) -> list[int]:
    """Per card, a bitmask of the card types that can share a meld with it without wilds
    beyond one gap: its rank in every suit, and its suit within two ranks."""
    masks = []
    for c in range(52):
        rank, suit = rank_of(c), suit_of(c)
        m = 0
        for s in range(4):
            m |= 1 << (s * 13 + rank - 1)
        for d in (-2, -1, 1, 2):
            r = rank + d
            if aces_high and r == 14:  # Q-K-A: the ace follows the king
                r = 1
            if 1 <= r <= 13:
                m |= 1 << (suit * 13 + r - 1)
        if aces_high and rank == 1:  # and the ace's high-side neighbours are Q and K
            m |= (1 << (suit * 13 + 11)) | (1 << (suit * 13 + 12))
        masks.append(m)
    return masks


@dataclass
class _Context:
    """What one decision needs beyond the hand: card weights, danger, feeding risk."""

    wild: int
    weights: list[float]
    """Chance that a stock draw is each card type (unseen copies / all unseen)."""
    gamma: float
    feed: list[float]
    """Extra cost of discarding each card type (what it gives the next player)."""
    out_bonus: float
    """Bonus for a draw that lets it go out."""


class ExpertAgent:
    """``expert-v0`` (see the module docstring). The keyword arguments are its weights, tuned
    against ``greedy-v0``; ``expert-v0`` is the defaults (change one, bump the version).

    Every option is checked here, so a bad value is a ``ValueError`` naming it, not a failure
    at the first move.

    Args:
        gamma: weight of the expected one-draw gain (shrunk by up to 70% by the danger).
        out_bonus, out_per_card: bonus for a draw that lets it go out: ``out_bonus +
            out_per_card * hand size`` (ending the round leaves opponents with their cards).
        candidates, margin: discards looked at beyond their penalty: at most ``candidates``,
            within ``margin`` points of the least penalty.
        feed_weight: cost per unit of feeding risk of a discard.
        take_bias: points by which taking the discard is preferred to the stock.
    """

    name = "expert-v0"

    def __init__(self, rules: Rules | None = None, *, gamma: float = 2.0, out_bonus: float = 0.0,
                 out_per_card: float = 2.5, candidates: int = 5, margin: int = 12,
                 feed_weight: float = 3.0, take_bias: float = 0.0) -> None:
        self.rules = rules or Rules()
        for key, value, low in (("candidates", candidates, 1), ("margin", margin, 0)):
            if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)) or value < low:
                raise ValueError(f"{key}={value!r} is not allowed: use an int >= {low}")
        for key, value, low in (("gamma", gamma, 0), ("out_bonus", out_bonus, 0), ("out_per_card", out_per_card, 0),
                                ("feed_weight", feed_weight, 0), ("take_bias", take_bias, None)):
            real = (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
                    and math.isfinite(value))
            if not real or low is not None and value < low:
                allowed = "a finite number" if low is None else f"a finite number >= {low}"
                raise ValueError(f"{key}={value!r} is not allowed: use {allowed}")
        self.aces_high = self.rules.aces_high
        self.natural = self.rules.meld_needs_natural
        self.gamma, self.out_bonus = float(gamma), float(out_bonus)
        self.candidates, self.margin, self.feed_weight = int(candidates), int(margin), float(feed_weight)
        self.take_bias, self.out_per_card = float(take_bias), float(out_per_card)
        self._neighbours = neighbour_masks(self.aces_high)
        self._values = [card_value(rank_of(c), aces_high=self.aces_high) for c in range(52)]
        self._value_tables: dict[int, list[int]] = {}
        self._wild_masks = {w: sum(1 << (s * 13 + w - 1) for s in range(4)) for w in range(1, 14)}
        self._last_discard: tuple[tuple, tuple[int, float]] | None = None  # (inputs, answer) of choose_discard
        self._neighbour_cards = [[c for c in range(52) if m >> c & 1] for m in self._neighbours]

    # ------------------------------------------------------------------ solver helpers
    def penalty(self, hand: Sequence[int], wild: int) -> int:
        return least_penalty(hand, wild, self.aces_high, self.natural)

    def discard_penalties(self, hand: Sequence[int], wild: int) -> dict[int, int]:
        """{card: least penalty of ``hand`` less one copy of it} for each card of ``hand``, in one
        solver call (the same numbers as ``penalty`` of each such hand)."""
        return dict(discard_penalties(hand, wild, self.aces_high, self.natural))

    def values(self, wild: int) -> list[int]:
        """Unmelded value of every card type this round (a wild costs its own rank's value)."""
        table = self._value_tables.get(wild)
        if table is None:
            table = [min(c % 13 + 1, 10) if c % 13 + 1 == wild else self._values[c] for c in range(52)]
            self._value_tables[wild] = table
        return table

    def after_draw(self, hand: list[int], card: int, wild: int, values: list[int] | None = None) -> int:
        """Least penalty after adding ``card`` to ``hand`` and discarding the best card (an
        upper bound: the highest unmelded card of one best arrangement, exact when all melded).
        ``values`` is unused (kept for callers of the old signature: the solver knows the table)."""
        return after_draw_values(hand, [card], wild, self.aces_high, self.natural)[0]

    def draw_mask(self, hand: list[int], wild: int) -> int:
        """Bit mask of the cards whose draw ``hand_value`` weighs: those that can share a meld
        with a natural of ``hand`` (``neighbour_masks``), and the wild cards."""
        related = self._wild_masks[wild]
        neighbours = self._neighbours
        for c in hand:
            if c % 13 + 1 != wild:
                related |= neighbours[c]
        return related

    def hand_value(self, hand: list[int], ctx: _Context) -> tuple[float, int, float]:
        """(V, penalty, expected one-draw gain) of a hand about to wait for its next draw.

        The gain is over the cards of ``draw_mask`` with an unseen copy: each draw's chance
        times how much it lowers the penalty (``after_draw``), plus the bonus for going out."""
        return self.hand_values([hand], ctx)[0]

    def hand_values(self, hands: list[list[int]], ctx: _Context) -> list[tuple[float, int, float]]:
        """``hand_value`` of each hand, in one solver call (``draw_gains``: the draws of all the
        hands share one search, as the hands that the candidate discards leave share most cards)."""
        wild = ctx.wild
        results = draw_gains(hands, ctx.weights, wild, self.aces_high, self.natural, ctx.out_bonus,
                             [self.draw_mask(hand, wild) for hand in hands])
        gamma = ctx.gamma
        return [(0.0, 0, 0.0) if base == 0 else (base - gamma * gain, base, gain) for base, gain in results]

    # ------------------------------------------------------------------ decisions
    def context(self, view: ObservationView) -> _Context:
        """Card weights from what is unseen, gamma from the danger, feed costs of each card."""
        weights = view.unseen_weights(self.rules.num_decks)
        wild = view.wild_rank
        size = view.round_number + 2
        turns = view.turn_fraction * self.rules.max_turns_per_round
        # turns each player has had this round, over the hand size: a long round is a dangerous one
        per_player = turns / view.num_players
        taken = view.opponent_taken.sum(axis=1)
        danger = min(1.0, per_player / (size + 2) + 0.15 * float(taken.max(initial=0)))
        gamma = self.gamma * (1.0 - 0.7 * danger)
        feed = [0.0] * 52
        if self.feed_weight:
            # cards that can meld with what the next player took from the discard pile and holds,
            # halved for ranks it has discarded itself; wild cards always help it
            # (risk: how many of those cards each card can meld with, at most 2, 3 for a wild)
            scale = self.feed_weight * (0.5 + danger)
            held = np.flatnonzero(view.opponent_taken[0]).tolist()
            if held:
                melds_with = [0] * 52
                for t in held:
                    for c in self._neighbour_cards[t]:
                        melds_with[c] += 1
                thrown = view.opponent_discards[0].reshape(4, 13).sum(axis=0).tolist()
                feed = [scale * min(0.5 * k if thrown[c % 13] > 0 else float(k), 2.0)
                        for c, k in enumerate(melds_with)]
            else:
                feed = [scale * 0.0] * 52
            for s in range(4):
                feed[s * 13 + wild - 1] = scale * 3.0
        return _Context(wild, weights, gamma, feed, self.out_bonus + self.out_per_card * size)

    def choose_discard(self, hand: list[int], legal: Sequence[int], ctx: _Context,
                       final: bool) -> tuple[int, float]:
        """(card, score) of the best discard among ``legal``; ``final``: greedy, last turn.

        The last answer is kept: after taking the discard, the discard decision asks again
        exactly what the draw decision asked (the same hand, legal cards and context: taking
        a card leaves what is seen, and the turn count, as they were)."""
        key = (tuple(sorted(hand)), tuple(sorted(set(legal))), final, ctx.wild, tuple(ctx.weights), ctx.gamma,
               tuple(ctx.feed), ctx.out_bonus)  # copies: a caller may reuse and change its lists
        if self._last_discard is not None and self._last_discard[0] == key:
            return self._last_discard[1]
        answer = self._choose_discard(hand, legal, ctx, final)
        self._last_discard = (key, answer)
        return answer

    def ranked_discards(self, hand: list[int], legal: Sequence[int], wild: int) -> tuple[int | None, list]:
        """(a legal discard that goes out, or None; the legal discards as ``(discard_key, card)``,
        least penalty left first). The ranking stops at the first discard that goes out."""
        scored = []
        left = self.discard_penalties(hand, wild)
        for c in sorted(set(legal)):
            p = left[c] if c in left else self.penalty(without(hand, c), wild)
            if p == 0:
                return c, scored
            scored.append((discard_key(p, c, wild, self.aces_high), c))
        scored.sort()
        return None, scored

    def pool_scores(self, hand: list[int], ranked: list, ctx: _Context) -> list[tuple[int, float]]:
        """``(card, score)`` of the discard pool, in ranking order: the first ``candidates`` of
        ``ranked`` (``ranked_discards``) within ``margin`` of the least penalty, each scored by
        the value of the hand it leaves plus its feeding cost (lower is better)."""
        best_p = ranked[0][0][0]
        pool = [c for key, c in ranked if key[0] <= best_p + self.margin][:self.candidates]
        # the candidates' hand values in one solver call (the hands share all but one card)
        values = self.hand_values([without(hand, c) for c in pool], ctx)
        return [(c, v + ctx.feed[c]) for c, (v, _, _) in zip(pool, values, strict=True)]

    def _choose_discard(self, hand: list[int], legal: Sequence[int], ctx: _Context,
                        final: bool) -> tuple[int, float]:
        out, ranked = self.ranked_discards(hand, legal, ctx.wild)
        if out is not None:
            return out, -1e9  # go out
        if final:
            return ranked[0][1], float(ranked[0][0][0])
        best_card, best_score = ranked[0][1], float("inf")
        for c, score in self.pool_scores(hand, ranked, ctx):
            if score < best_score - 1e-9:
                best_card, best_score = c, score
        return best_card, best_score

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        view = decode_observation(observation)
        action_mask = checked_mask(action_mask, view.hand, view.phase)
        hand, wild = view.hand, view.wild_rank
        final = view.went_out is not None
        can_stock, can_take = bool(action_mask[DRAW_STOCK]), bool(action_mask[TAKE_DISCARD])
        ctx = self.context(view)
        if not (can_stock or can_take):
            legal = np.flatnonzero(action_mask[DISCARD_BASE:]).tolist()
            card, _ = self.choose_discard(hand, legal, ctx, final)
            return DISCARD_BASE + card
        if not can_take:
            return DRAW_STOCK
        if not can_stock:
            return TAKE_DISCARD
        top = view.discard_top
        legal = [c for c in hand if c != top or self.rules.discard_drawn_discard]
        if not legal:
            return DRAW_STOCK
        taken = hand + [top]
        if final:
            _, after = self.choose_discard(taken, legal, ctx, True)
            return TAKE_DISCARD if after < self.penalty(hand, wild) else DRAW_STOCK
        v_now, base, gain = self.hand_value(hand, ctx)
        _, v_take = self.choose_discard(taken, legal, ctx, False)
        v_stock = v_now - gain
        return TAKE_DISCARD if v_take < v_stock + self.take_bias else DRAW_STOCK
