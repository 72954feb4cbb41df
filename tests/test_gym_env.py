"""The single-agent Gymnasium environment: checkers, rewards, seats, illegal actions, vector envs, SB3."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import tt_env  # noqa: F401  (registers the id)
from tt_env.agents import GreedyAgent, RandomAgent, make_agent
from tt_env.engine.rules import Rules
from tt_env.gym_env import ThreeThirteenGymEnv
from tt_env.three_thirteen_v0 import ILLEGAL_ACTION_REWARD, REWARD_SCALE

ENV_ID = "tt_env/ThreeThirteen-v0"
SHORT = {"rounds": (1, 2)}


def _play(env: ThreeThirteenGymEnv, seed: int, rng: np.random.Generator) -> tuple[float, dict, int]:
    """A whole episode of masked random actions: (total reward, last info, steps)."""
    _, info = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, reward, done, truncated, info = env.step(action)
        assert not truncated
        total += reward
        steps += 1
    return total, info, steps


def test_gymnasium_check_env() -> None:
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(ENV_ID, opponents=["greedy-v0"])
    check_env(env.unwrapped, skip_render_check=True)


def test_sb3_check_env() -> None:
    from stable_baselines3.common.env_checker import check_env

    check_env(ThreeThirteenGymEnv(opponents="random-v0", **SHORT), warn=True)


@pytest.mark.parametrize("reward_mode", ["relative", "penalty", "win"])
def test_rewards_add_up_to_the_game_result(reward_mode: str) -> None:
    env = gymnasium.make(ENV_ID, opponents=["greedy-v0", "random-v0"], reward_mode=reward_mode,
                         seat="random", rounds=(1, 2, 3))
    rng = np.random.default_rng(1)
    for seed in range(3):
        total, info, _ = _play(env.unwrapped, seed, rng)
        scores, seat = info["final_scores"], info["seat"]
        own = scores[seat]
        others = [s for i, s in enumerate(scores) if i != seat]
        if reward_mode == "relative":
            expected = (np.mean(others) - own) / REWARD_SCALE
        elif reward_mode == "penalty":
            expected = -own / REWARD_SCALE
        else:
            low = min(scores)
            winners = sum(s == low for s in scores)
            expected = 0.0 if winners == 3 else (1 / winners if own == low else -1 / (3 - winners))
        assert total == pytest.approx(expected)


def test_a_game_the_opponents_end_before_the_learner_moves_is_not_an_episode() -> None:
    """A turn limit below the player count can end a whole game inside ``reset``: another game is
    dealt then, so every episode has a legal move first and its rewards add up to the result."""
    env = ThreeThirteenGymEnv(opponents=["random-v0"], num_players=5, seat=4, rounds=(1, 2), max_turns_per_round=1)
    rng = np.random.default_rng(0)
    for seed in range(12):
        _, info = env.reset(seed=seed)
        assert info["action_mask"].any() and not env.aec.game_state.game_over
        total, info, _ = _play(env, seed, rng)
        scores = info["final_scores"]
        own = scores[4]
        assert not info["illegal_action"]
        assert total == pytest.approx((np.mean(scores[:4]) - own) / REWARD_SCALE)


def test_opponents_as_objects_and_repeated() -> None:
    env = ThreeThirteenGymEnv(opponents=GreedyAgent(Rules(num_players=4)), num_players=4, **SHORT)
    assert len(env.opponents) == 3 and env.observation_space.shape == (107 * 4 + 80,)
    _play(env, 0, np.random.default_rng(0))
    env = ThreeThirteenGymEnv(opponents=[RandomAgent(Rules(num_players=3)), "greedy-v0"], **SHORT)
    assert env.rules.num_players == 3


@pytest.mark.parametrize("built, game, key", [
    ({}, {"num_players": 4}, "num_players"),
    ({"num_players": 3}, {"num_players": 3, "aces": "high_or_low"}, "aces"),
    ({"num_players": 3}, {"num_players": 3, "decks": 3}, "num_decks"),
    ({"num_players": 3}, {"num_players": 3, "meld_needs_natural": True}, "meld_needs_natural"),
])
def test_an_agent_object_built_for_other_rules_is_refused(built: dict, game: dict, key: str) -> None:
    """An agent object plays by the rules it was built with: other card values, decks or players
    would play the env's game wrongly without a word. Rounds may differ; turn limits may not
    (expert-v0 counts the turns left with its own)."""
    from tt_env.agents import ExpertAgent

    with pytest.raises(ValueError, match=rf"agent .* was built for {key}=.*, but the game has {key}="):
        ThreeThirteenGymEnv(opponents=ExpertAgent(Rules(**built)), **game)
    ThreeThirteenGymEnv(opponents=ExpertAgent(Rules(**game, max_turns_per_round=40)), rounds=(1, 2),
                        max_turns_per_round=40, **game)
    with pytest.raises(ValueError, match=r"was built for max_turns_per_round=200, but the game has max_turns_per_"):
        ThreeThirteenGymEnv(opponents=ExpertAgent(Rules(**game)), max_turns_per_round=40, **game)
    with pytest.raises(TypeError, match=r"rules=\{'num_players': 3\} is not a Rules: build one with"):
        make_agent("greedy-v0", {"num_players": 3})  # type: ignore[arg-type]


def test_seat_modes_and_seeded_replay() -> None:
    env = ThreeThirteenGymEnv(opponents="greedy-v0", seat="rotate", **SHORT)
    seats = []
    for i in range(4):
        _, info = env.reset(seed=5 if i == 0 else None)
        seats.append(info["seat"])
    assert seats == [0, 1, 0, 1]
    fixed = ThreeThirteenGymEnv(opponents="greedy-v0", seat=1, **SHORT)
    assert fixed.reset(seed=0)[1]["seat"] == 1
    a = _play(ThreeThirteenGymEnv(opponents="random-v0", seat="random", **SHORT), 7, np.random.default_rng(2))
    b = _play(ThreeThirteenGymEnv(opponents="random-v0", seat="random", **SHORT), 7, np.random.default_rng(2))
    assert a[0] == b[0] and a[2] == b[2] and a[1]["final_scores"] == b[1]["final_scores"]


def test_illegal_action_terminates_with_a_penalty() -> None:
    env = ThreeThirteenGymEnv(opponents="greedy-v0", **SHORT)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (ILLEGAL_ACTION_REWARD, True, False)
    assert info["illegal_action"] and not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset()
    _, reward, terminated, _, _ = env.step(99)
    assert reward == ILLEGAL_ACTION_REWARD and terminated


def test_illegal_action_raise_mode() -> None:
    env = ThreeThirteenGymEnv(opponents="greedy-v0", illegal_action="raise", **SHORT)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="legal actions"):
        env.step(illegal)


@pytest.mark.parametrize("kwargs, match", [
    (dict(opponents=[]), "at least one"),
    (dict(opponents=["greedy-v0"] * 2, num_players=4), "do not fit"),
    (dict(seat=2), "seat"),
    (dict(illegal_action="ignore"), "illegal_action"),
    (dict(reward_mode="score"), "reward_mode"),
    (dict(aces="sometimes"), "aces"),
    (dict(num_players=0), r"^num_players=0 is not allowed: use None \(one more than the opponents\) or an integer "
                          r"2\.\.8$"),  # (it blamed the seat: "use an int 0..-1")
    (dict(num_players=9), r"^num_players=9 is not allowed: use None"),
    (dict(opponents=None), r"^opponents=None is not allowed: give an agent or a list of them \(a registry name"),
    (dict(opponents=5), r"^opponents=5 is not allowed: give an agent or a list of them"),
])
def test_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ThreeThirteenGymEnv(**kwargs)


def _make():
    return gymnasium.make(ENV_ID, opponents=["greedy-v0"], rounds=(1,))


@pytest.mark.parametrize("vector", ["sync", "async"])
def test_gymnasium_vector_envs(vector: str) -> None:
    cls = gymnasium.vector.SyncVectorEnv if vector == "sync" else gymnasium.vector.AsyncVectorEnv
    envs = cls([_make, _make])
    try:
        obs, infos = envs.reset(seed=0)
        assert obs.shape == (2, 294)
        for _ in range(30):
            # an all-zero mask marks a finished episode: the next step resets it (action ignored)
            actions = np.array([(np.flatnonzero(m).tolist() or [0])[0] for m in infos["action_mask"]])
            obs, rewards, term, trunc, infos = envs.step(actions)
            assert rewards.shape == (2,)
    finally:
        envs.close()


def test_sb3_subproc_vec_env_and_maskable_ppo() -> None:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([lambda: ThreeThirteenGymEnv(opponents="greedy-v0", rounds=(1,)) for _ in range(2)])
    try:
        vec.reset()
        masks = get_action_masks(vec)
        assert masks.shape == (2, 54) and masks.dtype == bool
        assert np.stack(vec.env_method("action_masks")).any(axis=1).all()
        model = MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.set_logger(Logger(None, []))  # SB3's default logger makes a folder in /tmp at every learn()
        model.learn(total_timesteps=64)
        assert model.num_timesteps >= 64
    finally:
        vec.close()


def test_rules_object_gives_the_same_env_as_its_options() -> None:
    from tt_env.engine.rules import Rules

    rules = Rules(num_players=3, rounds=(1, 2, 3))
    options = {k: v for k, v in rules.to_dict().items() if k != "num_players"}

    def trajectory(**kwargs) -> list:
        env = gymnasium.make("tt_env/ThreeThirteen-v0", opponents=["greedy-v0"], seat="random", **kwargs)
        obs, info = env.reset(seed=5)
        rng, out = np.random.default_rng(0), [obs.tobytes()]
        for _ in range(150):
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            out.append((obs.tobytes(), reward))
            if terminated or truncated:
                obs, info = env.reset()
        assert env.unwrapped.rules == rules
        return out

    assert trajectory(rules=rules) == trajectory(num_players=3, **options)
    with pytest.raises(ValueError, match="not both"):
        ThreeThirteenGymEnv(rules=rules, rounds=[1])
    with pytest.raises(ValueError, match="does not match"):
        ThreeThirteenGymEnv(rules=rules, num_players=2)
    with pytest.raises(TypeError, match="not a Rules object"):
        ThreeThirteenGymEnv(rules={"num_players": 2})


def test_batched_agents_and_classes_are_refused_as_opponents_when_built() -> None:
    """A batched agent (or an agent class) failed only at the first opponent move, with a
    ``TypeError`` from inside; the batched env is the one that takes batched agents."""
    import enum

    from tt_env.batch.agents import BatchRandom

    with pytest.raises(ValueError, match=r"is a batched agent \(act\(observation, action_mask\) on whole batches\): "
                                         r"this env plays one table; .*vectorization_mode='vector_entry_point'"):
        ThreeThirteenGymEnv(opponents=BatchRandom(Rules()))
    with pytest.raises(ValueError, match=r"^opponent BatchRandom is a class, not an agent: give an agent object"):
        ThreeThirteenGymEnv(opponents=[BatchRandom])

    class Players(enum.IntEnum):
        THREE = 3

    assert ThreeThirteenGymEnv(num_players=Players.THREE).rules.num_players == 3  # (an int, as a seat may be)
