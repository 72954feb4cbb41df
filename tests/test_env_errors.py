"""The environments fail clearly: calls out of order, actions that are not integers, bad
seeds, numpy option values, the decks bound, and ``env(...)`` taking ``raw_env``'s arguments."""

from __future__ import annotations

import json
import pickle
import re
import warnings

import numpy as np
import pytest

from tt_env import three_thirteen_v0
from tt_env.engine import Rules
from tt_env.engine.game import DRAW_STOCK, NUM_ACTIONS, TAKE_DISCARD, legal_actions
from tt_env.engine.rules import MAX_DECKS
from tt_env.gym_env import ThreeThirteenGymEnv

ALLOWED = re.escape("use an int 0..53: a Python int, a numpy integer scalar or a 0-d numpy integer array")
NOT_INTEGERS = [True, False, 1.7, 1.0, "0", np.array([1.0]), np.array([1]), np.array(1.0), np.bool_(True), [0]]
INTEGERS = [TAKE_DISCARD, np.int64(TAKE_DISCARD), np.int32(TAKE_DISCARD), np.uint8(TAKE_DISCARD),
            np.array(TAKE_DISCARD), np.array(TAKE_DISCARD, dtype=np.int16)]
SHORT = dict(rounds=(1,), max_turns_per_round=4)


def _finish(env) -> None:
    """Play the game to its end with the first legal action, then step every done agent out."""
    for _agent in env.agent_iter():
        _obs, _rew, term, trunc, _info = env.last()
        env.step(None if term or trunc else legal_actions(env.unwrapped.game_state)[0])


# --------------------------------------------------------------------------- call order
@pytest.mark.parametrize("call", ["step", "observe", "last"])
def test_raw_env_before_reset_says_call_reset(call: str) -> None:
    env = three_thirteen_v0.raw_env()
    do = {"step": lambda: env.step(0), "observe": lambda: env.observe("player_0"), "last": env.last}[call]
    with pytest.raises(RuntimeError, match=rf"{call}\(\) called before reset\(\): call reset\(\) first"):
        do()


@pytest.mark.parametrize("call", ["step", "observe", "last"])
def test_wrapped_env_before_reset_says_reset(call: str) -> None:
    env = three_thirteen_v0.env()
    do = {"step": lambda: env.step(0), "observe": lambda: env.observe("player_0"), "last": env.last}[call]
    with pytest.raises((AssertionError, AttributeError), match="reset"):
        do()


def test_raw_env_after_the_game_is_over() -> None:
    env = three_thirteen_v0.raw_env(num_players=3, **SHORT)
    env.reset(seed=0)
    while not env.game_state.game_over:
        env.step(legal_actions(env.game_state)[0])
    assert all(env.terminations.values())
    with pytest.raises(ValueError, match=r"the game is over: player_\d is done .* only action is None.*reset\(\)"):
        env.step(DRAW_STOCK)
    for _ in range(3):
        env.step(None)
    assert env.agents == []
    with pytest.raises(RuntimeError, match=r"after the game is over .* call reset\(\)"):
        env.step(None)
    with pytest.raises(RuntimeError, match=r"after the game is over .* call reset\(\)"):
        env.last()
    env.reset(seed=1)
    assert len(env.agents) == 3 and env.last()[0]["action_mask"].any()


def test_wrapped_env_after_the_game_is_over_logs_a_warning_and_does_nothing(caplog) -> None:
    env = three_thirteen_v0.env(**SHORT)
    env.reset(seed=0)
    _finish(env)
    assert env.agents == []
    env.step(None)  # PettingZoo's OrderEnforcingWrapper: a logged warning, no error
    assert "Should reset() first" in caplog.text and env.agents == []


@pytest.mark.parametrize("make", [three_thirteen_v0.raw_env, three_thirteen_v0.env])
@pytest.mark.parametrize("agent", ["player_2", "player_10", "player", "bob", 0, None])
def test_observe_of_an_unknown_agent_names_the_agents(make, agent) -> None:
    env = make(num_players=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape("the agents are ['player_0', 'player_1']")):
        env.observe(agent)


def test_observe_still_works_for_every_agent_after_the_game() -> None:
    env = three_thirteen_v0.raw_env(**SHORT)
    env.reset(seed=0)
    _finish(env)
    for agent in env.possible_agents:
        assert not env.observe(agent)["action_mask"].any()


# --------------------------------------------------------------------------- actions
@pytest.mark.parametrize("make", [three_thirteen_v0.raw_env, three_thirteen_v0.env])
@pytest.mark.parametrize("action", NOT_INTEGERS, ids=repr)
def test_a_non_integer_action_raises_type_error_naming_the_allowed_values(make, action) -> None:
    env = make()
    env.reset(seed=0)
    before = env.unwrapped.game_state.to_dict()
    with pytest.raises(TypeError, match=ALLOWED):
        env.step(action)
    assert env.unwrapped.game_state.to_dict() == before and not any(env.terminations.values())


@pytest.mark.parametrize("make", [three_thirteen_v0.raw_env, three_thirteen_v0.env])
def test_none_at_a_live_agents_turn_raises_type_error(make) -> None:
    env = make()
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"action None at player_\d's turn: None is only for an agent that is done"):
        env.step(None)
    assert not any(env.terminations.values())


@pytest.mark.parametrize("make", [three_thirteen_v0.raw_env, three_thirteen_v0.env])
@pytest.mark.parametrize("action", INTEGERS, ids=repr)
def test_numpy_integer_scalars_and_0d_integer_arrays_are_accepted(make, action) -> None:
    env = make()
    env.reset(seed=0)
    top = env.unwrapped.game_state.discard_pile[-1]
    env.step(action)
    state = env.unwrapped.game_state
    assert state.hands[state.current_player][-1] == top and state.phase == 1


@pytest.mark.parametrize("action", [-1, NUM_ACTIONS, 10**6])
def test_wrapped_env_rejects_an_int_outside_the_action_space(action: int) -> None:
    env = three_thirteen_v0.env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"outside the action space: use an int 0..53"):
        env.step(action)


def test_wrapped_env_still_ends_the_game_on_a_masked_out_action(caplog) -> None:
    env = three_thirteen_v0.env()
    env.reset(seed=0)
    offender = env.agent_selection
    env.step(5)  # a discard in the draw phase: in range, masked out
    assert "illegal move" in caplog.text.lower()
    assert all(env.terminations.values()) and env.rewards[offender] == -1.0


@pytest.mark.parametrize("mode", ["terminate", "raise"])
@pytest.mark.parametrize("action", NOT_INTEGERS + [None], ids=repr)
def test_gym_env_non_integer_action_raises_type_error(mode: str, action) -> None:
    env = ThreeThirteenGymEnv(opponents="random-v0", illegal_action=mode, **SHORT)
    env.reset(seed=0)
    with pytest.raises(TypeError, match=ALLOWED):
        env.step(action)
    assert env.action_masks().any(), "the episode goes on"


@pytest.mark.parametrize("action", INTEGERS, ids=repr)
def test_gym_env_accepts_numpy_integer_actions(action) -> None:
    env = ThreeThirteenGymEnv(opponents="random-v0", seat=0, **SHORT)
    env.reset(seed=0)
    _obs, _reward, _term, _trunc, info = env.step(action)
    assert not info["illegal_action"]


def test_gym_env_step_before_reset_says_call_reset() -> None:
    env = ThreeThirteenGymEnv(opponents="random-v0")
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\): call reset\(\) first"):
        env.step(0)


# --------------------------------------------------------------------------- seeds
@pytest.mark.parametrize("seed", [-1, -(2**40), np.int64(-3)])
@pytest.mark.parametrize("make", [three_thirteen_v0.raw_env, three_thirteen_v0.env,
                                  lambda: ThreeThirteenGymEnv(opponents="random-v0")])
def test_a_negative_seed_is_rejected_naming_the_seed(make, seed) -> None:
    env = make()
    with pytest.raises(ValueError, match=re.escape(f"seed={seed!r} is not allowed") + ".*must not be negative"):
        env.reset(seed=seed)


@pytest.mark.parametrize("seed", [1.5, "7", True, [], [1, -2]], ids=repr)
def test_a_seed_of_the_wrong_kind_is_rejected_naming_it(seed) -> None:
    env = three_thirteen_v0.raw_env()
    with pytest.raises((TypeError, ValueError), match=re.escape(f"seed={seed!r}")):
        env.reset(seed=seed)


def test_good_seeds_are_accepted_and_reproducible() -> None:
    env = three_thirteen_v0.raw_env()
    deals = []
    for seed in (0, 7, np.int64(7), [7, 1], 2**63):
        env.reset(seed=seed)
        deals.append(env.game_state.hands)
    assert deals[1] == deals[2] != deals[3]
    gym = ThreeThirteenGymEnv(opponents="random-v0")
    assert np.array_equal(gym.reset(seed=np.int64(3))[0], gym.reset(seed=3)[0])


# --------------------------------------------------------------------------- rule options
NUMPY_OPTIONS = dict(num_players=np.int64(3), decks=np.int32(2), rounds=np.array([9, 10, 11]),
                     max_turns_per_round=np.int32(50), discard_drawn_discard=np.bool_(True),
                     meld_needs_natural=np.bool_(False))
PLAIN_OPTIONS = dict(num_players=3, decks=2, rounds=(9, 10, 11), max_turns_per_round=50,
                     discard_drawn_discard=True, meld_needs_natural=False)


def test_rules_normalise_numpy_values_to_plain_ones() -> None:
    rules = Rules(**NUMPY_OPTIONS)
    assert rules == Rules(**PLAIN_OPTIONS) and hash(rules) == hash(Rules(**PLAIN_OPTIONS))
    for name, value in PLAIN_OPTIONS.items():
        assert type(getattr(rules, name)) is type(value), name
    assert all(type(r) is int for r in rules.rounds)
    assert json.loads(json.dumps(rules.to_dict())) == Rules(**PLAIN_OPTIONS).to_dict()
    assert Rules(rounds=[np.int8(2), np.int64(5)]).rounds == (2, 5)


@pytest.mark.parametrize("make", [three_thirteen_v0.raw_env, three_thirteen_v0.env])
def test_environments_accept_numpy_rule_options(make) -> None:
    env = make(**NUMPY_OPTIONS)
    assert env.unwrapped.rules == Rules(**PLAIN_OPTIONS) and env.possible_agents == ["player_0", "player_1",
                                                                                       "player_2"]
    env.reset(seed=0)
    _finish(env)
    gym = ThreeThirteenGymEnv(opponents="random-v0", num_players=np.int64(3), seat=np.int64(2),
                              **{k: v for k, v in NUMPY_OPTIONS.items() if k != "num_players"})
    assert gym.rules == Rules(**PLAIN_OPTIONS) and gym.reset(seed=0)[1]["seat"] == 2


@pytest.mark.parametrize("bad", [dict(rounds=np.array([1.0, 2.0])), dict(rounds=np.array([[1, 2]])),
                                 dict(num_players=np.bool_(True)), dict(max_turns_per_round=np.float64(5))])
def test_numpy_values_that_are_not_integers_are_still_rejected(bad: dict) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        Rules(**bad)


def test_decks_has_an_upper_bound_naming_the_range() -> None:
    assert MAX_DECKS == 64 and Rules(decks=MAX_DECKS).num_decks == MAX_DECKS
    for decks in (MAX_DECKS + 1, 10**6):
        with pytest.raises(ValueError, match=re.escape(f'decks={decks} is not allowed: use an integer 1..64 or "auto"')):
            Rules(decks=decks)
        with pytest.raises(ValueError, match="1..64"):
            three_thirteen_v0.raw_env(decks=decks)


# --------------------------------------------------------------------------- env(...) == raw_env(...)
EVERY_OPTION = dict(num_players=4, reward_mode="win", render_mode="ansi", reveal_all=True, decks=3,
                    aces="high_or_low", rounds=[2, 5], discard_drawn_discard=True, max_turns_per_round=9,
                    meld_needs_natural=True)


def _settings(env) -> tuple:
    raw = env.unwrapped
    return raw.rules, raw.reward_mode, raw.render_mode, raw.reveal_all


def test_env_takes_every_argument_of_raw_env_by_keyword_and_by_position() -> None:
    raw = three_thirteen_v0.raw_env(**EVERY_OPTION)
    assert raw.rules == Rules(num_players=4, decks=3, aces="high_or_low", rounds=(2, 5),
                              discard_drawn_discard=True, max_turns_per_round=9, meld_needs_natural=True)
    wrapped = three_thirteen_v0.env(**EVERY_OPTION)
    assert _settings(wrapped) == _settings(raw)
    rule_options = {k: v for k, v in EVERY_OPTION.items()
                    if k not in ("num_players", "reward_mode", "render_mode", "reveal_all")}
    positional = three_thirteen_v0.env(4, "win", "ansi", True, **rule_options)
    assert _settings(positional) == _settings(three_thirteen_v0.raw_env(4, "win", "ansi", True, **rule_options))
    assert _settings(positional) == _settings(raw)
    for name, value in EVERY_OPTION.items():  # each option alone
        one = {name: value} if name != "num_players" else {name: value, "decks": 3}
        assert _settings(three_thirteen_v0.env(**one)) == _settings(three_thirteen_v0.raw_env(**one)), name
    positional.reset(seed=0)
    assert "player_" in positional.render()


def test_env_rejects_what_raw_env_rejects() -> None:
    for make in (three_thirteen_v0.raw_env, three_thirteen_v0.env):
        with pytest.raises(TypeError, match="unknown argument"):
            make(colour="red")
        with pytest.raises(TypeError):
            make(2, "relative", None, False, "extra positional")


def test_wrapped_env_pickles_with_its_arguments() -> None:
    env = three_thirteen_v0.env(**{k: v for k, v in EVERY_OPTION.items() if k != "render_mode"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copy = pickle.loads(pickle.dumps(env))
    assert _settings(copy) == _settings(env)


def test_checked_seed_takes_numpy_zero_and_names_what_each_reset_allows():
    """numpy's integers are seeds from 0 up (``np.int64(0)`` too); the message lists a seed list only
    where one is allowed."""
    import numpy as np

    from tt_env.env_checks import checked_seed

    assert checked_seed(np.int64(0)) == 0 and type(checked_seed(np.int64(0))) is int
    assert checked_seed(0) == 0 and checked_seed(None) is None
    assert checked_seed([0, np.int32(4)], allow_list=True) == [0, 4]
    with pytest.raises(TypeError, match=r"seed=\[1\] \(list\) is not allowed: use None or an integer >= 0$"):
        checked_seed([1])
    with pytest.raises(ValueError, match=r"seed=-1 is not allowed: a seed must not be negative; use None or an "
                                         r"integer >= 0 \(or a non-empty list of them\)$"):
        checked_seed(-1, allow_list=True)
    with pytest.raises(ValueError, match=r"seed=np.int64\(-2\) is not allowed: a seed must not be negative; use "
                                         r"None or an integer >= 0$"):
        checked_seed(np.int64(-2))
