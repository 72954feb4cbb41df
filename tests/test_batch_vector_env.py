"""The Gymnasium vector env on the batched engine: make_vec, observations, rewards, info, errors."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import tt_env  # noqa: F401  (registers the id)
from tt_env.batch.vector_env import ThreeThirteenVectorEnv
from tt_env.observation import encode


def test_make_vec_builds_the_batched_env() -> None:
    env = gymnasium.make_vec("tt_env/ThreeThirteen-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(env.unwrapped, ThreeThirteenVectorEnv)
    obs, info = env.reset(seed=0)
    assert obs.shape == (4, 294) and obs.dtype == np.float32
    assert info["action_mask"].shape == (4, 54)
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("players,seat,turns", [(2, 0, 200), (3, "rotate", 200), (4, "random", 200), (2, 0, 1),
                                                (3, "rotate", 2), (5, 4, 1)])
def test_observations_are_the_learners_and_returns_add_up(players: int, seat, turns: int) -> None:
    """Each observation is the learner's view of its table; an episode's rewards add up to the
    relative score of its final totals (rewards earned between episodes are carried over, and so
    are those of rounds that tiny turn limits end before the learner's first move; a whole game
    they end before it is no episode, and its rewards are dropped)."""
    env = ThreeThirteenVectorEnv(num_envs=6, opponents="greedy-v0", seat=seat, num_players=players,
                                 rounds=(1, 2), max_turns_per_round=turns, seed=3)
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    returns = np.zeros(6)
    finished = 0
    for _ in range(120):
        for i in range(6):
            st = env.game.to_game_state(i)
            assert st.current_player == info["seat"][i]
            np.testing.assert_array_equal(obs[i], encode(st, st.current_player))
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, reward, terminated, truncated, info = env.step(actions)
        assert not truncated.any()
        returns += reward
        for i in np.flatnonzero(terminated):
            final = info["final_scores"][i]
            own = final[info["final_seat"][i]]
            expected = ((final.sum() - own) / (players - 1) - own) / 100
            assert returns[i] == pytest.approx(expected, abs=1e-4)
            returns[i] = 0.0
            finished += 1
    assert finished > 0


def test_illegal_actions_terminate_or_raise() -> None:
    env = ThreeThirteenVectorEnv(num_envs=3, seed=0)
    env.reset(seed=0)
    obs, reward, terminated, _, info = env.step(np.array([53, 0, 0]) * env.action_masks()[:, 53].__invert__()
                                                + np.array([2, 0, 0]))
    assert terminated[0] and reward[0] == -1.0 and info["illegal_action"][0]
    raising = ThreeThirteenVectorEnv(num_envs=2, illegal_action="raise", seed=0)
    raising.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        raising.step(np.array([40, 0]))
    with pytest.raises(ValueError, match=r"actions must be a \(2,\) integer tensor of action ids 0\.\.53, got shape "
                                         r"\(2,\) and dtype torch.float64"):
        raising.step(np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match=r"actions must be a \(2,\) .* got shape \(3,\)"):
        raising.step(np.array([0, 0, 0]))
    with pytest.raises(ValueError, match=r"actions must be a \(2,\) .* dtype torch.bool"):
        raising.step(np.array([True, False]))
    with pytest.raises(ValueError, match="seat="):
        ThreeThirteenVectorEnv(num_envs=2, seat=5)
    from tt_env.agents.greedy import GreedyAgent

    with pytest.raises(ValueError, match="not a batched agent.*vectorization_mode='sync'"):
        ThreeThirteenVectorEnv(num_envs=2, opponents=[GreedyAgent()])


def test_device_mode_returns_tensors() -> None:
    env = ThreeThirteenVectorEnv(num_envs=2, device="cpu", seed=0)
    obs, info = env.reset(seed=0)
    assert isinstance(obs, torch.Tensor) and isinstance(info["action_mask"], torch.Tensor)
    obs, reward, terminated, truncated, info = env.step(env.action_masks().float().argmax(dim=1))
    assert isinstance(reward, torch.Tensor) and reward.shape == (2,)


def _play(env: ThreeThirteenVectorEnv, steps: int) -> list[np.ndarray]:
    """The observations and rewards of ``steps`` steps of the first legal action at every table."""
    obs, _ = env.reset(seed=4)
    seen = [obs]
    for _ in range(steps):
        obs, reward, terminated, _, _ = env.step(env.action_masks().argmax(axis=1))
        seen += [obs, reward, terminated]
    return seen


@pytest.mark.parametrize("as_list", [False, True])
def test_a_batched_agent_object_plays_as_its_name(as_list: bool) -> None:
    """An opponent given as a batched agent object, alone or in a list, plays the games its name plays."""
    from tt_env.batch.agents import BatchGreedy
    from tt_env.engine.rules import Rules

    greedy = BatchGreedy(Rules(num_players=3, rounds=(1, 2)))
    by_name = ThreeThirteenVectorEnv(num_envs=5, opponents="greedy-v0", num_players=3, rounds=(1, 2), seed=2)
    by_object = ThreeThirteenVectorEnv(num_envs=5, opponents=[greedy] if as_list else greedy, num_players=3,
                                       rounds=(1, 2), seed=2)
    assert by_object.opponents == [greedy, greedy]
    for a, b in zip(_play(by_name, 40), _play(by_object, 40), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("action", [-1, 54, 1000])
def test_out_of_range_actions_are_illegal_where_the_last_action_is_legal(action: int) -> None:
    """An action id outside 0..53 is illegal at every table, also where 53 (discard the king of
    spades) is legal: it ends the episode with -1 rather than reaching the engine."""
    env = ThreeThirteenVectorEnv(num_envs=256, seed=0)
    env.reset(seed=0)
    env.step(np.zeros(256, dtype=np.int64))  # every learner draws from the stock, and is to discard
    holds_last = env.action_masks()[:, 53]
    assert holds_last.any()
    _, reward, terminated, _, info = env.step(np.full(256, action))
    assert terminated.all() and info["illegal_action"].all() and (reward == -1.0).all()


class FixedDraw:
    """A batched agent that draws from one side when it may (0: the stock, 1: the discard pile)
    and otherwise plays its first legal action; it counts the rows it is asked about."""

    def __init__(self, side: int) -> None:
        self.side, self.rows = side, 0

    def act(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        self.rows += len(mask)
        first = mask.long().argmax(dim=1)
        return torch.where(mask[:, self.side], torch.full_like(first, self.side), first)


def test_each_opponent_plays_its_own_seat() -> None:
    """With one agent per seat, a table's moves at a seat are that seat's agent's: the first
    opponent (left of the learner) always draws from the stock, the second from the pile."""
    stock, pile = FixedDraw(0), FixedDraw(1)
    env = ThreeThirteenVectorEnv(num_envs=16, opponents=[stock, pile], num_players=3, rounds=(1, 2), seed=4)
    env.reset(seed=4)
    real_step, seen = env.game.step, {0: 0, 1: 0}

    def checked(actions, active=None, final_seat=None):
        state = env.game.state
        for i in range(env.num_envs):
            seat = int(state.current[i])
            which = (seat - int(env.seat[i]) - 1) % 3
            opponent_draws = active is not None and bool(active[i]) and seat != int(env.seat[i])
            if opponent_draws and int(state.phase[i]) == 0 and int(state.pile_len[i]) > 0:  # both draws legal
                seen[which] += 1
                assert int(actions[i]) == which, f"table {i}: opponent {which} played {int(actions[i])}"
        return real_step(actions, active=active, final_seat=final_seat)

    env.game.step = checked
    rng = np.random.default_rng(0)
    for _ in range(30):
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
    assert seen[0] > 10 and seen[1] > 10 and stock.rows > 0 and pile.rows > 0


def test_a_list_of_one_opponent_per_seat_fits_and_others_do_not() -> None:
    for players in (3, 4, 5):
        env = ThreeThirteenVectorEnv(num_envs=2, opponents=["random-v0"] * (players - 1), num_players=players)
        assert len(env.opponents) == players - 1
    with pytest.raises(ValueError, match=r"2 opponents do not fit num_players=4: give 1 \(repeated\) or 3"):
        ThreeThirteenVectorEnv(num_envs=2, opponents=["random-v0"] * 2, num_players=4)


def test_the_spaces_and_the_mask_before_a_reset() -> None:
    env = ThreeThirteenVectorEnv(num_envs=3, num_players=2)
    assert env.action_space == gymnasium.spaces.MultiDiscrete([54, 54, 54])
    assert env.single_action_space == gymnasium.spaces.Discrete(54)
    mask = env.action_masks()
    assert mask.shape == (3, 54) and mask.dtype == bool and not mask.any()  # nothing is legal before a reset


def test_the_event_infos_are_integers_at_every_step() -> None:
    """``went_out``, ``round_number``, ``round_points`` and ``final_scores`` are int64 whether or
    not their event happened at this step (as the engine's scores are)."""
    env = ThreeThirteenVectorEnv(num_envs=8, num_players=2, rounds=(1,), seed=1)
    _, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    ended = False
    for _ in range(40):
        _, _, terminated, _, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
        for key in ("went_out", "round_number", "round_points", "final_scores"):
            assert info[key].dtype == np.int64, key
        ended |= bool(terminated.any())
    assert ended


def test_the_constructor_names_what_it_does_not_take() -> None:
    import inspect

    from tt_env.batch.vector_env import VECTOR_ENV_ARGUMENTS
    from tt_env.engine.rules import Rules

    named = [p.name for p in inspect.signature(ThreeThirteenVectorEnv).parameters.values() if p.kind != p.VAR_KEYWORD]
    assert VECTOR_ENV_ARGUMENTS.split(", ") == named  # the message lists exactly the arguments there are
    with pytest.raises(TypeError, match=r"unknown argument\(s\) \['jokers'\]: allowed are num_envs, opponents, .*, "
                                        r"rules and the rule options \['decks', "):
        ThreeThirteenVectorEnv(num_envs=2, jokers=True)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match=rf"num_envs={bad!r} is not allowed: use an int >= 1"):
            ThreeThirteenVectorEnv(num_envs=bad)
    assert ThreeThirteenVectorEnv(num_envs=np.int64(2)).num_envs == 2
    seated = ThreeThirteenVectorEnv(num_envs=2, num_players=3, seat=np.int64(2))  # numpy's ints are seats too
    seated.reset(seed=0)
    assert seated.seat.tolist() == [2, 2]
    with pytest.raises(ValueError, match=r"give rules=Rules\(...\) or rule options, not both \(got \['decks'\]\)"):
        ThreeThirteenVectorEnv(num_envs=2, rules=Rules(num_players=3), decks=2)
    with pytest.raises(ValueError, match="num_players=4 does not match rules.num_players=3"):
        ThreeThirteenVectorEnv(num_envs=2, rules=Rules(num_players=3), num_players=4)
    with pytest.raises(TypeError, match="rules=.* is not a Rules object"):
        ThreeThirteenVectorEnv(num_envs=2, rules={"num_players": 3})
    env = ThreeThirteenVectorEnv(num_envs=2)
    with pytest.raises(TypeError, match=r"seed='x' \(str\) is not allowed: use None or an integer >= 0"):
        env.reset(seed="x")


def test_rules_give_the_tables_their_rules_as_the_single_env_does() -> None:
    from tt_env.engine.rules import Rules

    rules = Rules(num_players=3, decks=2, aces="high_or_low", rounds=(9, 10, 11))
    env = gymnasium.make_vec("tt_env/ThreeThirteen-v0", num_envs=4, vectorization_mode="vector_entry_point",
                             rules=rules)
    single = gymnasium.make("tt_env/ThreeThirteen-v0", rules=rules)
    assert env.unwrapped.rules == rules and env.unwrapped.game.rules == rules
    obs, info = env.reset(seed=1)
    assert obs.shape == (4,) + single.observation_space.shape
    assert info["action_mask"].shape == (4, 54)


@pytest.mark.parametrize("rounds", [(3,), (10,)])
def test_round_events_name_the_round_that_ended_and_only_when_one_did(rounds: tuple[int, ...]) -> None:
    """One round a game: every episode's last step reports that round (``round_number``) and the
    game's final scores, whoever's discard ended it (the learner's or an opponent's); no other
    step reports a round, and the round's points are the game's final scores."""
    env = ThreeThirteenVectorEnv(num_envs=6, num_players=3, rounds=rounds, seed=2)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    episodes = 0
    for _ in range(300):
        _, _, terminated, _, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
        assert (info["round_number"] == np.where(terminated, rounds[0], 0)).all()
        assert (info["round_points"][terminated] == info["final_scores"][terminated]).all()
        assert (info["final_scores"][~terminated] == 0).all() and (info["round_points"][terminated].sum(1) > 0).all()
        episodes += int(terminated.sum())
    assert episodes >= 12


def test_a_single_table_is_a_vector_env_too() -> None:
    env = ThreeThirteenVectorEnv(num_envs=1, seed=0)
    obs, info = env.reset(seed=0)
    assert obs.shape == (1, 294) and info["action_mask"].shape == (1, 54)


def _played(env, seed: int | None, steps: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """The observations and learner seats of ``steps`` first-legal-action steps after ``reset(seed=seed)``."""
    obs, info = env.reset(seed=seed)
    seen, seats = [obs.copy()], [info["seat"].copy()]
    for _ in range(steps):
        obs, *_, info = env.step(info["action_mask"].argmax(axis=1))
        seen.append(obs.copy())
        seats.append(info["seat"].copy())
    return np.stack(seen), np.stack(seats)


def test_reset_with_a_seed_replays_the_episodes_opponents_and_seats_too() -> None:
    """``reset(seed=s)`` plays the same episodes again, whatever came before, in this env or a new
    one: the opponents' draws (random-v0, a sampling network) and the random seats restart too."""
    from tt_env.batch.agents import BatchNetwork

    def sampling(obs, mask):  # type: ignore[no-untyped-def]
        return torch.zeros(mask.shape, dtype=torch.float32)

    def build(seed: int) -> ThreeThirteenVectorEnv:
        return ThreeThirteenVectorEnv(num_envs=8, opponents=["random-v0", BatchNetwork(sampling, greedy=False)],
                                      seat="random", num_players=3, rounds=(1, 2), seed=seed)

    env = build(0)
    first = _played(env, 5)
    again = _played(env, 5)
    fresh = _played(build(9), 5)
    for a, b, c in zip(first, again, fresh, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert not np.array_equal(first[0], _played(env, 6)[0])


def test_random_seats_are_drawn_per_table_whatever_the_batch_s_size() -> None:
    """Table ``i``'s learner seats (episode after episode) do not depend on how many tables there are."""
    def seats(num_envs: int) -> np.ndarray:
        env = ThreeThirteenVectorEnv(num_envs=num_envs, opponents="greedy-v0", seat="random", num_players=4,
                                     rounds=(1,), seed=2)
        return _played(env, None, steps=60)[1][:, 0]

    one, four = seats(1), seats(4)
    assert len(set(one.tolist())) > 1  # several episodes, several seats
    np.testing.assert_array_equal(one, four)


def test_an_opponent_that_is_not_a_batched_agent_is_named() -> None:
    """Objects with no ``act``, or a scalar agent's ``act(observation, action_mask, rng)``, are
    refused by name, with the way to seat scalar agents."""
    from tt_env.agents import GreedyAgent
    from tt_env.batch.agents import BatchGreedy

    for bad in (object(), GreedyAgent()):
        with pytest.raises(ValueError, match=r"opponent .* is not a batched agent \(act\(observation, action_mask\) "
                                             r"on whole batches.*vectorization_mode='sync'"):
            ThreeThirteenVectorEnv(num_envs=2, opponents=[bad])
    assert ThreeThirteenVectorEnv(num_envs=2, opponents=[BatchGreedy()]).opponents[0].name == "greedy-v0"


def test_games_the_opponents_end_before_the_learner_moves_change_no_seat() -> None:
    """One turn a round at 4 players: the opponents often end a whole game before the learner's
    first move in it. Such a game is no episode (as in ``tt_env.gym_env``): ``seat="rotate"`` still
    goes 0, 1, 2, 3, ... by episode, and ``final_seat`` is the seat the finished episode was played
    at (it named the seat of the last game skipped, and the rotation jumped over seats)."""
    env = ThreeThirteenVectorEnv(num_envs=2, opponents="random-v0", seat="rotate", num_players=4,
                                 reward_mode="penalty", rounds=(1, 2, 3), max_turns_per_round=1, seed=0)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    seats = [[int(s)] for s in info["seat"]]
    returns = np.zeros(2)
    for _ in range(300):
        played = info["seat"].copy()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        obs, reward, terminated, _, info = env.step(actions)
        returns += reward
        for i in np.flatnonzero(terminated):
            assert info["final_seat"][i] == played[i]
            assert returns[i] == pytest.approx(-info["final_scores"][i][played[i]] / 100, abs=1e-4)
            returns[i] = 0.0
            seats[i].append(int(info["seat"][i]))
    for table in seats:
        assert len(table) > 40 and table == [k % 4 for k in range(len(table))]


def test_a_reset_whose_games_the_opponents_end_keeps_the_first_seat() -> None:
    """At ``reset``, a game the opponents end before the learner's first move is dealt again at the
    same seat: ``seat="rotate"`` starts every seeded reset at seat 0 (it counted such games as
    episodes and started at 1, 2 or 3)."""
    env = ThreeThirteenVectorEnv(num_envs=8, opponents="random-v0", seat="rotate", num_players=4,
                                 rounds=(11,), max_turns_per_round=1, seed=0)
    for seed in range(6):
        _, info = env.reset(seed=seed)
        assert (info["seat"] == 0).all(), (seed, info["seat"])
        for i in range(8):
            assert env.game.to_game_state(i).current_player == 0


def test_batched_agent_objects_must_be_built_for_the_game_s_rules() -> None:
    """As the scalar envs' agent objects (``make_agent``): a ``BatchGreedy`` built for other scoring
    played its own game without a word (a different action in about a quarter of positions)."""
    from tt_env.batch.agents import BatchGreedy
    from tt_env.engine.rules import Rules

    game = Rules(num_players=2, aces="high_or_low", meld_needs_natural=True)
    with pytest.raises(ValueError, match=r"was built for aces='low', but the game has aces='high_or_low'"):
        ThreeThirteenVectorEnv(2, opponents=BatchGreedy(Rules(num_players=2)), rules=game)
    with pytest.raises(ValueError, match=r"was built for num_players=3, but the game has num_players=2"):
        ThreeThirteenVectorEnv(2, opponents=BatchGreedy(Rules(num_players=3)), rules=Rules(num_players=2))
    with pytest.raises(ValueError, match=r"^opponent BatchGreedy is a class, not an agent"):
        ThreeThirteenVectorEnv(2, opponents=BatchGreedy)
    env = ThreeThirteenVectorEnv(2, opponents=BatchGreedy(game), rules=game)
    assert env.opponents[0].rules == game


def test_close_frees_the_tables_and_a_closed_env_is_not_stepped() -> None:
    """``close()`` frees the engine (a GPU's memory); a later ``step`` or ``reset`` is a clear
    ``ClosedEnvironmentError`` (as gymnasium's AsyncVectorEnv), not a game played on freed tables."""
    env = ThreeThirteenVectorEnv(num_envs=2, seed=0)
    _, info = env.reset(seed=0)
    actions = info["action_mask"].argmax(axis=1)
    env.close()
    assert env.closed and env.game is None and env.opponents == []
    for call in (lambda: env.step(actions), lambda: env.reset(seed=0)):
        with pytest.raises(gymnasium.error.ClosedEnvironmentError, match=r"called after close\(\): .*make a new env"):
            call()
    env.close()  # a second close is harmless


def test_every_seed_the_env_takes_seeds_its_opponents_too() -> None:
    """With random-v0 in 2 seats, ``reset(seed=2**64-1)`` (and the constructor's seed) gave opponent
    1 ``seed + 1``, which a batched agent refuses, after the seats and opponent 0 were reseeded:
    opponent k's seed is now ``(seed + k) % 2**64``, so every seed the env takes works."""
    for seed in (2 ** 64 - 1, 2 ** 70 + 3, 5):
        env = ThreeThirteenVectorEnv(num_envs=2, opponents=["random-v0"], num_players=3, rounds=(1,), seed=seed)
        assert [o.seed for o in env.opponents] == [seed % 2 ** 64, (seed + 1) % 2 ** 64]
        first = _played(env, seed)
        env.reset(seed=0)
        assert [o.seed for o in env.opponents] == [0, 1]
        for a, b in zip(first, _played(env, seed), strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("rounds", [(1,), (1, 2)])
def test_reset_info_holds_no_events_of_games_the_opponents_ended(rounds: tuple[int, ...]) -> None:
    """A game the opponents end before the learner's first move is no episode, yet its final scores
    and round went into reset's info; the single env reports none of its events (those of the game
    the learner then plays, a round already ended, it does): so does the vector env."""
    kw = dict(opponents=["random-v0"], num_players=3, rounds=rounds, max_turns_per_round=1)
    env = gymnasium.make_vec("tt_env/ThreeThirteen-v0", num_envs=8, vectorization_mode="vector_entry_point", **kw)
    single = gymnasium.make("tt_env/ThreeThirteen-v0", **kw)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        _, one = single.reset(seed=seed)
        assert not info["final_scores"].any() and one["final_scores"] == [0, 0, 0]
        # the rounds that ended before the learner's first move are those of the game it plays
        np.testing.assert_array_equal(info["round_number"], env.unwrapped.game.round_number.numpy() - 1)
        assert (info["round_points"].any(axis=1) == (info["round_number"] > 0)).all()
