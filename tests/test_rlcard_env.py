"""``rlcard.make("three-thirteen")``: RLCard's env conventions, our rules, RLCard's agents and tournament on it."""

from __future__ import annotations

import random
from collections import OrderedDict

import numpy as np
import pytest

rlcard = pytest.importorskip("rlcard")

import tt_env.rlcard  # noqa: E402,F401  (registers three-thirteen)
from rlcard.agents import DQNAgent, NFSPAgent, RandomAgent  # noqa: E402
from rlcard.utils import reorganize, tournament  # noqa: E402

from tt_env import three_thirteen_v0  # noqa: E402
from tt_env.actions import action_name  # noqa: E402
from tt_env.engine.rules import option_names  # noqa: E402
from tt_env.observation import encode, observation_size  # noqa: E402

QUICK = {"game_rounds": [1, 2], "game_max_turns_per_round": 30}


def make(**config):
    return rlcard.make("three-thirteen", config=config)


def test_registered_with_rlcard_with_its_shapes() -> None:
    env = make(seed=0)
    assert (env.name, env.num_players, env.num_actions) == ("three-thirteen", 2, 54)
    assert env.state_shape == [[294], [294]] and env.action_shape == [None, None]
    env3 = make(game_num_players=3)
    assert env3.num_players == 3 and env3.state_shape == [[observation_size(3)]] * 3
    import importlib

    importlib.reload(tt_env.rlcard)  # importing again does not register twice
    assert rlcard.make("three-thirteen").num_players == 2


def test_every_rule_option_is_a_config_key() -> None:
    assert tt_env.rlcard.allowed_config_keys() == ["seed", "allow_step_back"] + [f"game_{o}" for o in option_names()]
    env = make(game_num_players=4, game_decks=3, game_aces="high_or_low", game_rounds=[9, 11],
               game_discard_drawn_discard=True, game_max_turns_per_round=50, game_meld_needs_natural=True)
    rules = env.game.rules
    assert (rules.num_players, rules.decks, rules.aces, rules.rounds) == (4, 3, "high_or_low", (9, 11))
    assert rules.discard_drawn_discard and rules.meld_needs_natural and rules.max_turns_per_round == 50


@pytest.mark.parametrize(("config", "message"), [
    ({"game_foo": 1}, "unknown config key(s) ['game_foo']"),
    ({"num_players": 3}, "allowed are ['seed', 'allow_step_back', 'game_num_players'"),
    ({"game_aces": "sometimes"}, "aces='sometimes' is not allowed"),
    ({"game_num_players": 9}, "num_players"),
    ({"allow_step_back": "yes"}, "allow_step_back='yes' is not allowed"),
])
def test_bad_config_names_the_problem(config: dict, message: str) -> None:
    with pytest.raises(ValueError) as err:
        make(**config)
    assert message in str(err.value)


def test_state_is_our_observation_mask_and_names() -> None:
    env = make(seed=3)
    state, player = env.reset()
    gs = env.game.state
    assert player == gs.current_player
    np.testing.assert_array_equal(state["obs"], encode(gs, player))
    assert state["obs"].dtype == np.float32 and state["raw_obs"] is state["obs"]
    assert isinstance(state["legal_actions"], OrderedDict) and set(state["legal_actions"].values()) == {None}
    assert list(state["legal_actions"]) == [0, 1]
    assert state["raw_legal_actions"] == ["draw stock", "take discard"]
    state, _ = env.step(1)  # take the discard: its card type may not go straight back
    taken = gs.taken_this_turn
    assert 2 + taken not in state["legal_actions"]
    assert state["raw_legal_actions"] == [action_name(a) for a in state["legal_actions"]]
    assert env.get_state(1 - player)["legal_actions"] == OrderedDict()  # not on move: nothing is legal


@pytest.mark.parametrize(("num_players", "config"), [
    (2, {}), (2, QUICK), (3, {"game_rounds": [10, 11], "game_aces": "high_or_low"}),
    (4, {"game_rounds": [3], "game_decks": 3, "game_discard_drawn_discard": True, "game_meld_needs_natural": True}),
])
def test_the_same_game_as_the_aec_env_for_the_same_seed_and_actions(num_players: int, config: dict) -> None:
    env = make(seed=num_players, game_num_players=num_players, **config)
    state, player = env.reset()
    options = {k[5:]: v for k, v in config.items()}
    aec = three_thirteen_v0.raw_env(num_players=num_players, **options)
    aec.reset(seed=env.game.game_seed)
    returns = np.zeros(num_players)
    rng = np.random.default_rng(num_players)
    while not env.is_over():
        agent = aec.agent_selection
        assert agent == f"player_{player}" == f"player_{env.get_player_id()}"
        seen = aec.observe(agent)
        np.testing.assert_array_equal(state["obs"], seen["observation"])
        assert list(state["legal_actions"]) == np.flatnonzero(seen["action_mask"]).tolist()
        other = (player + 1) % num_players
        np.testing.assert_array_equal(env.get_state(other)["obs"], aec.observe(f"player_{other}")["observation"])
        action = int(rng.choice(list(state["legal_actions"])))
        state, player = env.step(action)
        aec.step(action)
        returns += [aec.rewards[f"player_{i}"] for i in range(num_players)]
    assert all(aec.terminations.values())
    payoffs = env.get_payoffs()
    np.testing.assert_allclose(payoffs, returns, atol=1e-9)
    assert abs(payoffs.sum()) < 1e-9
    assert env.game.state.scores == aec.game_state.scores


def _observations(seed: int, noise: int) -> list[bytes]:
    """RLCard's determinism check: the same seed gives the same game whatever the global generators do."""
    env = make(seed=seed, **QUICK)
    random.seed(noise)
    np.random.seed(noise)
    state, _ = env.reset()
    out = []
    for step in range(200):
        if env.is_over():
            break
        np.random.normal(size=noise)
        legal = list(state["legal_actions"])
        state, _ = env.step(legal[step % len(legal)])
        out.append(state["obs"].tobytes())
    return out


def test_a_seeded_env_is_deterministic() -> None:
    assert _observations(7, 1) == _observations(7, 50)
    assert _observations(7, 1) != _observations(8, 1)


def test_step_back_undoes_exactly() -> None:
    env = make(seed=1, allow_step_back=True, **QUICK)
    state, player = env.reset()
    assert env.step_back() is False  # nothing to undo at the root
    history = [(state["obs"].copy(), player, list(state["legal_actions"]))]
    rng = np.random.default_rng(0)
    for _ in range(40):
        state, player = env.step(int(rng.choice(list(state["legal_actions"]))))
        history.append((state["obs"].copy(), player, list(state["legal_actions"])))
    for obs, who, legal in reversed(history[:-1]):
        state, player = env.step_back()
        np.testing.assert_array_equal(state["obs"], obs)
        assert (player, list(state["legal_actions"])) == (who, legal)
    with pytest.raises(Exception, match="allow_step_back=True"):
        make(seed=1).step_back()


def test_illegal_and_raw_actions() -> None:
    env = make(seed=2)
    state, _ = env.reset()
    with pytest.raises(ValueError, match=r"legal actions are \[0, 1\]"):
        env.step(5)
    with pytest.raises(TypeError, match="not an action id"):
        env.step(1.0)
    state, _ = env.step("take discard", raw_action=True)
    name = state["raw_legal_actions"][0]
    state, _ = env.step(name, raw_action=True)
    assert env.action_recorder[-1][1] == name
    with pytest.raises(ValueError, match="unknown raw action 'discard XX'"):
        env.step("discard XX", raw_action=True)


def test_perfect_information_has_every_card() -> None:
    env = make(seed=4)
    env.reset()
    info = env.get_perfect_information()
    cards = sorted([c for hand in info["hands"] for c in hand] + info["stock"] + info["discard_pile"])
    assert cards == list(range(52))
    assert info["game_seed"] == env.game.game_seed and info["phase"] == "draw"
    state = env.game.state
    assert (info["round_number"], info["dealer"], info["current_player"], info["went_out"]) == (
        state.round_number, state.dealer, state.current_player, state.went_out)
    assert info["scores"] == list(state.scores) and info["legal_actions"] == env.game.get_legal_actions()


def test_random_agents_run_and_tournament() -> None:
    env = make(seed=5, **QUICK)
    env.set_agents([RandomAgent(env.num_actions) for _ in range(env.num_players)])
    trajectories, payoffs = env.run(is_training=False)
    assert len(trajectories) == 2 and abs(sum(payoffs)) < 1e-9
    scores = env.game.state.scores
    assert payoffs[0] == pytest.approx((scores[1] - scores[0]) / 100)
    averages = tournament(env, 4)
    assert len(averages) == 2 and abs(sum(averages)) < 1e-9


def test_rlcard_dqn_and_nfsp_train_a_few_steps() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    env = make(seed=6, **QUICK)
    dqn = DQNAgent(num_actions=env.num_actions, state_shape=env.state_shape[0], mlp_layers=[32],
                   replay_memory_init_size=50, batch_size=16, train_every=5, device="cpu")
    nfsp = NFSPAgent(num_actions=env.num_actions, state_shape=env.state_shape[0], hidden_layers_sizes=[32],
                     q_mlp_layers=[32], min_buffer_size_to_learn=50, batch_size=16, device="cpu")
    env.set_agents([dqn, nfsp])
    for _ in range(2):
        trajectories, payoffs = env.run(is_training=True)
        seats = reorganize(trajectories, payoffs)
        for transition in seats[0]:
            dqn.feed(transition)
        for transition in seats[1]:
            nfsp.feed(transition)
    assert dqn.total_t > 50 and nfsp.total_t > 50
    action, info = dqn.eval_step(env.reset()[0])
    assert action in (0, 1) and set(info["values"]) <= {"draw stock", "take discard"}
    assert len(tournament(env, 1)) == 2


def test_rlcard_dmc_agents_play_and_learn() -> None:
    torch = pytest.importorskip("torch")
    from rlcard.agents.dmc_agent.model import DMCModel
    from rlcard.agents.dmc_agent.trainer import compute_loss

    torch.manual_seed(0)
    env = make(seed=8, **QUICK)
    model = DMCModel(env.state_shape, [[env.num_actions]] * 2, mlp_layers=[32, 32], device="cpu")
    env.set_agents(model.get_agents())
    trajectories, payoffs = env.run(is_training=True)
    state = trajectories[0][0]
    features = np.stack([env.get_action_feature(a) for a in state["legal_actions"]])
    agent = model.get_agent(0)
    values = agent.forward(torch.as_tensor(np.repeat(state["obs"][None], len(features), 0)),
                           torch.as_tensor(features, dtype=torch.float32))
    loss = compute_loss(values, torch.full_like(values, float(payoffs[0])))
    loss.backward()
    assert torch.isfinite(loss) and len(tournament(env, 1)) == 2


def test_readme_example_runs() -> None:
    import contextlib
    import io
    import re

    from doc_pages import DOCS, python_blocks

    # the example of the RLCard page (docs/rlcard.md; in the README before issue 24)
    block = next(b for _, b in python_blocks([DOCS / "rlcard.md"]) if "three-thirteen" in b)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "docs/rlcard.md:example", "exec"), {})
    payoffs = [float(x) for x in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", out.getvalue())]
    assert len(payoffs) == 2 and abs(sum(payoffs)) < 1e-9
