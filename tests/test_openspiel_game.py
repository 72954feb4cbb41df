"""``python_three_thirteen`` in OpenSpiel: the game and its parameters, OpenSpiel's checks, the AEC env's game."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import tt_env.openspiel.game as osg  # noqa: E402  (registers the game)
from tt_env import three_thirteen_v0  # noqa: E402
from tt_env.engine.cards import parse_card  # noqa: E402
from tt_env.engine.game import DRAW_STOCK, TAKE_DISCARD  # noqa: E402
from tt_env.engine.rules import Rules, hand_size, option_names  # noqa: E402
from tt_env.observation import get_layout  # noqa: E402

from openspiel_play import NAME, load, play  # noqa: E402


# ------------------------------------------------------------------ the game and its parameters

def test_game_type_and_registration() -> None:
    game = load()
    kind = game.get_type()
    assert kind.short_name == NAME and NAME in pyspiel.registered_names()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM and game.utility_sum() == 0.0
    assert kind.provides_information_state_tensor and kind.provides_information_state_string
    assert kind.provides_observation_tensor and kind.provides_observation_string
    assert (kind.min_num_players, kind.max_num_players) == (2, 8)
    assert game.num_distinct_actions() == 54 and game.max_chance_outcomes() == 52
    assert game.observation_tensor_shape() == [get_layout(2).size]
    assert game.information_state_tensor_shape() == [2 + 11 + 2 + 2 + 2 + 52 * 4 + 201 * 106]


def test_every_rule_option_is_a_parameter_with_our_defaults() -> None:
    spec = pyspiel.load_game(NAME).get_type().parameter_specification
    assert set(spec) == set(option_names())
    assert osg.rules_from_params(dict(spec)) == Rules() and spec["rounds"] == "[1;2;3;4;5;6;7;8;9;10;11]"
    game = load(num_players=3, decks=3, aces="high_or_low", rounds="9,10,11", discard_drawn_discard=True,
                max_turns_per_round=50, meld_needs_natural=True)
    assert game.rules == Rules(num_players=3, decks=3, aces="high_or_low", rounds=(9, 10, 11),
                               discard_drawn_discard=True, max_turns_per_round=50, meld_needs_natural=True)
    assert game.num_players() == 3 and game.get_parameters()["rounds"] == "[9;10;11]"
    for text in ("9;10;11", "[9;10;11]", " 9, 10 ,11 "):
        assert load(rounds=text).rules.rounds == (9, 10, 11)
    assert load(rounds="11").rules.rounds == (11,) and load(decks=0).rules.decks == "auto"


@pytest.mark.parametrize("params, message", [
    ({"rounds": "9,x"}, r"rounds='9,x' is not allowed: give round numbers 1\.\.11 separated by ',' or ';'"),
    ({"rounds": "3,2"}, r"rounds=\[3, 2\] is not allowed: it must be strictly increasing"),
    ({"rounds": "12"}, r"rounds=\[12\] is not allowed: use an integer 1\.\.11"),
    ({"aces": "high"}, r"aces='high' is not allowed: use one of \['low', 'high_or_low'\]"),
    ({"decks": -1}, r"decks=-1 is not allowed: use 0 \(auto"),
    ({"decks": 65}, r"decks=65 is not allowed: use 0 \(auto: .*\) or a number of decks from 1 to 64$"),
    ({"num_players": 9}, r"num_players=9 is not allowed: use an integer 2\.\.8"),
    ({"max_turns_per_round": 0}, r"max_turns_per_round=0 is not allowed: use an integer >= 1"),
])
def test_bad_parameters_name_the_problem(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        osg.ThreeThirteenGame(params)
    with pytest.raises(Exception, match=message):  # through pyspiel the same message comes back
        pyspiel.load_game(NAME, params)


def test_bounds_come_from_the_rules() -> None:
    game = load(num_players=3, rounds="1,2")
    # the 3 and 4 priciest cards of two decks (all 10s), per player; 2 * 3 + 2 turns a round
    assert (game.min_utility(), game.max_utility()) == (-0.7, 0.7)
    assert game.max_game_length() == 2 * 2 * (200 + 3 - 1)
    high = load(aces="high_or_low", rounds="11")
    assert high.max_utility() == pytest.approx((4 * 15 + 9 * 10) / 100)  # four aces at 15, then 10s
    assert load().max_game_length() == 11 * 2 * 201


# ------------------------------------------------------------------ OpenSpiel's own checks

@pytest.mark.parametrize("params, sims", [
    ({}, 1),                                               # 2 players, every round, once
    ({"num_players": 3, "rounds": "1,2,11"}, 2),
    ({"num_players": 4, "rounds": "1,11"}, 1),
    ({"num_players": 3, "aces": "high_or_low", "rounds": "9,10,11", "decks": 3}, 1),
    ({"rounds": "4", "discard_drawn_discard": True, "meld_needs_natural": True, "max_turns_per_round": 30}, 4),
])
def test_random_sim_test(params: dict, sims: int) -> None:
    pyspiel.random_sim_test(load(**params), num_sims=sims, serialize=True, verbose=False)


def test_chance_outcomes_are_card_types_by_copies_left() -> None:
    game = load(num_players=3, rounds="2")  # two decks: two copies of every card
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
    assert state.action_to_string(0) == "first dealer player_0"
    state.apply_action(1)
    outcomes = dict(state.chance_outcomes())
    assert len(outcomes) == 52 and outcomes[parse_card("7H")] == pytest.approx(2 / 104)
    assert state.action_to_string(parse_card("7H")) == "deal 7H to player_2"
    state.apply_action(parse_card("7H"))
    assert dict(state.chance_outcomes())[parse_card("7H")] == pytest.approx(1 / 103)
    for _ in range(3 * hand_size(2) - 1):
        state.apply_action(state.chance_outcomes()[0][0])
    assert state.is_chance_node() and state.action_to_string(parse_card("KS")) == "turn up KS"
    state.apply_action(parse_card("KS"))
    assert state.current_player() == 2
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["draw stock", "take KS"]
    state.apply_action(DRAW_STOCK)
    assert state.is_chance_node() and sum(p for _, p in state.chance_outcomes()) == pytest.approx(1.0)
    assert state.action_to_string(parse_card("QD")) == "player_2 draws QD"
    state.apply_action(parse_card("QD"))
    assert state.game_state.hands[2][-1] == parse_card("QD")
    assert state.action_to_string(2 + parse_card("QD")) == "discard QD"


def test_a_draw_from_an_empty_stock_chooses_among_the_cards_reshuffled() -> None:
    game = load(rounds="11", max_turns_per_round=150)
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    while not state.data.refills:
        play(state, rng, steps=1, stock_bias=1.0)
        d = state.data
        if d.pending_draw and not state.game_state.stock:
            below = Counter(state.game_state.discard_pile[:-1])
            assert {c: p * sum(below.values()) for c, p in state.chance_outcomes()} == pytest.approx(dict(below))
    turn, cards = state.data.refills[0]
    assert turn == len(state.data.source) - 1 and state.game_state.hands[state.current_player()][-1] in cards


def test_illegal_moves_and_outcomes_name_the_legal_ones() -> None:
    state = load().new_initial_state()
    with pytest.raises(ValueError, match=r"dealer=5 is not a seat: use 0\.\.1"):
        state.apply_action(5)
    state.apply_action(0)
    state.apply_action(parse_card("8C"))
    with pytest.raises(ValueError, match=r"card 7 \(8C\) is not in the stock: deal one of AC 2C 3C 4C 5C 6C 7C 9C"):
        state.apply_action(parse_card("8C"))
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    with pytest.raises(ValueError, match=r"illegal action 30 at round 1 turn 0 .*: legal actions are \[0, 1\]"):
        state.apply_action(30)
    state.apply_action(TAKE_DISCARD)
    with pytest.raises(ValueError, match=r"illegal action 0 \(draw stock\) at .*: legal actions are \[\d+, \d+, \d+\]"):
        state.apply_action(DRAW_STOCK)


def test_returns_are_the_relative_rewards_summed_and_zero_sum() -> None:
    for n in (2, 3, 4):
        state = play(load(num_players=n, rounds="1,2").new_initial_state(), np.random.default_rng(n))
        scores = state.game_state.scores
        integer_numerators = [sum(scores) - n * s for s in scores]
        assert sum(integer_numerators) == 0
        assert state.returns() == [x / ((n - 1) * 100) for x in integer_numerators]
        assert abs(sum(state.returns())) < 1e-12
    mid = play(load(rounds="1,2").new_initial_state(), np.random.default_rng(0), steps=40)
    assert not mid.is_terminal() and mid.returns() == [0.0, 0.0]


# ------------------------------------------------------------------ same game as the AEC env

def aec_script(num_players: int, seed: int, stock_bias: float, **rules):
    """Play the AEC env at random; record its cards as chance outcomes, hands, points, rewards."""
    env = three_thirteen_v0.raw_env(num_players=num_players, **rules)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    gs = env.game_state

    def deal_events():
        order = [(gs.dealer + 1 + i) % num_players for i in range(num_players)]
        cards = [gs.hands[s][j] for j in range(hand_size(gs.round_number)) for s in order]
        return cards + [gs.discard_pile[-1]]

    events, hands, totals = [gs.dealer, *deal_events()], [], Counter()
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat, rounds_done = gs.current_player, len(gs.round_results)
        legal = np.flatnonzero(obs["action_mask"])
        action = DRAW_STOCK if DRAW_STOCK in legal and rng.random() < stock_bias else int(rng.choice(legal))
        env.step(action)
        totals.update(env.rewards)
        events.append(action)
        if action == DRAW_STOCK:
            events.append(gs.hands[seat][-1])
        ended = len(gs.round_results) > rounds_done
        hands.append([sorted(h) for h in (gs.round_results[-1].hands if ended else gs.hands)])
        if ended and not gs.game_over:
            events.extend(deal_events())
    returns = [totals[f"player_{i}"] for i in range(num_players)]
    return events, hands, [r.points for r in gs.round_results], returns


@pytest.mark.parametrize("num_players, seed, stock_bias, rules", [
    (2, 0, 0.0, {}),
    (3, 1, 0.0, {"rounds": (1, 5, 9)}),
    (3, 2, 0.95, {"rounds": (11,), "max_turns_per_round": 300}),  # long rounds: reshuffles
    (4, 3, 0.5, {"rounds": (2, 3), "aces": "high_or_low"}),
])
def test_same_cards_and_actions_as_the_aec_env_give_the_same_game(num_players, seed, stock_bias, rules) -> None:
    events, hands, points, returns = aec_script(num_players, seed, stock_bias, **rules)
    params = {k: (",".join(map(str, v)) if k == "rounds" else v) for k, v in rules.items()}
    state = load(num_players=num_players, **params).new_initial_state()
    decision, refills = 0, 0
    for action in events:
        card_drawn = state.data.pending_draw  # this chance node gives the card of a stock draw
        player = state.current_player()
        rounds_done = len(state.game_state.round_results) if state.game_state else 0
        state.apply_action(action)
        refills += card_drawn and bool(state.data.refills) and state.data.refills[-1][0] == len(state.data.source) - 1
        if card_drawn or (player >= 0 and action != DRAW_STOCK):  # a decision is complete
            gs = state.game_state
            now = gs.round_results[-1].hands if len(gs.round_results) > rounds_done else gs.hands
            assert [sorted(h) for h in now] == hands[decision], f"after decision {decision}"
            decision += 1
    assert decision == len(hands) and state.is_terminal()
    assert [r.points for r in state.game_state.round_results] == points
    assert state.returns() == pytest.approx(returns, abs=1e-12)
    if stock_bias > 0.9:
        assert refills, "the test did not reach a reshuffle"
