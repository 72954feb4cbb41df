"""RULES.md, the deal and the turns: dealing, a turn, the empty stock, the decks, illegal actions."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tt_env import three_thirteen_v0
from tt_env.engine import Rules, parse_cards
from tt_env.engine.cards import parse_card
from tt_env.engine.game import (DISCARD_BASE, DRAW_STOCK, PHASE_DISCARD, PHASE_DRAW, TAKE_DISCARD, action_mask,
                                apply, legal_actions, new_game)

from game_positions import action_of, legal_tokens, make_state, play, same_cards, shoe_counts


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
