"""``python_three_thirteen``: OpenSpiel's algorithms (MCTS, ISMCTS, RL) run on it, and our agents as OpenSpiel bots."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from tt_env.observation import get_layout  # noqa: E402
from tt_env.openspiel.bot import make_bot  # noqa: E402

from openspiel_play import load, play  # noqa: E402


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
