"""``python_three_thirteen``: our game in OpenSpiel, its checks, its algorithms, our agents as bots."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.observation import make_observation  # noqa: E402

import tt_env.openspiel.game as osg  # noqa: E402  (registers the game)
from tt_env import three_thirteen_v0  # noqa: E402
from tt_env.engine.cards import parse_card  # noqa: E402
from tt_env.engine.game import DRAW_STOCK, TAKE_DISCARD  # noqa: E402
from tt_env.engine.rules import Rules, hand_size, option_names  # noqa: E402
from tt_env.observation import encode, get_layout  # noqa: E402
from tt_env.openspiel.bot import make_bot  # noqa: E402

NAME = "python_three_thirteen"


def load(**params):
    return pyspiel.load_game(NAME, params)


def play(state, rng: np.random.Generator, steps: int | None = None, stock_bias: float = 0.0):
    """Random play (chance by its probabilities) until the end or for ``steps`` nodes; returns state."""
    done = 0
    while not state.is_terminal() and (steps is None or done < steps):
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            legal = state.legal_actions()
            take_stock = DRAW_STOCK in legal and rng.random() < stock_bias
            state.apply_action(DRAW_STOCK if take_stock else int(rng.choice(legal)))
        done += 1
    return state


def replay_round(game, data):
    """A fresh one-round game fed the round logged in ``data``: it must be reachable as logged."""
    state = game.new_initial_state()
    state.apply_action(data.engine.dealer)
    for card in data.dealt:
        state.apply_action(card)
    for t, source in enumerate(data.source):
        state.apply_action(DRAW_STOCK if source == 0 else TAKE_DISCARD)
        if source == 0 and data.drawn[t] >= 0:
            state.apply_action(data.drawn[t])
        if data.discarded[t] >= 0:
            state.apply_action(2 + data.discarded[t])
    return state


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


# ------------------------------------------------------------------ what each player may know

def swap_hidden_card(state, opponent: int):
    """A clone where a card ``opponent`` was dealt and still holds trades places with a stock card."""
    other = state.clone()
    d = other.data
    s = d.engine
    n = d.rules.num_players
    start = (opponent - s.dealer - 1) % n
    places = range(start, n * hand_size(s.round_number), n)
    hidden = Counter(s.hands[opponent]) - Counter(s.known_taken[opponent])
    k = next(k for k in places if hidden[d.dealt[k]] and d.dealt[k] not in d.discarded)
    card, new = d.dealt[k], next(c for c in s.stock if c != d.dealt[k])
    s.hands[opponent][s.hands[opponent].index(card)] = new
    s.stock[s.stock.index(new)] = card
    d.dealt[k] = new
    return other


@pytest.mark.parametrize("num_players", [2, 3])
def test_hidden_cards_change_nothing_a_player_sees(num_players: int) -> None:
    game = load(num_players=num_players, rounds="9")
    state = play(game.new_initial_state(), np.random.default_rng(5), steps=60)
    opponent = (state.current_player() + 1) % num_players
    other = swap_hidden_card(state, opponent)
    assert str(other) != str(state)
    for p in range(num_players):
        same = [state.information_state_tensor(p) == other.information_state_tensor(p),
                state.information_state_string(p) == other.information_state_string(p),
                state.observation_tensor(p) == other.observation_tensor(p),
                state.observation_string(p) == other.observation_string(p)]
        assert all(same) if p != opponent else not any(same), f"player {p}: {same}"


def test_the_information_state_keeps_the_players_own_draws_in_order() -> None:
    game = load(rounds="5")
    state = play(game.new_initial_state(), np.random.default_rng(1), steps=40, stock_bias=1.0)
    d = state.data
    view = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    for p in (0, 1):
        view.set_from(state, p)
        for t, card in enumerate(d.drawn):
            shown = view.dict["drawn"][t]
            if d.actor(t) == p and card >= 0:
                assert shown[card] == 1.0 and shown.sum() == 1.0
            elif d.source[t] == 0:
                assert shown.sum() == 0.0  # an opponent's stock draw stays hidden
        assert np.flatnonzero(view.dict["draw_source"][:len(d.source), 0]).tolist() == \
            [t for t, s in enumerate(d.source) if s == 0]
        assert view.tensor.tolist() == state.information_state_tensor(p)


def test_the_observation_is_the_env_observation() -> None:
    game = load(num_players=3, rounds="3")
    state = play(game.new_initial_state(), np.random.default_rng(2), steps=50)
    observation = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    for p in range(3):
        observation.set_from(state, p)
        assert np.array_equal(observation.tensor, encode(state.game_state, p))
        assert np.array_equal(np.asarray(state.observation_tensor(p), np.float32), encode(state.game_state, p))
    assert list(observation.dict) == [name for name, _, _ in get_layout(3).pieces]
    with pytest.raises(ValueError, match="python_three_thirteen observes for one player"):
        make_observation(game, pyspiel.IIGObservationType(perfect_recall=False,
                                                          private_info=pyspiel.PrivateInfoType.ALL_PLAYERS))


# ------------------------------------------------------------------ clone, serialize, resample

def test_clone_and_serialize_round_trip() -> None:
    game = load(num_players=3, rounds="1,11", decks=3)
    state = play(game.new_initial_state(), np.random.default_rng(4), steps=90)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game) and "rounds=[1;11]" in str(game) and "decks=3" in str(game)
    for copy in (state.clone(), state2):
        assert str(copy) == str(state) and copy.history() == state.history()
        assert copy.information_state_string(1) == state.information_state_string(1)
        end_a = play(copy, np.random.default_rng(9))
        end_b = play(state.clone(), np.random.default_rng(9))
        assert end_a.returns() == end_b.returns() and end_a.history() == end_b.history()
    single = load(rounds="11")
    assert str(pyspiel.deserialize_game_and_state(
        pyspiel.serialize_game_and_state(single, single.new_initial_state()))[0]) == str(single)


@pytest.mark.parametrize("params, stock_bias, every", [
    ({"rounds": "1"}, 0.0, 3),
    ({"num_players": 3, "rounds": "2", "max_turns_per_round": 300}, 0.0, 5),
    ({"rounds": "11", "max_turns_per_round": 150}, 0.95, 9),            # reshuffles
    ({"num_players": 4, "rounds": "11", "max_turns_per_round": 150}, 0.95, 11),  # two decks
])
def test_resample_from_infostate_keeps_what_the_player_knows(params: dict, stock_bias: float, every: int) -> None:
    """OpenSpiel's ResampleInfostateTest, plus: the resampled round replays from scratch."""
    game = load(**params)
    n = game.num_players()
    rng = np.random.default_rng(11)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    state, checked, differed, refills = game.new_initial_state(), 0, 0, 0
    while not state.is_terminal():
        if len(state.history()) % every == 1 and not state.is_chance_node():
            for p in range(n):
                other = state.resample_from_infostate(p, sampler)
                assert other.information_state_string(p) == state.information_state_string(p)
                assert other.information_state_tensor(p) == state.information_state_tensor(p)
                assert other.observation_tensor(p) == state.observation_tensor(p)
                assert other.current_player() == state.current_player()
                replayed = replay_round(game, other.data)
                assert str(replayed) == str(other)
                for q in range(n):
                    assert replayed.information_state_string(q) == other.information_state_string(q)
                differed += str(other) != str(state)
                checked += 1
            refills = max(refills, len(state.data.refills))
        play(state, rng, steps=1, stock_bias=stock_bias)
    assert checked > 5 and differed > checked // 2
    if stock_bias:
        assert refills, "the test did not reach a reshuffle"


# ------------------------------------------------------------------ OpenSpiel's algorithms run on it

def test_ismcts_and_mcts_bots_choose_legal_actions() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = load(rounds="1")
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bots = {"ismcts": ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=15,
                                       random_state=np.random.RandomState(1)),
            "mcts": mcts.MCTSBot(game, 2.0, 15, evaluator, random_state=np.random.RandomState(2))}
    for name, bot in bots.items():
        state, rng, moves = game.new_initial_state(), np.random.default_rng(3), 0
        while not state.is_terminal() and moves < 6:
            if state.current_player() == 0:
                action = bot.step(state)
                assert action in state.legal_actions(), name
                state.apply_action(action)
                moves += 1
            else:
                play(state, rng, steps=1)
        assert moves >= 2, name


@pytest.mark.parametrize("agent", ["dqn", "policy_gradient"])
def test_rl_environment_trains_an_agent_for_a_few_episodes(agent: str) -> None:
    pytest.importorskip("torch")
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn, policy_gradient

    game = load(rounds="1")
    env = rl_environment.Environment(game, observation_type=rl_environment.ObservationType.OBSERVATION)
    env.seed(0)
    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    assert size == get_layout(2).size and actions == 54
    if agent == "dqn":
        agents = [dqn.DQN(p, size, actions, hidden_layers_sizes=(16,), batch_size=8, min_buffer_size_to_learn=16,
                          learn_every=8, replay_buffer_capacity=500) for p in range(2)]
    else:
        agents = [policy_gradient.PolicyGradient(p, size, actions, hidden_layers_sizes=(16,), batch_size=2)
                  for p in range(2)]
    episodes = 0
    for _ in range(3):
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            action = agents[player].step(time_step).action
            assert action in time_step.observations["legal_actions"][player]
            time_step = env.step([action])
        for a in agents:
            a.step(time_step)
        assert sum(time_step.rewards) == pytest.approx(0.0, abs=1e-12)
        episodes += 1
    assert episodes == 3


# ------------------------------------------------------------------ our agents as OpenSpiel bots

def test_our_agents_play_through_evaluate_bots() -> None:
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    game = load(num_players=3, rounds="1,2")
    specs = ["expert-v0", "greedy-v0", "random-v0"]
    bots = [make_bot(spec, game, seat, seed=seat) for seat, spec in enumerate(specs)]
    rng = np.random.RandomState(0)
    results = [evaluate_bots(game.new_initial_state(), bots, rng) for _ in range(4)]
    assert all(abs(sum(r)) < 1e-12 for r in results)
    assert np.mean([r[0] for r in results]) > np.mean([r[2] for r in results])  # expert beats random


def test_a_checkpoint_agent_plays_as_a_bot() -> None:
    pytest.importorskip("torch")
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    game = load(rounds="1,2")
    bots = [make_bot("ppo-2p-v0", game, 0, seed=0), make_bot("models/checkpoints/ppo-2p-v0.pt", game, 1, seed=1)]
    returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(1))
    assert len(returns) == 2 and abs(sum(returns)) < 1e-12


def test_the_ismcts_agent_plays_as_a_bot() -> None:
    """``ismcts-v0`` by name, and as an agent object with a small budget."""
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    from tt_env.agents.ismcts import ISMCTSAgent

    game = load(rounds="1,2")
    small = ISMCTSAgent(game.rules, worlds=4, min_worlds=2)
    bots = [make_bot(small, game, 0, seed=0), make_bot("ismcts-v0", game, 1, seed=1)]
    returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(2))
    assert len(returns) == 2 and abs(sum(returns)) < 1e-12
    assert bots[0].agent.name == bots[1].agent.name == "ismcts-v0"


def test_readme_example_runs() -> None:
    import contextlib
    import io

    from doc_pages import DOCS, python_blocks

    # the example of the OpenSpiel page (docs/openspiel.md; in the README before issue 24)
    block = next(b for _, b in python_blocks([DOCS / "openspiel.md"]) if "python_three_thirteen" in b)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "docs/openspiel.md:example", "exec"), {})
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("totals [")


def test_make_bot_names_the_problem() -> None:
    game = load()
    with pytest.raises(ValueError, match=r"player_id=2 is not a seat: use 0\.\.1"):
        make_bot("random-v0", game, 2)
    with pytest.raises(ValueError, match="our agents play 'python_three_thirteen' only, not 'gin_rummy'"):
        make_bot("random-v0", pyspiel.load_game("gin_rummy"), 0)
    with pytest.raises(ValueError, match="unknown agent 'nobody-v0'"):
        make_bot("nobody-v0", game, 0)
    state = play(game.new_initial_state(), np.random.default_rng(0), steps=10)
    bot = make_bot("random-v0", game, 1 - state.current_player())
    with pytest.raises(ValueError, match=r"random-v0 plays seat \d, but it is \d's move"):
        bot.step(state)


def test_state_json_round_trips_and_refuses_bad_text():
    """The safe text format: JSON of the parameters and history, replayed with every action checked."""
    from tt_env.openspiel.game import state_from_json, state_to_json

    game = pyspiel.load_game("python_three_thirteen", {"num_players": 3, "rounds": "10,11"})
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    while not state.is_terminal() and len(state.history()) < 300:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
    text = state_to_json(state)
    _, back = state_from_json(text)
    assert back.history() == state.history() and str(back) == str(state)
    assert back.information_state_string(1) == state.information_state_string(1)
    data = json.loads(text)
    data["history"][-1] = 9999
    with pytest.raises(ValueError, match=r"history\[\d+\] = 9999 is not legal"):
        state_from_json(json.dumps(data))
    with pytest.raises(ValueError, match="not a python_three_thirteen-state/1 text"):
        state_from_json("cos\nsystem\n(S'echo hi'\ntR.")  # a pickle payload is just bad text here
    with pytest.raises(ValueError, match="not a python_three_thirteen-state/1"):
        state_from_json(json.dumps({"format": "other"}))
