"""RULES.md, play and scoring: positions built by hand, actions applied, outcomes checked.

Each test builds a :class:`GameState` with :func:`new_game` and then overwrites hands,
stock, discard pile and whose turn it is (:func:`make_state`), so the position is exactly
the one a rule talks about. Cards are written as strings (``"7H 8H 9H"``); the stock and
the discard pile are written bottom first, so their top card is the last one.
Moves are written as tokens for :func:`play`: ``S`` draws the stock, ``T`` takes the
discard top, a card name discards that card.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tt_env import three_thirteen_v0
from tt_env.engine import Rules, least_penalty, parse_cards
from tt_env.engine.cardlist import CardList
from tt_env.engine.cards import card_str, cards_str, parse_card
from tt_env.engine.game import (DISCARD_BASE, DRAW_STOCK, PHASE_DISCARD, PHASE_DRAW, TAKE_DISCARD,
                                GameState, StepResult, action_mask, apply, legal_actions, new_game,
                                winners)


# --------------------------------------------------------------------------- helpers
def make_state(hands: list[str], *, stock: str = "", pile: str = "", player: int = 0,
               phase: int = PHASE_DRAW, taken: str | None = None, turn: int = 0, dealer: int | None = None,
               scores: list[int] | None = None, seed: int = 0, **rule_options) -> GameState:
    """A game whose current round has exactly these hands, stock and discard pile."""
    rules = Rules(num_players=len(hands), **rule_options)
    state = new_game(rules, np.random.default_rng(seed))
    state.hands = [parse_cards(h) for h in hands]
    state.stock = parse_cards(stock)
    state.discard_pile = CardList(parse_cards(pile))
    state.current_player = player
    state.phase = phase
    state.turn = turn
    state.taken_this_turn = parse_card(taken) if taken else None
    state.known_taken = [[] for _ in hands]
    state.discards = [CardList() for _ in hands]
    if dealer is not None:
        state.dealer = dealer
    if scores is not None:
        state.scores = list(scores)
    return state


def action_of(token: str) -> int:
    """Action id of a move token: ``S`` draw stock, ``T`` take discard, else discard that card."""
    if token == "S":
        return DRAW_STOCK
    if token == "T":
        return TAKE_DISCARD
    return DISCARD_BASE + parse_card(token)


def play(state: GameState, moves: str) -> list[StepResult]:
    """Apply the space-separated move tokens in order; the step results, one per move."""
    return [apply(state, action_of(t)) for t in moves.split()]


def legal_tokens(state: GameState) -> set[str]:
    """Legal moves as tokens, checked against the action mask on the way."""
    acts = legal_actions(state)
    assert np.flatnonzero(action_mask(state)).tolist() == acts
    names = {DRAW_STOCK: "S", TAKE_DISCARD: "T"}
    return {names.get(a) or card_str(a - DISCARD_BASE) for a in acts}


def same_cards(a: list[int], b: str | list[int]) -> bool:
    """Whether two hands hold the same cards (order ignored)."""
    return Counter(a) == Counter(parse_cards(b) if isinstance(b, str) else b)


def shoe_counts(state: GameState) -> Counter:
    return Counter([c for h in state.hands for c in h] + list(state.stock) + list(state.discard_pile))


# --------------------------------------------------------------------------- deal
@pytest.mark.parametrize("round_number", range(1, 12))
@pytest.mark.parametrize("num_players", [2, 3, 5, 8])
def test_deal_size_and_wild_rank_per_round(round_number: int, num_players: int) -> None:
    rules = Rules(num_players=num_players, rounds=(round_number,))
    state = new_game(rules, np.random.default_rng(round_number))
    assert state.round_number == round_number
    assert state.wild_rank == round_number + 2
    assert [len(h) for h in state.hands] == [round_number + 2] * num_players
    assert len(state.discard_pile) == 1, "the first discard is turned up"
    assert len(state.stock) == 52 * rules.num_decks - num_players * (round_number + 2) - 1
    assert shoe_counts(state) == Counter({c: rules.num_decks for c in range(52)})
    assert (state.turn, state.phase, state.went_out) == (0, PHASE_DRAW, None)
    assert state.current_player == (state.dealer + 1) % num_players


def test_round_eleven_alone_deals_thirteen_with_kings_wild() -> None:
    state = new_game(Rules(rounds=(11,)), np.random.default_rng(0))
    assert state.round_number == 11 and state.wild_rank == 13
    assert [len(h) for h in state.hands] == [13, 13]


@pytest.mark.parametrize("rounds", [(1, 2, 3), (2, 5, 11), (4,), (1, 11), tuple(range(1, 12))])
def test_rounds_subset_keeps_each_rounds_hand_size_wild_and_rotates_dealer(rounds: tuple[int, ...]) -> None:
    n = 3
    state = new_game(Rules(num_players=n, rounds=rounds, max_turns_per_round=1), np.random.default_rng(7))
    first_dealer = state.dealer
    seen = []
    while not state.game_over:
        seen.append((state.round_number, state.wild_rank, state.dealer, state.current_player,
                     [len(h) for h in state.hands], len(state.discard_pile)))
        # one turn ends the round (max_turns_per_round=1), or n turns if the player goes out
        while apply(state, legal_actions(state)[0]).round_record is None:
            pass
    expected = [(r, r + 2, (first_dealer + i) % n, (first_dealer + i + 1) % n, [r + 2] * n, 1)
                for i, r in enumerate(rounds)]
    assert seen == expected
    assert [rec.round_number for rec in state.round_results] == list(rounds)
    assert [rec.dealer for rec in state.round_results] == [(first_dealer + i) % n for i in range(len(rounds))]


def test_first_dealer_comes_from_the_seed() -> None:
    rules = Rules(num_players=4)
    dealers = [new_game(rules, np.random.default_rng(seed)).dealer for seed in range(40)]
    assert dealers == [new_game(rules, np.random.default_rng(seed)).dealer for seed in range(40)]
    assert set(dealers) == {0, 1, 2, 3}, "the first dealer is random, not a fixed seat"


def test_deal_is_reproducible_from_the_seed_and_varies_with_it() -> None:
    rules = Rules(num_players=3)
    a, b, c = (new_game(rules, np.random.default_rng(s)) for s in (5, 5, 6))
    assert (a.hands, a.stock, a.discard_pile) == (b.hands, b.stock, b.discard_pile)
    assert (a.hands, a.stock) != (c.hands, c.stock)


# --------------------------------------------------------------------------- a turn
def test_turn_draw_stock_then_discard() -> None:
    s = make_state(["2C 7D QS", "AH 5S 9D"], stock="KD 4C 8H", pile="6S")
    assert legal_tokens(s) == {"S", "T"}
    play(s, "S")
    assert same_cards(s.hands[0], "2C 7D QS 8H") and s.stock == parse_cards("KD 4C")
    assert (s.phase, s.current_player, s.turn) == (PHASE_DISCARD, 0, 0)
    assert legal_tokens(s) == {"2C", "7D", "QS", "8H"}
    play(s, "7D")
    assert same_cards(s.hands[0], "2C QS 8H") and s.discard_pile == parse_cards("6S 7D")
    assert (s.phase, s.current_player, s.turn) == (PHASE_DRAW, 1, 1)
    assert s.discards[0] == parse_cards("7D")


def test_turn_take_discard_then_discard() -> None:
    s = make_state(["2C 7D QS", "AH 5S 9D"], stock="KD 4C 8H", pile="TC 6S", player=1)
    play(s, "T")
    assert same_cards(s.hands[1], "AH 5S 9D 6S") and s.discard_pile == parse_cards("TC")
    assert s.known_taken[1] == parse_cards("6S") and s.stock == parse_cards("KD 4C 8H")
    play(s, "AH")
    assert s.discard_pile == parse_cards("TC AH") and (s.current_player, s.turn) == (0, 1)


DRAWN_DISCARD_CASES = [
    # (options, hand, pile, legal discards after taking the top)
    ({}, "2C 5D 9H", "KS 7H", {"2C", "5D", "9H"}),
    ({"discard_drawn_discard": True}, "2C 5D 9H", "KS 7H", {"2C", "5D", "9H", "7H"}),
    # two decks: the twin already held is the same card type, so it is banned as well
    ({"num_players": 3}, "7H 5D 9H", "KS 7H", {"5D", "9H"}),
    ({"num_players": 3, "discard_drawn_discard": True}, "7H 5D 9H", "KS 7H", {"5D", "9H", "7H"}),
    # only one card type left: discarding it is allowed (possible with four decks)
    ({"decks": 4}, "7H 7H 7H", "KS 7H", {"7H"}),
    ({"decks": 4, "discard_drawn_discard": True}, "7H 7H 7H", "KS 7H", {"7H"}),
    ({"decks": 4}, "7H 7H 2C", "KS 7H", {"2C"}),
]


@pytest.mark.parametrize("options, hand, pile, legal", DRAWN_DISCARD_CASES)
def test_discarding_the_card_just_taken(options: dict, hand: str, pile: str, legal: set[str]) -> None:
    options = dict(options)
    n = options.pop("num_players", 2)
    s = make_state([hand] + ["AS 4S 8D"] * (n - 1), stock="2D 3D", pile=pile, rounds=(1,), **options)
    play(s, "T")
    assert legal_tokens(s) == legal
    for card in {"7H", "2C", "5D", "9H"} - legal:
        if parse_card(card) in s.hands[0]:
            with pytest.raises(ValueError, match="legal actions"):
                apply(s, action_of(card))
    play(s, sorted(legal)[0])
    assert s.current_player == 1 and s.taken_this_turn is None


def test_card_drawn_from_the_stock_may_be_discarded_and_ban_lasts_one_turn() -> None:
    s = make_state(["2C 5D 9H", "AS 4S 8D"], stock="6D 7H KC", pile="KS 7H", rounds=(1,))
    play(s, "T 2C")                       # seat 0 takes 7H, may not discard it now
    play(s, "S KC")                       # seat 1
    play(s, "S")                          # seat 0 draws 7H from the stock: no ban
    assert "7H" in legal_tokens(s)
    play(s, "7H")
    assert s.discard_pile[-1] == parse_card("7H")
    s2 = make_state(["2C 5D 9H", "AS 4S 8D"], stock="6D 7H KC", pile="KS 7H", rounds=(1,))
    play(s2, "T 2C S KC S 9H S AS S")     # a later turn may discard the taken 7H
    assert "7H" in legal_tokens(s2) and s2.known_taken[0] == parse_cards("7H")
    play(s2, "7H")
    assert s2.known_taken[0] == [] and s2.discards[0] == parse_cards("2C 9H 7H")


# --------------------------------------------------------------------------- empty stock
def test_empty_stock_reshuffles_the_discard_pile_under_its_top() -> None:
    s = make_state(["2C 5D 9H", "AS 4S 8D"], pile="2H 3D 4H 5S 6C", rounds=(1,), seed=3)
    assert legal_tokens(s) == {"S", "T"}
    result = apply(s, DRAW_STOCK)
    assert result.reshuffled
    assert s.discard_pile == parse_cards("6C")
    drawn = s.hands[0][-1]
    assert same_cards(list(s.stock) + [drawn], "2H 3D 4H 5S")
    assert shoe_counts(s) == Counter(parse_cards("2C 5D 9H AS 4S 8D 2H 3D 4H 5S 6C"))


def test_reshuffle_uses_the_seeded_generator() -> None:
    def reshuffled(seed: int) -> list[int]:
        s = make_state(["2C 5D 9H", "AS 4S 8D"], pile="AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH",
                       rounds=(1,))
        s.rng = np.random.default_rng(seed)
        apply(s, DRAW_STOCK)
        return list(s.stock) + [s.hands[0][-1]]

    assert reshuffled(11) == reshuffled(11)
    orders = {tuple(reshuffled(seed)) for seed in range(8)}
    assert len(orders) > 1, "the new stock must be shuffled, not kept in pile order"


@pytest.mark.parametrize("pile", ["6C", ""])
def test_drawing_from_an_empty_stock_is_illegal_with_nothing_to_reshuffle(pile: str) -> None:
    s = make_state(["2C 5D 9H", "AS 4S 8D"], pile=pile, rounds=(1,))
    assert legal_tokens(s) == ({"T"} if pile else set())
    with pytest.raises(ValueError, match="legal actions"):
        apply(s, DRAW_STOCK)


# --------------------------------------------------------------------------- going out
JUNK = ["AS 4S 8D", "2C 6D TH", "AH 5C 9S", "2D 7C JS", "KC 8S 2H", "QD 6S 4C", "9C JD 5H"]


@pytest.mark.parametrize("num_players, out_seat", [(2, 0), (2, 1), (3, 0), (3, 2), (4, 1), (4, 3), (6, 4)])
def test_going_out_then_one_more_turn_each_in_seat_order(num_players: int, out_seat: int) -> None:
    hands = [JUNK[i] for i in range(num_players)]
    hands[out_seat] = "4H 5H 6H"
    # every player draws the stock top and discards it; the stock lists the draws last-first
    draws = ["9C"] + ["QC", "JC", "TC", "8C", "7D", "8H", "QS"][:num_players - 1]
    s = make_state(hands, stock=" ".join(reversed(draws)), pile="KD", player=out_seat, rounds=(1,),
                   **({"decks": 3} if num_players > 4 else {}))
    results = play(s, "S 9C")
    assert results[1].went_out and s.went_out == out_seat
    assert results[1].round_record is None
    order = []
    for draw in draws[1:]:
        order.append(s.current_player)
        results = play(s, f"S {draw}")
        assert not any(r.went_out for r in results), "going out is reported once"
    assert order == [(out_seat + k) % num_players for k in range(1, num_players)]
    record = results[-1].round_record
    assert record is not None and s.game_over and results[-1].game_over
    assert record.went_out == out_seat and record.turns == num_players
    assert same_cards(record.hands[out_seat], "4H 5H 6H"), "the player who went out keeps the melds"
    assert same_cards(s.hands[out_seat], "4H 5H 6H")
    expected = [0 if p == out_seat else least_penalty(parse_cards(hands[p]), 3) for p in range(num_players)]
    assert record.points == expected and s.scores == expected
    assert all(p > 0 for seat, p in enumerate(expected) if seat != out_seat)


GOING_OUT_CASES = [
    # (round, hand, stock top, moves of the player, went out)
    (1, "4H 5H 9C", "2D", "T 9C", True),            # take 6H from the pile to finish the run
    (1, "4H 5H 9C", "2D", "S 9C", False),           # 2D from the stock does not help
    (1, "4H 5H 9C", "2D", "T 4H", False),           # discarding the wrong card keeps deadwood
    (2, "4C 7D 8D QS", "9D", "S QS", True),         # wild 4 extends 7D 8D 9D
    (1, "3C 3D 9S", "2D", "S 2D", True),            # wilds make a set with one natural
    (1, "3C 3D KS", "3H", "S KS", True),            # a meld made only of wilds is a set
    (1, "3C 7D KS", "2D", "S 2D", False),           # one wild cannot join 7D and KS
]


@pytest.mark.parametrize("round_number, hand, stock, moves, out", GOING_OUT_CASES)
def test_going_out_happens_when_the_discard_leaves_a_fully_melded_hand(
        round_number: int, hand: str, stock: str, moves: str, out: bool) -> None:
    other = cards_str(parse_cards("AS 4S 8D JC")[:round_number + 2])
    s = make_state([hand, other], stock=stock, pile="KD 6H", rounds=(round_number,))
    result = play(s, moves)[-1]
    assert result.went_out is out and (s.went_out == 0) is out
    assert (s.penalty(0) == 0) is out
    assert s.current_player == 1 and result.round_record is None


def test_going_out_with_all_wild_set_is_not_allowed_when_melds_need_a_natural() -> None:
    for natural, out in ((False, True), (True, False)):
        s = make_state(["3C 3D KS", "AS 4S 8D"], stock="3H", pile="KD", rounds=(1,), meld_needs_natural=natural)
        assert play(s, "S KS")[-1].went_out is out


def test_a_second_player_melding_in_the_last_turns_scores_zero_but_did_not_go_out() -> None:
    s = make_state(["4H 5H 9C", "8S 9S KD", "AS 4S 8D"], stock="2C TS", pile="6H", rounds=(1,))
    assert play(s, "T 9C")[-1].went_out
    assert not any(r.went_out for r in play(s, "S KD"))   # seat 1 draws TS: 8S 9S TS
    record = play(s, "S 2C")[-1].round_record
    assert record is not None and record.went_out == 0
    assert record.points == [0, 0, least_penalty(parse_cards("AS 4S 8D"), 3)]


def test_went_out_is_reported_in_the_env_infos() -> None:
    env = three_thirteen_v0.raw_env(num_players=3, rounds=(1,))
    env.reset(seed=0)
    env.game_state = make_state(["4H 5H 9C", "8S 2S KD", "AS 4S 8D"], stock="2C TS", pile="6H", rounds=(1,))
    env.agent_selection = "player_0"
    env.step(TAKE_DISCARD)
    assert all(info["went_out"] == -1 for info in env.infos.values())
    env.step(DISCARD_BASE + parse_card("9C"))
    assert {a: info["went_out"] for a, info in env.infos.items()} == dict.fromkeys(env.agents, 0)
    assert env.agent_selection == "player_1"
    env.step(DRAW_STOCK)
    assert all(info["went_out"] == -1 for info in env.infos.values()), "went_out is the event of one step"


# --------------------------------------------------------------------------- turn limit
def test_turn_limit_ends_the_round_with_every_hand_scored_as_held() -> None:
    hands = ["2C 7D QS", "AH 5S 9D"]
    s = make_state(hands, stock="JD 8C 6S KC", pile="TD", max_turns_per_round=3, rounds=(1,))
    results = play(s, "S KC S 6S")
    assert all(r.round_record is None for r in results)
    result = play(s, "S 8C")[-1]
    record = result.round_record
    assert record is not None and record.went_out is None and record.turns == 3
    assert record.points == [least_penalty(parse_cards(h), 3) for h in hands] == [19, 15]
    assert s.game_over and s.scores == [19, 15]


def test_turn_limit_starts_the_next_round_when_there_is_one() -> None:
    s = make_state(["2C 7D QS", "AH 5S 9D"], stock="JD 8C", pile="TD", max_turns_per_round=1, rounds=(1, 2),
                   dealer=1)
    record = play(s, "S 8C")[-1].round_record
    assert record is not None and record.round_number == 1 and record.points == [19, 15]
    assert not s.game_over and (s.round_number, s.dealer, s.current_player, s.turn) == (2, 0, 1, 0)
    assert s.scores == [19, 15] and [len(h) for h in s.hands] == [4, 4]


LAST_TURN_CASES = [
    # (limit, hands, stock, moves up to going out, last turns)
    (1, ["4H 5H 9C", "2C 7D QS", "AS 4S 8D"], "2D JC KC 6H", "S 9C", "S KC S JC"),
    (2, ["2C 7D QS", "4H 5H 9C", "AS 4S 8D"], "2D JC TC 6H KC", "S KC S 9C", "S TC S JC"),
    (3, ["2C 7D QS", "4H 5H 9C", "AS 4S 8D"], "2D JC TC 6H KC", "S KC S 9C", "S TC S JC"),
]


@pytest.mark.parametrize("limit, hands, stock, moves, last_turns", LAST_TURN_CASES)
def test_turn_limit_does_not_cut_the_last_turns_after_going_out(
        limit: int, hands: list[str], stock: str, moves: str, last_turns: str) -> None:
    s = make_state(hands, stock=stock, pile="KD", max_turns_per_round=limit, rounds=(1,))
    assert play(s, moves)[-1].went_out
    out_turn = s.turn
    assert out_turn <= limit and not s.game_over
    last = play(s, last_turns)
    assert last[-1].round_record is not None and last[-1].round_record.turns == out_turn + 2 > limit
    assert all(r.round_record is None for r in last[:-1])


# --------------------------------------------------------------------------- scoring
SCORING_CASES = [
    # (round, aces, meld_needs_natural, hand of seat 1, points)
    (1, "low", False, "AC 9D KH", 20),
    (1, "high_or_low", False, "AC 9D KH", 34),           # an unmelded ace costs 15
    (1, "low", False, "QH KH AH", 21),                   # Q-K-A is no run with low aces
    (1, "high_or_low", False, "QH KH AH", 0),
    (1, "high_or_low", False, "KH AH 2H", 27),           # never K-A-2
    (1, "low", False, "AH 2H 3C", 0),                    # wild 3 ends A-2 of hearts
    (1, "low", False, "3C 3D 3H", 0),                    # all wilds: a set
    (1, "low", True, "3C 3D 3H", 9),                     # ... unless melds need a natural
    (1, "low", True, "3C 3D 9S", 0),                     # one natural is enough
    (3, "low", False, "5C 2S 9D QH 7C", 33),             # unmelded wild 5 costs 5
    (3, "low", False, "5C 9D 9H 2S JC", 12),
    (2, "low", True, "4C 4D 4H 4S", 16),
    (9, "low", False, "JC 2D 4S 6H 8C TD QH AS 3H 7S 9S", 44),   # JC fills 7S _ 9S
    (9, "high_or_low", False, "JC 2D 4S 6H 8C TD QH AS 3H 7S 9S", 58),
    # 85 in all; the kings (wild) make TH KC QH and 7C KD 9C: 85 - 30 - 26
    (11, "low", False, "KC KD 2H 4H 6H 8H TH QH AC 3C 5C 7C 9C", 29),
]


@pytest.mark.parametrize("round_number, aces, natural, hand, points", SCORING_CASES)
def test_round_points_are_the_least_penalty_of_each_hand(
        round_number: int, aces: str, natural: bool, hand: str, points: int) -> None:
    mover = cards_str(parse_cards("2C 7D QS 6D 8S TC 2S 4D 9H JD 5S 6C 4C")[:round_number + 2])
    s = make_state([mover, hand], stock="8D", pile="KD", max_turns_per_round=1, rounds=(round_number,),
                   aces=aces, meld_needs_natural=natural)
    record = play(s, "S 8D")[-1].round_record
    assert record is not None and record.went_out is None
    assert record.points[1] == points
    assert record.points == [least_penalty(h, round_number + 2, aces == "high_or_low", natural)
                             for h in record.hands]


def test_scores_add_up_over_rounds() -> None:
    s = make_state(["2C 7D QS", "AH 5S 9D"], stock="JD 8C", pile="TD", max_turns_per_round=1, rounds=(1, 4),
                   scores=[3, 4])
    play(s, "S 8C")
    assert s.scores == [3 + 19, 4 + 15]
    first = list(s.scores)
    while not s.game_over:
        apply(s, legal_actions(s)[0])
    assert s.scores == [a + b for a, b in zip(first, s.round_results[-1].points)]
    assert len(s.round_results) == 2


@pytest.mark.parametrize("scores, won", [([10, 5, 5], [1, 2]), ([3, 4], [0]), ([7, 7, 7, 7], [0, 1, 2, 3]),
                                          ([0, 1, 2, 0, 5], [0, 3]), ([40, 12], [1])])
def test_lowest_total_wins_and_ties_share(scores: list[int], won: list[int]) -> None:
    s = make_state(["2C 7D QS"] * len(scores), stock="8D", pile="KD", scores=scores, rounds=(1,),
                   **({"decks": 2} if len(scores) > 4 else {}))
    assert winners(s) == won


# --------------------------------------------------------------------------- decks (smoke)
@pytest.mark.parametrize("num_players, decks", [(2, 1), (3, 2), (4, 2), (5, 2), (7, 2), (8, 3)])
def test_decks_auto_and_shoe_size(num_players: int, decks: int) -> None:
    rules = Rules(num_players=num_players)
    assert rules.num_decks == decks
    assert shoe_counts(new_game(rules, np.random.default_rng(0))) == Counter({c: decks for c in range(52)})


def test_explicit_decks_too_small_is_rejected() -> None:
    with pytest.raises(ValueError, match="decks"):
        Rules(num_players=8, decks=1)


# --------------------------------------------------------------------------- illegal actions
ILLEGAL_CASES = [
    # (moves before, illegal action, legal actions named in the message)
    ("", DISCARD_BASE + parse_card("2C"), [0, 1]),
    ("S", DRAW_STOCK, None),
    ("S", TAKE_DISCARD, None),
    ("S", DISCARD_BASE + parse_card("KH"), None),        # a card not held
    ("T", DISCARD_BASE + parse_card("TD"), None),        # the card just taken
    ("", 54, [0, 1]),
    ("", -1, [0, 1]),
]


@pytest.mark.parametrize("before, action, legal", ILLEGAL_CASES)
def test_illegal_action_raises_naming_the_legal_ones(before: str, action, legal: list[int] | None) -> None:
    s = make_state(["2C 7D QS", "AH 5S 9D"], stock="JD 8C", pile="TD", rounds=(1,))
    if before:
        play(s, before)
    snapshot = s.to_dict()
    with pytest.raises(ValueError) as err:
        apply(s, action)
    assert str(legal_actions(s)) in str(err.value) and "legal actions" in str(err.value)
    if legal is not None:
        assert legal_actions(s) == legal
    assert s.to_dict() == snapshot, "an illegal action leaves the state untouched"


@pytest.mark.parametrize("action", ["0", 1.0, 1.7, None, True, False, np.bool_(True), np.array([1.0]),
                                    np.array([1]), np.array(1.0), [1]])
def test_a_non_integer_action_is_a_type_error_naming_the_allowed_values(action) -> None:
    s = make_state(["2C 7D QS", "AH 5S 9D"], stock="JD 8C", pile="TD", rounds=(1,))
    snapshot = s.to_dict()
    with pytest.raises(TypeError, match=r"not an action: use an int 0\.\.53: a Python int, a numpy integer"):
        apply(s, action)
    assert s.to_dict() == snapshot, "a rejected action leaves the state untouched"


@pytest.mark.parametrize("action", [1, np.int64(1), np.int8(1), np.uint16(1), np.array(1), np.array(1, dtype=np.int32)])
def test_numpy_integer_scalars_and_0d_integer_arrays_are_actions(action) -> None:
    s = make_state(["2C 7D QS", "AH 5S 9D"], stock="JD 8C", pile="TD", rounds=(1,))
    apply(s, action)
    assert s.hands[s.current_player][-1] == parse_card("TD") and s.phase == PHASE_DISCARD


def test_no_action_is_legal_once_the_game_is_over() -> None:
    s = make_state(["2C 7D QS", "AH 5S 9D"], stock="8C", pile="TD", max_turns_per_round=1, rounds=(1,))
    assert play(s, "S 8C")[-1].game_over
    assert legal_actions(s) == [] and not action_mask(s).any()
    with pytest.raises(ValueError, match="game is over"):
        apply(s, DRAW_STOCK)


def test_raw_env_step_raises_on_an_illegal_action() -> None:
    env = three_thirteen_v0.raw_env()
    env.reset(seed=1)
    legal = legal_actions(env.game_state)
    illegal = next(a for a in range(54) if a not in legal)
    with pytest.raises(ValueError, match=r"legal actions are \[0, 1\]"):
        env.step(illegal)


def test_wrapped_env_ends_the_game_with_minus_one_for_the_offender() -> None:
    env = three_thirteen_v0.env(num_players=3)
    env.reset(seed=2)
    offender = env.agent_selection
    env.step(DISCARD_BASE + 51)  # a discard in the draw phase
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1.0
    assert all(r == 0.0 for a, r in env.rewards.items() if a != offender)
    assert env._cumulative_rewards[offender] == -1.0
