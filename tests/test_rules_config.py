"""The rules configuration (tt_env/engine/rules.py) against RULES.md."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tt_env.engine.rules import Rules, auto_decks, hand_size, wild_rank


def test_defaults_match_rules_md() -> None:
    rules = Rules()
    assert rules.num_players == 2
    assert rules.decks == "auto" and rules.num_decks == 1
    assert rules.aces == "low" and rules.aces_high is False
    assert rules.rounds == tuple(range(1, 12))
    assert rules.discard_drawn_discard is False
    assert rules.max_turns_per_round == 200
    assert rules.meld_needs_natural is False


def test_rules_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().num_players = 3  # type: ignore[misc]


@pytest.mark.parametrize("round_number", range(1, 12))
def test_hand_size_and_wild_rank_table(round_number: int) -> None:
    # RULES.md: round r deals r + 2 cards and rank r + 2 is wild (3s in round 1 .. kings in 11)
    assert hand_size(round_number) == round_number + 2
    assert wild_rank(round_number) == round_number + 2
    assert wild_rank(11) == 13


def test_aces_high_variant() -> None:
    assert Rules(aces="high_or_low").aces_high is True


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("num_players", 1),
        ("num_players", 0),
        ("num_players", 9),
        ("num_players", -2),
        ("num_players", 2.0),
        ("num_players", "2"),
        ("num_players", True),
        ("decks", 0),
        ("decks", -1),
        ("decks", "bogus"),
        ("decks", 1.5),
        ("decks", None),
        ("decks", True),
        ("aces", "bogus"),
        ("aces", "high"),
        ("aces", "LOW"),
        ("aces", None),
        ("rounds", ()),
        ("rounds", []),
        ("rounds", (2, 1)),
        ("rounds", (1, 1)),
        ("rounds", (1, 3, 3, 5)),
        ("rounds", (0,)),
        ("rounds", (12,)),
        ("rounds", (1, 12)),
        ("rounds", (-1, 2)),
        ("rounds", ("1",)),
        ("rounds", (1.0, 2.0)),
        ("rounds", "1,2,3"),
        ("rounds", None),
        ("rounds", 11),
        ("max_turns_per_round", 0),
        ("max_turns_per_round", -5),
        ("max_turns_per_round", 10.5),
        ("max_turns_per_round", "200"),
        ("max_turns_per_round", None),
        ("discard_drawn_discard", 1),
        ("discard_drawn_discard", 0),
        ("discard_drawn_discard", "false"),
        ("discard_drawn_discard", None),
        ("meld_needs_natural", 1),
        ("meld_needs_natural", "yes"),
        ("meld_needs_natural", None),
    ],
)
def test_bad_value_raises_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        Rules(**{field: value})


@pytest.mark.parametrize(("field", "value"), [("num_players", 9), ("aces", "bogus"), ("decks", "bogus")])
def test_bad_value_message_shows_the_value(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=repr(value).replace("'", "'?")):
        Rules(**{field: value})


def test_aces_message_lists_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"low.*high_or_low"):
        Rules(aces="bogus")


@pytest.mark.parametrize("players", range(2, 9))
def test_every_supported_player_count_is_accepted(players: int) -> None:
    assert Rules(num_players=players).num_players == players


def test_good_edge_values_are_accepted() -> None:
    assert Rules(rounds=(11,)).rounds == (11,)
    assert Rules(rounds=[1, 5, 11]).rounds == (1, 5, 11)  # a list is accepted and frozen
    assert Rules(max_turns_per_round=1).max_turns_per_round == 1
    assert Rules(decks=3).num_decks == 3
    assert Rules(discard_drawn_discard=True, meld_needs_natural=True).meld_needs_natural is True


def _stock_after_deal(decks: int, players: int, last_round: int) -> int:
    # RULES.md: cards left in the stock after dealing the last round played (13 cards each
    # in round 11) and turning up the first discard
    return 52 * decks - players * (last_round + 2) - 1


def _fewest_decks(players: int, last_round: int) -> int:
    decks = 1
    while _stock_after_deal(decks, players, last_round) < players:
        decks += 1
    return decks


@pytest.mark.parametrize(
    ("players", "expected"),
    [(2, 1), (3, 2), (4, 2), (5, 2), (6, 2), (7, 2), (8, 3)],
)
def test_auto_decks_full_game(players: int, expected: int) -> None:
    # 5 players: 52*2 - 65 - 1 = 38 >= 5; 8 players: 52*2 - 104 - 1 = -1 < 8, 52*3 - 105 = 51 >= 8
    assert Rules(num_players=players).num_decks == expected
    assert auto_decks(players) == expected


@pytest.mark.parametrize("players", range(5, 9))
@pytest.mark.parametrize("last_round", range(1, 12))
def test_auto_decks_beyond_four_players_follow_the_last_round(players: int, last_round: int) -> None:
    rules = Rules(num_players=players, rounds=tuple(range(1, last_round + 1)))
    assert rules.num_decks == _fewest_decks(players, last_round)
    assert _stock_after_deal(rules.num_decks, players, last_round) >= players
    # only the last round matters, not the first
    assert Rules(num_players=players, rounds=(last_round,)).num_decks == rules.num_decks


def test_auto_decks_small_tables_ignore_the_round() -> None:
    for last_round in (1, 6, 11):
        assert Rules(num_players=2, rounds=(last_round,)).num_decks == 1
        assert Rules(num_players=3, rounds=(last_round,)).num_decks == 2
        assert Rules(num_players=4, rounds=(last_round,)).num_decks == 2


def test_auto_decks_examples_by_hand() -> None:
    # 8 players, only round 1 (3 cards each): 52 - 24 - 1 = 27 >= 8, so one deck
    assert Rules(num_players=8, rounds=(1,)).num_decks == 1
    # 8 players up to round 5 (7 cards each): 52 - 56 - 1 < 8; 104 - 57 = 47 >= 8
    assert Rules(num_players=8, rounds=(1, 5)).num_decks == 2


@pytest.mark.parametrize(
    ("players", "decks", "rounds"),
    [(8, 1, (11,)), (8, 2, (11,)), (5, 1, (11,)), (7, 1, (11,)), (8, 1, (5,))],
)
def test_explicit_decks_too_small_is_an_error(players: int, decks: int, rounds: tuple[int, ...]) -> None:
    assert _stock_after_deal(decks, players, rounds[-1]) < players
    with pytest.raises(ValueError, match="decks"):
        Rules(num_players=players, decks=decks, rounds=rounds)


@pytest.mark.parametrize(("players", "decks"), [(2, 1), (2, 2), (4, 3), (8, 3), (8, 5)])
def test_explicit_decks_large_enough_are_kept(players: int, decks: int) -> None:
    assert Rules(num_players=players, decks=decks).num_decks == decks


def test_from_dict_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="bogus_option"):
        Rules.from_dict({"num_players": 3, "bogus_option": 1})
    with pytest.raises(ValueError, match="num_decks"):
        Rules.from_dict({"num_decks": 2})  # a derived property, not an option


def test_from_dict_validates_values() -> None:
    with pytest.raises(ValueError, match="aces"):
        Rules.from_dict({"aces": "sometimes"})


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(num_players=5, decks=4, aces="high_or_low", rounds=(3, 7, 11),
              discard_drawn_discard=True, max_turns_per_round=17, meld_needs_natural=True),
        Rules(num_players=8, rounds=(1,)),
    ],
    ids=["defaults", "everything-changed", "auto-small"],
)
def test_to_dict_from_dict_round_trip(rules: Rules) -> None:
    data = rules.to_dict()
    assert set(data) == {"num_players", "decks", "aces", "rounds", "discard_drawn_discard",
                         "max_turns_per_round", "meld_needs_natural"}
    assert Rules.from_dict(data) == rules
    # JSON-ready: survives a trip through JSON text unchanged
    assert Rules.from_dict(json.loads(json.dumps(data))) == rules
    assert Rules.from_dict(data).num_decks == rules.num_decks


def test_from_dict_empty_is_defaults() -> None:
    assert Rules.from_dict({}) == Rules()
