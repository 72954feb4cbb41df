"""RULES.md, the end of a round and the score: going out, the last turns, the turn limit, points, winners."""

from __future__ import annotations

import pytest

from tt_env import three_thirteen_v0
from tt_env.engine import least_penalty, parse_cards
from tt_env.engine.cards import cards_str, parse_card
from tt_env.engine.game import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD, apply, legal_actions, winners

from game_positions import make_state, play, same_cards


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
    assert s.scores == [a + b for a, b in zip(first, s.round_results[-1].points, strict=True)]
    assert len(s.round_results) == 2


@pytest.mark.parametrize("scores, won", [([10, 5, 5], [1, 2]), ([3, 4], [0]), ([7, 7, 7, 7], [0, 1, 2, 3]),
                                          ([0, 1, 2, 0, 5], [0, 3]), ([40, 12], [1])])
def test_lowest_total_wins_and_ties_share(scores: list[int], won: list[int]) -> None:
    s = make_state(["2C 7D QS"] * len(scores), stock="8D", pile="KD", scores=scores, rounds=(1,),
                   **({"decks": 2} if len(scores) > 4 else {}))
    assert winners(s) == won
