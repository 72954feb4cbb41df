"""A player's observation holds what that player may know, and nothing else.

Hidden from a seat: the stock (its order and content) and the cards of each opponent that
the seat did not see the opponent take from the discard pile. :func:`shuffle_hidden`
redeals exactly those cards at random (keeping every size); the seat's observation, and
its action mask when it is to move, must not change. Public changes (the discard top, a
card an opponent took from the discard pile and still holds, an opponent's discards, the
seat's own hand) must change it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest

from tt_env import three_thirteen_v0
from tt_env.engine import Rules, parse_cards
from tt_env.engine.cardlist import CardList
from tt_env.engine.game import (DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD, GameState, action_mask, apply,
                                legal_actions, new_game)
from tt_env.observation import encode, get_layout


def hidden_part(state: GameState, seat: int, other: int) -> list[int]:
    """Cards of ``other``'s hand that ``seat`` did not see it take (a multiset difference)."""
    rest = Counter(state.hands[other]) - Counter(state.known_taken[other])
    return list(rest.elements())


def copy_cards(state: GameState) -> GameState:
    """A copy whose card lists can be edited freely (cheaper than ``clone``; shares the rng)."""
    return dataclasses.replace(
        state, hands=[list(h) for h in state.hands], stock=list(state.stock),
        discard_pile=CardList(state.discard_pile), known_taken=[list(k) for k in state.known_taken],
        discards=[CardList(d) for d in state.discards], scores=list(state.scores))


def shuffle_hidden(state: GameState, seat: int, rng: np.random.Generator) -> GameState:
    """A copy in which the cards hidden from ``seat`` are redealt at random among the same places."""
    new = copy_cards(state)
    n = state.rules.num_players
    others = [p for p in range(n) if p != seat]
    hidden = {p: hidden_part(state, seat, p) for p in others}
    pool = list(state.stock) + [c for p in others for c in hidden[p]]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    new.stock = pool[:len(state.stock)]
    pos = len(state.stock)
    for p in others:
        k = len(hidden[p])
        new.hands[p] = list(state.known_taken[p]) + pool[pos:pos + k]
        pos += k
    return new


def observation(state: GameState, seat: int) -> tuple[bytes, bytes]:
    """Observation bytes and (for the seat to move) mask bytes."""
    mask = action_mask(state) if seat == state.current_player else np.zeros(54, np.int8)
    return encode(state, seat).tobytes(), mask.tobytes()


def random_states(options: dict, games: int, every: int):
    """States met along seeded random games, one every ``every`` steps."""
    rules = Rules(**options)
    for seed in range(games):
        rng = np.random.default_rng(seed)
        state = new_game(rules, np.random.default_rng(seed + 1))
        step = 0
        while not state.game_over:
            if step % every == 0:
                yield state
            legal = legal_actions(state)
            apply(state, legal[int(rng.integers(len(legal)))])
            step += 1


CONFIGS = [
    dict(num_players=2, rounds=(1, 4)),
    dict(num_players=3, rounds=(2, 6), max_turns_per_round=80),                  # two decks: twins of held and taken cards
    dict(num_players=4, rounds=(1, 9), max_turns_per_round=40),
    dict(num_players=6, rounds=(11,), max_turns_per_round=60, discard_drawn_discard=True),
    dict(num_players=2, decks=4, rounds=(3,)),
]


@pytest.mark.parametrize("options", CONFIGS, ids=[str(c) for c in CONFIGS])
def test_hidden_cards_do_not_change_the_observation(options: dict) -> None:
    rng = np.random.default_rng(0)
    changed = checked = 0
    for state in random_states(options, games=3, every=4):
        for seat in range(state.rules.num_players):
            other = shuffle_hidden(state, seat, rng)
            assert Counter(c for h in other.hands for c in h) + Counter(other.stock) == \
                Counter(c for h in state.hands for c in h) + Counter(state.stock)
            changed += (other.hands, other.stock) != (state.hands, state.stock)
            assert observation(other, seat) == observation(state, seat), \
                f"seat {seat} sees hidden cards at {state.describe()}"
            checked += 1
    assert checked > 100 and changed > checked * 0.9, "the hidden cards were hardly ever moved"


def test_hidden_cards_do_not_change_what_the_env_shows() -> None:
    env = three_thirteen_v0.raw_env(num_players=3, rounds=(5,))
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(40):
        state = env.game_state
        for seat, agent in enumerate(env.possible_agents):
            before = env.observe(agent)
            env.game_state = shuffle_hidden(state, seat, rng)
            after = env.observe(agent)
            env.game_state = state
            assert np.array_equal(before["observation"], after["observation"])
            assert np.array_equal(before["action_mask"], after["action_mask"])
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


def differs(state: GameState, seat: int, edit) -> bool:
    """Whether ``edit`` (applied to a copy) changes ``seat``'s observation."""
    other = copy_cards(state)
    edit(other)
    return encode(other, seat).tobytes() != encode(state, seat).tobytes()


@pytest.mark.parametrize("options", CONFIGS[:3], ids=[str(c) for c in CONFIGS[:3]])
def test_public_cards_change_the_observation(options: dict) -> None:
    seen_taken = 0
    for state in random_states(options, games=2, every=5):
        n = state.rules.num_players
        for seat in range(n):
            if state.discard_pile:
                top = state.discard_pile[-1]

                def new_top(s: GameState, top: int = top) -> None:
                    s.discard_pile[-1] = (top + 1) % 52

                assert differs(state, seat, new_top), "the discard top is public"
            assert differs(state, seat, lambda s: s.hands[seat].__setitem__(
                0, (s.hands[seat][0] + 1) % 52)), "the seat's own hand is its own"
            for other in range(n):
                if other == seat:
                    continue
                assert differs(state, seat, lambda s: s.discards[other].append(0)), "discards are public"
                if state.known_taken[other]:
                    seen_taken += 1
                    card = state.known_taken[other][0]
                    swap = (card + 13) % 52

                    def retake(s: GameState) -> None:
                        s.hands[other][s.hands[other].index(card)] = swap
                        s.known_taken[other][0] = swap

                    assert differs(state, seat, retake), "a card taken from the pile and still held is public"
    assert seen_taken > 10, "no state had a card taken from the discard pile"


def test_a_card_taken_from_the_pile_is_seen_until_it_is_discarded() -> None:
    rules = Rules(num_players=2, rounds=(1,))
    lay = get_layout(2)

    def position(stock: str) -> GameState:
        s = new_game(rules, np.random.default_rng(0))
        s.hands = [parse_cards("2C 7D QS"), parse_cards("AH 5S 8D")]
        s.stock, s.discard_pile = parse_cards(stock), CardList(parse_cards("KD 9C"))
        s.current_player, s.known_taken, s.discards = 1, [[], []], [CardList(), CardList()]
        return s

    def taken(s: GameState) -> list[int]:
        return np.flatnonzero(lay.view(encode(s, 0), "opponent_taken")).tolist()

    a = position("4D 6H JS")
    apply(a, TAKE_DISCARD)                       # seat 1 takes 9C in view of seat 0
    assert taken(a) == parse_cards("9C")
    apply(a, DISCARD_BASE + parse_cards("AH")[0])
    apply(a, DRAW_STOCK)
    apply(a, DISCARD_BASE + parse_cards("JS")[0])
    assert taken(a) == parse_cards("9C"), "still held, still known"
    # seat 1 draws from the stock: which card it drew is hidden from seat 0
    b, c = a.clone(), a.clone()
    c.stock[-1] = parse_cards("TH")[0]
    apply(b, DRAW_STOCK)
    apply(c, DRAW_STOCK)
    assert encode(b, 0).tobytes() == encode(c, 0).tobytes()
    assert encode(b, 1).tobytes() != encode(c, 1).tobytes()
    apply(b, DISCARD_BASE + parse_cards("9C")[0])
    assert taken(b) == []
    assert parse_cards("9C")[0] in np.flatnonzero(lay.view(encode(b, 0), "opponent_discards")).tolist()
