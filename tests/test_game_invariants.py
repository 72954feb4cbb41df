"""Whole random games, checked after every step against the invariants of RULES.md.

Each configuration plays seeded games with uniformly random legal actions. After every
action :class:`Checker` verifies card conservation, hand sizes, whose turn it is, the turn
counter, the action mask, the observation bounds, and at each round end the dealer
rotation, the one-more-turn-each rule after going out, the turn limit and the round points
(the exact least penalty of every final hand). Each configuration also lists the paths it
must reach (going out, turn-limit endings, reshuffles, the ban on discarding the card just
taken), so a change that silently stops exercising them fails here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from tt_env.engine import Rules, least_penalty
from tt_env.engine.game import (DISCARD_BASE, DRAW_STOCK, PHASE_DISCARD, PHASE_DRAW, TAKE_DISCARD, GameState,
                                action_mask, apply, legal_actions, new_game, winners)
from tt_env.observation import encode, get_layout, observation_bounds


@dataclass
class Checker:
    """Checks one game step by step; counts the paths it saw in ``paths``."""

    rules: Rules
    paths: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        r = self.rules
        self.full = np.full(52, r.num_decks)
        self.low, self.high = observation_bounds(r.num_players, r.max_turns_per_round, r.num_decks)
        self.turn_index = get_layout(r.num_players).turn

    # ------------------------------------------------------------------ every state
    def check_state(self, s: GameState) -> None:
        r, n = self.rules, self.rules.num_players
        cards = [c for h in s.hands for c in h] + list(s.stock) + list(s.discard_pile)
        assert np.array_equal(np.bincount(cards, minlength=52), self.full), f"cards lost or made: {s.describe()}"
        size = s.round_number + 2
        expect = [size] * n
        if s.phase == PHASE_DISCARD and not s.game_over:
            expect[s.current_player] += 1
        assert [len(h) for h in s.hands] == expect, s.describe()
        assert s.round_number == r.rounds[s.round_index]
        legal = legal_actions(s)
        assert np.flatnonzero(action_mask(s)).tolist() == legal, s.describe()
        assert legal or s.game_over, f"no legal action: {s.describe()}"
        obs = encode(s, s.current_player)
        assert np.all(obs >= self.low) and np.all(obs <= self.high), \
            f"observation out of its Box at {s.describe()}: turn piece {obs[self.turn_index]}"
        if s.went_out is None and not s.game_over:
            assert s.turn < r.max_turns_per_round

    # ------------------------------------------------------------------ a game
    def play(self, seed: int) -> GameState:
        r, n = self.rules, self.rules.num_players
        rng = np.random.default_rng(seed)
        s = new_game(r, np.random.default_rng(seed + 10_000))
        assert s.current_player == (s.dealer + 1) % n and s.round_number == r.rounds[0]
        first_dealer = s.dealer
        last_movers: list[int] = []
        self.check_state(s)
        while not s.game_over:
            legal = legal_actions(s)
            action = legal[int(rng.integers(len(legal)))]
            before = (s.current_player, s.phase, s.turn, s.went_out, s.dealer, s.round_index,
                      len(s.stock), list(s.discard_pile), list(s.scores), s.taken_this_turn)
            result = apply(s, action)
            self.check_step(s, action, result, before, last_movers, first_dealer)
            self.check_state(s)
        assert len(s.round_results) == len(r.rounds)
        assert [rec.round_number for rec in s.round_results] == list(r.rounds)
        assert s.scores == [sum(rec.points[p] for rec in s.round_results) for p in range(n)]
        assert winners(s) == [p for p in range(n) if s.scores[p] == min(s.scores)]
        return s

    def check_step(self, s: GameState, action: int, result, before, last_movers: list[int],
                   first_dealer: int) -> None:
        r, n = self.rules, self.rules.num_players
        mover, phase, turn, went_out, dealer, round_index, stock_len, pile, scores, banned = before
        if phase == PHASE_DRAW:
            assert (s.current_player, s.phase, s.turn) == (mover, PHASE_DISCARD, turn)
            assert not result.went_out and result.round_record is None
            if action == TAKE_DISCARD:
                assert s.hands[mover][-1] == pile[-1] and s.discard_pile == pile[:-1]
                self.paths["take_discard"] += 1
            elif result.reshuffled:
                assert stock_len == 0 and len(pile) > 1
                assert s.discard_pile == pile[-1:] and len(s.stock) == len(pile) - 2
                assert Counter(list(s.stock) + [s.hands[mover][-1]]) == Counter(pile[:-1])
                self.paths["reshuffle"] += 1
            else:
                assert action == DRAW_STOCK and len(s.stock) == stock_len - 1 > -1
            return
        card = action - DISCARD_BASE
        if banned is not None and not r.discard_drawn_discard:
            assert card != banned or len(set(s.hands[mover]) | {card}) == 1
            self.paths["taken_ban"] += 1
        if banned is not None and r.discard_drawn_discard and card == banned:
            self.paths["discard_taken"] += 1
        hand_after = s.round_results[-1].hands[mover] if result.round_record else s.hands[mover]
        fully_melded = least_penalty(hand_after, r.rounds[round_index] + 2, r.aces_high, r.meld_needs_natural) == 0
        assert result.went_out == (went_out is None and fully_melded)
        if went_out is not None:
            last_movers.append(mover)
        record = result.round_record
        if record is None:
            assert (s.current_player, s.phase, s.turn) == ((mover + 1) % n, PHASE_DRAW, turn + 1)
            assert s.went_out == (mover if result.went_out else went_out)
            assert s.discard_pile[-1] == card and s.scores == scores
            return
        # the round ended
        assert record.turns == turn + 1 and record.dealer == dealer
        assert record.round_number == r.rounds[round_index]
        if record.went_out is None:
            assert went_out is None and not result.went_out and record.turns == r.max_turns_per_round
            self.paths["turn_limit"] += 1
        else:
            out = record.went_out
            assert went_out == out, "the round ends only after the last turns"
            assert last_movers == [(out + k) % n for k in range(1, n)], "one more turn each, in seat order"
            self.paths["went_out"] += 1
            if record.turns > r.max_turns_per_round:
                self.paths["last_turns_past_limit"] += 1
        last_movers.clear()
        wild = record.round_number + 2
        points = [0 if p == record.went_out else least_penalty(h, wild, r.aces_high, r.meld_needs_natural)
                  for p, h in enumerate(record.hands)]
        assert record.points == points
        assert all(len(h) == record.round_number + 2 for h in record.hands)
        if record.went_out is not None:
            assert least_penalty(record.hands[record.went_out], wild, r.aces_high, r.meld_needs_natural) == 0
        assert s.scores == [a + b for a, b in zip(scores, points, strict=True)]
        assert result.game_over == s.game_over == (round_index + 1 == len(r.rounds))
        if not s.game_over:
            assert s.dealer == (dealer + 1) % n == (first_dealer + round_index + 1) % n, "the deal passes left"
            assert s.round_index == round_index + 1
            assert (s.current_player, s.phase, s.turn, s.went_out) == ((s.dealer + 1) % n, PHASE_DRAW, 0, None)
            assert len(s.discard_pile) == 1 and s.known_taken == [[]] * n and s.discards == [[]] * n
            self.paths["next_round"] += 1


CONFIGS = [
    # (rules options, games, least number of times each path must be reached)
    (dict(num_players=2, rounds=(1,)), 150, {"went_out": 100, "reshuffle": 5, "taken_ban": 1000}),
    (dict(num_players=2, rounds=(1,), max_turns_per_round=10), 150,
     {"went_out": 20, "turn_limit": 50, "last_turns_past_limit": 1}),
    (dict(num_players=3, rounds=(1, 2), max_turns_per_round=10, discard_drawn_discard=True), 60,
     {"went_out": 10, "turn_limit": 50, "discard_taken": 50, "next_round": 60, "last_turns_past_limit": 1}),
    (dict(num_players=2, rounds=(1, 2, 3), aces="high_or_low", meld_needs_natural=True), 25,
     {"went_out": 20, "reshuffle": 20, "next_round": 50, "turn_limit": 10}),
    (dict(num_players=4, rounds=(1, 3), max_turns_per_round=12), 40,
     {"went_out": 5, "turn_limit": 30, "next_round": 40}),
    (dict(num_players=5, aces="high_or_low", rounds=(4, 5, 6), max_turns_per_round=40), 6,
     {"turn_limit": 5, "next_round": 12}),
    (dict(num_players=2, decks=4, rounds=(1,)), 40, {"went_out": 40, "taken_ban": 300}),
    (dict(num_players=6, rounds=(2, 11), max_turns_per_round=30), 10, {"turn_limit": 10, "next_round": 10}),
    (dict(num_players=8, rounds=(1,)), 10, {"went_out": 10, "reshuffle": 1}),
    (dict(num_players=8, decks=4, rounds=(10, 11), max_turns_per_round=20), 4, {"turn_limit": 3, "next_round": 4}),
    (dict(num_players=3, decks=3, max_turns_per_round=10, meld_needs_natural=True,
          discard_drawn_discard=True), 3, {"turn_limit": 20, "next_round": 30, "discard_taken": 5}),
    (dict(num_players=2), 2, {"reshuffle": 10, "next_round": 20, "taken_ban": 500}),
]


@pytest.mark.parametrize("options, games, must_reach", CONFIGS,
                         ids=[",".join(f"{k}={v}" for k, v in c[0].items()) for c in CONFIGS])
def test_random_games_keep_every_invariant(options: dict, games: int, must_reach: dict[str, int]) -> None:
    rules = Rules(**options)
    checker = Checker(rules)
    for seed in range(games):
        checker.play(seed)
    for path, least in must_reach.items():
        assert checker.paths[path] >= least, f"path {path!r} reached too rarely: {dict(checker.paths)}"


def test_random_games_are_reproducible_from_the_seed() -> None:
    rules = Rules(num_players=3, rounds=(1, 2), max_turns_per_round=30)
    a, b = Checker(rules).play(5), Checker(rules).play(5)
    assert a.to_dict() == b.to_dict()
