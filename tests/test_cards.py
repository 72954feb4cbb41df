"""Card ints and their string form (tt_env/engine/cards.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tt_env.engine.cards import (
    card_str,
    card_value,
    cards_str,
    hand_vec,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)

ALL_CARDS = range(52)


@pytest.mark.parametrize("card", ALL_CARDS)
def test_card_str_round_trip_every_card(card: int) -> None:
    text = card_str(card)
    assert len(text) == 2
    assert parse_cards(text) == [card]
    assert parse_card(text) == card
    assert parse_card(text.lower()) == card


def test_layout_is_suit_major_with_ace_low() -> None:
    assert parse_cards("AC 2C KC AD AH AS KS") == [0, 1, 12, 13, 26, 39, 51]
    for card in ALL_CARDS:
        assert card == suit_of(card) * 13 + rank_of(card) - 1
        assert 1 <= rank_of(card) <= 13 and 0 <= suit_of(card) <= 3
    assert [rank_of(c) for c in parse_cards("AH 7H TH JH QH KH")] == [1, 7, 10, 11, 12, 13]
    assert [suit_of(c) for c in parse_cards("2C 2D 2H 2S")] == [0, 1, 2, 3]


def test_ten_is_written_t_or_10() -> None:
    assert parse_cards("TD 10D td 10d Td") == [parse_card("TD")] * 5
    assert card_str(parse_card("10C")) == "TC"


def test_any_case_and_separators() -> None:
    expected = parse_cards("AS 2H TD TC KH")
    assert parse_cards("AS 2H TD 10C KH") == expected
    assert parse_cards("as 2h td 10c kh") == expected
    assert parse_cards("aS,2H, Td,10C   kH") == expected
    assert parse_cards("") == []
    assert parse_card("  qs ") == parse_card("QS")


def test_cards_str_round_trip_with_duplicates() -> None:
    hand = [0, 51, 25, 25, 9]
    assert cards_str(hand) == "AC KS KD KD TC"
    assert parse_cards(cards_str(hand)) == hand


@pytest.mark.parametrize("text", ["", "7", "H", "7X", "1H", "11H", "0S", "XH", "H7", "AHH", "10", "7 H"])
def test_bad_card_raises_helpful_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"is not a card.*rank.*suit"):
        parse_card(text)


def test_bad_card_in_a_list_names_the_token() -> None:
    with pytest.raises(ValueError, match=r"'7X' is not a card"):
        parse_cards("AS 7X KH")


@pytest.mark.parametrize("card", [-1, 52, 100])
def test_card_str_rejects_non_cards(card: int) -> None:
    with pytest.raises(ValueError, match=r"0\.\.51"):
        card_str(card)


@pytest.mark.parametrize(
    ("rank", "low", "high"),
    [(1, 1, 15), (2, 2, 2), (9, 9, 9), (10, 10, 10), (11, 10, 10), (12, 10, 10), (13, 10, 10)],
)
def test_card_value_per_rules(rank: int, low: int, high: int) -> None:
    assert card_value(rank) == low
    assert card_value(rank, aces_high=True) == high


def test_hand_vec_counts_duplicates() -> None:
    vec = hand_vec(parse_cards("7H 7H AC KS"))
    assert vec.shape == (52,) and vec.dtype == np.uint8
    assert vec[parse_card("7H")] == 2 and vec[0] == 1 and vec[51] == 1 and vec.sum() == 4
    assert hand_vec([]).sum() == 0
