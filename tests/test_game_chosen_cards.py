"""Engine hooks for callers that choose the cards leaving the shoe (explicit chance nodes):
``collect_deal``, ``deal_card``, ``cards_to_deal`` and ``stack_stock``."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tt_env.engine.cardlist import CardList
from tt_env.engine.cards import parse_card, parse_cards
from tt_env.engine.chosen_cards import cards_to_deal, collect_deal, deal_card, stack_stock
from tt_env.engine.game import DISCARD_BASE, DRAW_STOCK, PHASE_DISCARD, TAKE_DISCARD, apply, legal_actions, new_game
from tt_env.engine.rules import Rules, hand_size


def deal_order(state) -> list[int]:
    """The cards of a fresh deal in the order ``_deal`` handed them out (upcard last)."""
    n = state.rules.num_players
    order = [(state.dealer + 1 + i) % n for i in range(n)]
    cards = [state.hands[seat][j] for j in range(hand_size(state.round_number)) for seat in order]
    return cards + [state.discard_pile[-1]]


@pytest.mark.parametrize("rules", [Rules(), Rules(num_players=3, rounds=(11,)), Rules(num_players=5, rounds=(4, 9))])
def test_dealing_a_deal_back_card_by_card_gives_the_same_round(rules: Rules) -> None:
    dealt = new_game(rules, np.random.default_rng(3))
    chosen = dealt.clone()
    collect_deal(chosen)
    assert chosen.hands == [[] for _ in range(rules.num_players)] and chosen.discard_pile == []
    assert Counter(chosen.stock) == Counter(c % 52 for c in range(rules.num_cards))
    sequence = deal_order(dealt)
    assert cards_to_deal(chosen) == len(sequence)
    for k, card in enumerate(sequence):
        deal_card(chosen, card)
        assert cards_to_deal(chosen) == len(sequence) - k - 1
    assert chosen.hands == dealt.hands and chosen.discard_pile == dealt.discard_pile
    assert isinstance(chosen.discard_pile, CardList) and chosen.discard_pile.counts == dealt.discard_pile.counts
    assert Counter(chosen.stock) == Counter(dealt.stock)
    assert (chosen.current_player, chosen.phase, chosen.turn) == (dealt.current_player, dealt.phase, dealt.turn)
    assert legal_actions(chosen) == legal_actions(dealt)


def test_cards_to_deal_is_zero_for_rounds_in_play() -> None:
    state = new_game(Rules(), np.random.default_rng(0))
    assert cards_to_deal(state) == 0
    apply(state, TAKE_DISCARD)  # the pile is empty now, but the round is in play
    assert state.discard_pile == [] and cards_to_deal(state) == 0


def test_collect_deal_can_choose_the_first_dealer_only() -> None:
    state = new_game(Rules(num_players=4), np.random.default_rng(1))
    collect_deal(state, dealer=2)
    assert state.dealer == 2 and state.current_player == 3
    for _ in range(4 * hand_size(1)):
        deal_card(state, state.stock[0])
    assert [len(h) for h in state.hands] == [3, 3, 3, 3]
    with pytest.raises(ValueError, match=r"dealer=4 is not a seat: use 0\.\.3"):
        collect_deal(new_game(Rules(num_players=4), np.random.default_rng(1)), dealer=4)


def test_collect_deal_refuses_a_round_in_play_and_later_dealers() -> None:
    state = new_game(Rules(rounds=(1, 2)), np.random.default_rng(2))
    apply(state, DRAW_STOCK)
    with pytest.raises(ValueError, match="needs a round that was just dealt, before its first move"):
        collect_deal(state)
    later = new_game(Rules(rounds=(1, 2)), np.random.default_rng(2))
    later.round_index, later.round_number = 1, 2
    with pytest.raises(ValueError, match="only the first round's dealer can be chosen"):
        collect_deal(later, dealer=0)


def test_deal_card_names_the_problem() -> None:
    state = new_game(Rules(), np.random.default_rng(4))
    collect_deal(state)
    deal_card(state, parse_card("7H"))
    with pytest.raises(ValueError, match=r"card 32 \(7H\) is not in the stock: deal one of AC 2C .* KS"):
        deal_card(state, parse_card("7H"))  # one deck: there is only one 7H
    while cards_to_deal(state):
        deal_card(state, state.stock[-1])
    with pytest.raises(ValueError, match="no card is due: the deal of round 1 is complete"):
        deal_card(state, state.stock[-1])


def test_stack_stock_chooses_the_next_card_drawn() -> None:
    state = new_game(Rules(), np.random.default_rng(5))
    target = state.stock[0]
    before = Counter(state.stock)
    assert stack_stock(state, target) is False
    assert state.stock[-1] == target and Counter(state.stock) == before
    seat = state.current_player
    apply(state, DRAW_STOCK)
    assert state.hands[seat][-1] == target and state.phase == PHASE_DISCARD
    with pytest.raises(ValueError, match="is not in the stock: choose one of"):
        stack_stock(state, target)


def test_stack_stock_refills_an_empty_stock_from_the_pile_under_its_top() -> None:
    state = new_game(Rules(), np.random.default_rng(6))
    state.stock = []
    state.discard_pile = CardList(parse_cards("2C 3C 4C KD"))
    with pytest.raises(ValueError, match=r"is not in the discard pile under its top \(the stock is empty\): "
                                         r"choose one of 2C 3C 4C"):
        stack_stock(state, parse_card("KD"))  # the top stays on the pile
    assert stack_stock(state, parse_card("3C")) is True
    assert sorted(state.stock) == parse_cards("2C 3C 4C") and state.discard_pile == [parse_card("KD")]
    seat = state.current_player
    apply(state, DRAW_STOCK)
    assert state.hands[seat][-1] == parse_card("3C")
    apply(state, DISCARD_BASE + parse_card("3C"))


def test_stack_stock_with_nothing_to_draw() -> None:
    state = new_game(Rules(), np.random.default_rng(7))
    state.stock = []
    state.discard_pile = CardList(parse_cards("KD"))
    with pytest.raises(ValueError, match="nothing to draw: the stock is empty and the discard pile holds only its top"):
        stack_stock(state, parse_card("KD"))


def test_the_old_path_in_engine_game_warns_and_gives_the_same_function() -> None:
    import warnings

    from tt_env.engine import chosen_cards, game

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert game.collect_deal is chosen_cards.collect_deal
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
