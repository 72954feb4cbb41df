"""``expert-v0`` as it was before its solver calls were batched (tests and benchmarks only).

A verbatim copy of ``tt_env/agents/expert.py``, of ``decode_observation`` and of
``tt_env.agents.ismcts.expert_scores`` at the commit before ``after_draw_values`` (one
``best_melds`` call per drawn card, one ``least_penalty`` call per discard candidate): the
reference that ``tests/test_expert_equivalence.py`` holds the new expert to, decision for
decision and score for score, and the "before" of ``benchmarks/bench_agents.py``. Do not edit it to follow ``expert.py``: it is the old code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tt_env.agents.base import num_players_of
from tt_env.agents.greedy import discard_key, without
from tt_env.observation.decode import ObservationView
from tt_env.engine.cards import card_value, rank_of, suit_of
from tt_env.engine.game import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD
from tt_env.engine.melds import best_melds, least_penalty
from tt_env.engine.rules import Rules
from tt_env.observation import HAND_SCALE, SCORE_SCALE, get_layout

_CARD_IDS = np.arange(52)


def reference_decode_observation(observation: np.ndarray) -> ObservationView:
    """The :class:`ObservationView` of a ``three_thirteen_v0`` observation vector."""
    obs = np.asarray(observation)
    if obs.ndim != 1:
        raise ValueError(f"decode_observation takes one observation vector, got shape {obs.shape}")
    n = num_players_of(obs)
    lay = get_layout(n)
    opp = n - 1
    hand_counts = np.rint(obs[lay.hand:lay.hand + 52]).astype(np.int64)
    if hand_counts.max(initial=0) <= 1:
        hand = np.flatnonzero(hand_counts).tolist()
    else:
        hand = np.repeat(_CARD_IDS, hand_counts).tolist()
    top_block = obs[lay.discard_top:lay.discard_top + 52]
    top = int(top_block.argmax()) if top_block.any() else None
    below = np.rint(obs[lay.discard_below:lay.discard_below + 52]).astype(np.int64)
    taken = np.rint(obs[lay.opponent_taken:lay.opponent_taken + 52 * opp]).astype(np.int64).reshape(opp, 52)
    disc = np.rint(obs[lay.opponent_discards:lay.opponent_discards + 52 * opp]).astype(np.int64).reshape(opp, 52)
    went = obs[lay.went_out:lay.went_out + n]
    sizes = obs[lay.hand_sizes:lay.hand_sizes + n] * HAND_SCALE
    scores = obs[lay.scores:lay.scores + n] * SCORE_SCALE
    return ObservationView(
        num_players=n,
        hand=hand,
        wild_rank=int(obs[lay.wild_rank:lay.wild_rank + 13].argmax()) + 1,
        round_number=int(obs[lay.round:lay.round + 11].argmax()) + 1,
        phase=int(obs[lay.phase + 1] > 0.5),
        discard_top=top,
        discard_below=below,
        opponent_taken=taken,
        opponent_discards=disc,
        hand_sizes=[int(round(float(x))) for x in sizes],
        went_out=int(went.argmax()) if went.any() else None,
        stock_fraction=float(obs[lay.stock_size]),
        scores=[int(round(float(x))) for x in scores],
        turn_fraction=float(obs[lay.turn]),
    )


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


class ReferenceExpertAgent:
    """``expert-v0`` as it was before ``after_draw_values`` (a verbatim copy). The keyword
    arguments are its weights; the defaults are ``expert-v0``.

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
        self.aces_high = self.rules.aces_high
        self.natural = self.rules.meld_needs_natural
        self.gamma, self.out_bonus = gamma, out_bonus
        self.candidates, self.margin, self.feed_weight = candidates, margin, feed_weight
        self.take_bias, self.out_per_card = take_bias, out_per_card
        self._neighbours = neighbour_masks(self.aces_high)
        self._values = [card_value(rank_of(c), aces_high=self.aces_high) for c in range(52)]
        self._value_tables: dict[int, list[int]] = {}
        self._wild_masks = {w: sum(1 << (s * 13 + w - 1) for s in range(4)) for w in range(1, 14)}
        self._neighbour_matrix = np.array([[(m >> c) & 1 for c in range(52)] for m in self._neighbours],
                                          dtype=np.float64)

    # ------------------------------------------------------------------ solver helpers
    def penalty(self, hand: Sequence[int], wild: int) -> int:
        return least_penalty(hand, wild, self.aces_high, self.natural)

    def values(self, wild: int) -> list[int]:
        """Unmelded value of every card type this round (a wild costs its own rank's value)."""
        table = self._value_tables.get(wild)
        if table is None:
            table = [min(c % 13 + 1, 10) if c % 13 + 1 == wild else self._values[c] for c in range(52)]
            self._value_tables[wild] = table
        return table

    def after_draw(self, hand: list[int], card: int, wild: int, values: list[int]) -> int:
        """Least penalty after adding ``card`` to ``hand`` and discarding the best card (an
        upper bound: the highest unmelded card of one best arrangement, exact when all melded)."""
        full = hand + [card]
        solved = best_melds(full, wild, aces_high=self.aces_high, meld_needs_natural=self.natural)
        if solved.unmelded:
            return solved.deadwood - max(map(values.__getitem__, solved.unmelded))
        return min(self.penalty(without(full, c), wild) for c in set(full))

    def hand_value(self, hand: list[int], ctx: _Context) -> tuple[float, int, float]:
        """(V, penalty, expected one-draw gain) of a hand about to wait for its next draw."""
        wild = ctx.wild
        base = self.penalty(hand, wild)
        if base == 0:
            return 0.0, 0, 0.0
        related = 0
        for c in hand:
            if c % 13 + 1 != wild:
                related |= self._neighbours[c]
        related |= self._wild_masks[wild]
        gain = 0.0
        weights = ctx.weights
        values = self.values(wild)
        while related:
            low = related & -related
            u = low.bit_length() - 1
            related ^= low
            w = weights[u]
            if w <= 0.0:
                continue
            a = self.after_draw(hand, u, wild, values)
            if a < base:
                gain += w * (base - a + (ctx.out_bonus if a == 0 else 0.0))
        return base - ctx.gamma * gain, base, gain

    # ------------------------------------------------------------------ decisions
    def context(self, view: ObservationView) -> _Context:
        """Card weights from what is unseen, gamma from the danger, feed costs of each card."""
        copies = self.rules.num_decks
        unseen = np.maximum(copies - view.seen_counts(), 0).astype(float)
        total = unseen.sum()
        weights = (unseen / total).tolist() if total > 0 else [0.0] * 52
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
            risk = self._neighbour_matrix[np.flatnonzero(view.opponent_taken[0])].sum(axis=0)
            thrown = np.tile(view.opponent_discards[0].reshape(4, 13).sum(axis=0) > 0, 4)
            risk = np.minimum(np.where(thrown, 0.5 * risk, risk), 2.0)
            risk[[s * 13 + wild - 1 for s in range(4)]] = 3.0
            feed = (self.feed_weight * (0.5 + danger) * risk).tolist()
        return _Context(wild, weights, gamma, feed, self.out_bonus + self.out_per_card * size)

    def choose_discard(self, hand: list[int], legal: Sequence[int], ctx: _Context,
                       final: bool) -> tuple[int, float]:
        """(card, score) of the best discard among ``legal``; ``final``: greedy, last turn."""
        wild = ctx.wild
        scored = []
        for c in sorted(set(legal)):
            p = self.penalty(without(hand, c), wild)
            if p == 0:
                return c, -1e9  # go out
            scored.append((discard_key(p, c, wild, self.aces_high), c))
        scored.sort()
        if final:
            return scored[0][1], float(scored[0][0][0])
        best_p = scored[0][0][0]
        pool = [c for key, c in scored if key[0] <= best_p + self.margin][:self.candidates]
        best_card, best_score = pool[0], float("inf")
        for c in pool:
            v, _, _ = self.hand_value(without(hand, c), ctx)
            score = v + ctx.feed[c]
            if score < best_score - 1e-9:
                best_card, best_score = c, score
        return best_card, best_score

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        view = reference_decode_observation(observation)
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


def reference_expert_scores(expert: ReferenceExpertAgent, observation: np.ndarray, action_mask: np.ndarray) -> list[tuple[int, float]]:
    """``(action, score)`` of expert-v0's candidates, best (lowest score) first: the prior of the search
    (``tt_env.agents.ismcts.expert_scores`` before ``after_draw_values``)."""
    view = reference_decode_observation(observation)
    if view.went_out is not None:  # the last turn: expert-v0 plays greedily, nothing to search
        return [(expert.act(observation, action_mask, np.random.default_rng(0)), 0.0)]
    hand, wild = view.hand, view.wild_rank
    ctx = expert.context(view)
    if action_mask[DRAW_STOCK] or action_mask[TAKE_DISCARD]:
        if not (action_mask[DRAW_STOCK] and action_mask[TAKE_DISCARD]):
            return [(int(np.flatnonzero(action_mask)[0]), 0.0)]
        top = view.discard_top
        legal = [c for c in hand if c != top or expert.rules.discard_drawn_discard]
        if not legal:
            return [(DRAW_STOCK, 0.0)]
        v_now, _, gain = expert.hand_value(hand, ctx)
        _, v_take = expert.choose_discard(hand + [top], legal, ctx, view.went_out is not None)
        scores = [(DRAW_STOCK, v_now - gain), (TAKE_DISCARD, v_take)]
        return sorted(scores, key=lambda x: x[1])
    legal = np.flatnonzero(action_mask[DISCARD_BASE:]).tolist()
    scored = []
    for c in sorted(set(legal)):
        p = expert.penalty(without(hand, c), wild)
        if p == 0:
            return [(DISCARD_BASE + c, -float("inf"))]  # (the prototype's -1e9; -inf in tt_env.agents.ismcts)
        scored.append((discard_key(p, c, wild, expert.aces_high), c))
    scored.sort()
    best_p = scored[0][0][0]
    pool = [c for key, c in scored if key[0] <= best_p + expert.margin][:expert.candidates]
    out = []
    for c in pool:
        v, _, _ = expert.hand_value(without(hand, c), ctx)
        out.append((DISCARD_BASE + c, v + ctx.feed[c]))
    out.sort(key=lambda x: x[1])
    return out
