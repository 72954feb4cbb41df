"""BatchGame's contract beyond the rules: seeding, bridges, auto-reset, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchGreedy, BatchRandom
from tt_env.batch.state import field_dtype
from tt_env.engine import game as engine
from tt_env.engine.rules import Rules
from tt_env.observation import encode

from batch_differential import differences, snapshot


def play(game: BatchGame, steps: int, seed: int = 0) -> list:
    ts = game.reset()
    agent = BatchRandom(game.rules, seed=seed)
    seen = [ts.observation.clone()]
    for _ in range(steps):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
        seen.append(ts.observation.clone())
    return seen


def test_same_seed_same_games_and_other_seeds_differ() -> None:
    a = play(BatchGame(Rules(), 4, seed=9), 50)
    b = play(BatchGame(Rules(), 4, seed=9), 50)
    c = play(BatchGame(Rules(), 4, seed=10), 50)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not torch.equal(a[0], c[0])


def test_a_table_deals_the_same_whatever_the_other_tables_do() -> None:
    """Table 0's deals depend on its seed and index only, not on the batch's other tables."""
    small, large = BatchGame(Rules(), 2, seed=4), BatchGame(Rules(), 64, seed=4)
    ts_small, ts_large = small.reset(), large.reset()
    assert torch.equal(ts_small.observation[0], ts_large.observation[0])
    assert small.to_game_state(0).stock == large.to_game_state(0).stock
    # different play at the other tables: table 0's stock order stays the same
    moves = torch.zeros(64, dtype=torch.int64)
    moves[1:] = BatchRandom(Rules(), seed=1).act(ts_large.observation[1:], ts_large.action_mask[1:])
    large.step(moves)
    small.step(torch.zeros(2, dtype=torch.int64))
    assert small.to_game_state(0).stock == large.to_game_state(0).stock


def test_round_trip_through_game_states() -> None:
    game = BatchGame(Rules(num_players=3), 5, seed=2)
    play(game, 37)
    states = [game.to_game_state(i) for i in range(5)]
    other = BatchGame(Rules(num_players=3), 5, seed=99)
    ts = other.from_game_states(states)
    for i, st in enumerate(states):
        np.testing.assert_array_equal(ts.observation[i].numpy(), encode(st, st.current_player))
        np.testing.assert_array_equal(ts.action_mask[i].numpy(), engine.action_mask(st).astype(bool))
        assert other.to_game_state(i).stock == st.stock


def test_every_field_survives_a_round_trip() -> None:
    """``to_game_state`` then ``from_game_states`` into another batch gives back every field of each
    table, at states that have each: a card taken this turn, a seat gone out, passed cards, a
    finished game (greedy play at 3 players, finished games kept)."""
    rules = Rules(num_players=3, rounds=(1, 2))
    game = BatchGame(rules, 24, seed=5, autoreset=False)
    ts = game.reset()
    greedy = BatchGreedy(rules)
    seen = {"taken": False, "went_out": False, "passed": False, "game_over": False}
    for step in range(60):
        ts = game.step(greedy.act(ts.observation, ts.action_mask))
        if step % 5:
            continue
        states = [game.to_game_state(i) for i in range(24)]
        other = BatchGame(rules, 24, seed=99, autoreset=False)
        other.from_game_states(states)
        for name, value in other.state.fields().items():  # the engine's own dtypes, as a deal makes them
            assert value.dtype == getattr(game.state, name).dtype == field_dtype(name), name
        for i, st in enumerate(states):
            assert differences(snapshot(other.to_game_state(i)), snapshot(st)) == {}, f"table {i} at step {step}"
            seen["taken"] |= st.taken_this_turn is not None
            seen["went_out"] |= st.went_out is not None
            seen["passed"] |= any(len(p) for p in st.passed)
            seen["game_over"] |= st.game_over
    assert all(seen.values()), seen


def test_scalar_states_play_on_in_the_batch() -> None:
    """Games started by the scalar engine continue in the batch exactly (until the next deal,
    which each engine shuffles from its own random stream)."""
    rules = Rules()
    states = [engine.new_game(rules, np.random.default_rng(s)) for s in range(3)]
    game = BatchGame(rules, 3)
    ts = game.from_game_states([st.clone() for st in states])
    for _ in range(60):
        actions = [engine.legal_actions(st)[-1] for st in states]
        results = [engine.apply(st, a) for st, a in zip(states, actions, strict=True)]
        ts = game.step(torch.tensor(actions))
        if any(r.round_record is not None or r.reshuffled for r in results):
            break
        for i, st in enumerate(states):
            np.testing.assert_array_equal(ts.observation[i].numpy(), encode(st, st.current_player))
            assert game.to_game_state(i).stock == st.stock


def test_autoreset_off_keeps_finished_games() -> None:
    rules = Rules(rounds=(1,), max_turns_per_round=2)
    game = BatchGame(rules, 3, autoreset=False)
    ts = game.reset()
    agent = BatchRandom(rules)
    for _ in range(4):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    assert ts.game_over.all() and not ts.action_mask.any()
    ts = game.reset_tables(torch.tensor([True, False, False]))
    assert ts.action_mask[0].any() and not ts.action_mask[1:].any()


def test_a_cpu_game_takes_the_cpu_s_own_path() -> None:
    """On a CPU the rare parts of a step run on the rows that need them, with the C loops and
    reused output arrays; the GPU's every-row path plays the same games (the tests above), so
    only the choice itself tells the two apart, at a few times the cost on a CPU."""
    game = BatchGame(Rules(), 4)
    assert game._sparse and game._outputs is not None and game._kernel_backend == "auto"


@pytest.mark.parametrize("every_row", [False, True])
def test_a_finished_game_stays_as_it_ended_without_autoreset(every_row: bool) -> None:
    """With ``autoreset=False`` a finished table is not dealt again: its hands, piles and scores
    stay those of the scalar engine's finished game, step after step (the scalar game takes the
    batch's deal at each new round: the shuffles differ)."""
    rules = Rules(rounds=(1, 2), max_turns_per_round=4)
    game = BatchGame(rules, 4, seed=3, autoreset=False)
    game._sparse = not every_row
    ts = game.reset()
    scalar = [game.to_game_state(i) for i in range(4)]
    rng = np.random.default_rng(3)
    for _ in range(40):
        actions = [int(rng.choice(engine.legal_actions(st))) if not st.game_over else 0 for st in scalar]
        for st, action in zip(scalar, actions, strict=True):
            if not st.game_over:
                engine.apply(st, action)
        ts = game.step(torch.tensor(actions))
        for i, st in enumerate(scalar):
            got = game.to_game_state(i)
            if bool(ts.round_over[i]) and not st.game_over:  # a new round: the batch's own shuffle
                scalar[i] = st = got
            assert ([sorted(h) for h in got.hands], list(got.discard_pile), got.scores, got.round_index) == \
                ([sorted(h) for h in st.hands], list(st.discard_pile), st.scores, st.round_index)
    assert all(st.game_over for st in scalar) and bool(game.state.game_over.all())


def test_bad_input_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="1 to 4 decks"):
        BatchGame(Rules(decks=5), 2)
    with pytest.raises(ValueError, match="num_tables"):
        BatchGame(Rules(), 0)
    with pytest.raises(ValueError, match="reward_mode"):
        BatchGame(Rules(), 2, reward_mode="points")
    with pytest.raises(TypeError, match="Rules"):
        BatchGame({"num_players": 2}, 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError,
                       match=r"kernels='fast' is not allowed: use one of \['auto', 'c', 'torch', 'triton'\]"):
        BatchGame(Rules(), 2, kernels="fast")
    with pytest.raises(ValueError, match="device='meta' is not allowed: the batched engine runs on CPUs and CUDA"):
        BatchGame(Rules(), 2, device="meta", kernels="c")
    with monkeypatch.context() as patched:  # (kernels are checked before any tensor is made on the device)
        patched.setattr(torch.cuda, "is_available", lambda: True)
        with pytest.raises(ValueError, match="backend='c' needs the built C extension .* these are on cuda"):
            BatchGame(Rules(), 2, device="cuda", kernels="c")
    game = BatchGame(Rules(), 2)
    with pytest.raises(RuntimeError, match="reset"):
        game.step(torch.zeros(2, dtype=torch.int64))
    ts = game.reset()
    with pytest.raises(ValueError, match=r"illegal action 40 at table 0 \(seat 0\): legal actions there are \[\d+(, \d+)*\]"):
        game.step(torch.tensor([40, 0]))
    with pytest.raises(ValueError, match="integer tensor"):
        game.step(torch.zeros(2))
    with pytest.raises(ValueError, match="integer tensor"):
        game.step(torch.zeros(3, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"actions must be a \(2,\) integer tensor .* got shape \(2, 1\)"):
        game.step(torch.zeros(2, 1, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"active must be a \(2,\) bool tensor \(the tables to step\), got shape "
                                         r"\(2,\) and dtype torch.int64"):
        game.step(torch.zeros(2, dtype=torch.int64), active=torch.ones(2, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"active must be a \(2,\) bool tensor .* got shape \(3,\)"):
        game.step(torch.zeros(2, dtype=torch.int64), active=torch.ones(3, dtype=torch.bool))
    legal = ts.action_mask.int().argmax(1)
    for seat in (2, -1):  # unchecked, a seat past the table's would index past its seats
        with pytest.raises(ValueError, match=rf"final_seat={seat} at table 0 is not allowed: use a seat 0\.\.1"):
            game.step(legal, final_seat=torch.tensor([seat, 0]))
    with pytest.raises(ValueError, match=r"final_seat=5 at table 1 is not allowed"):  # the table it is at
        game.step(legal, final_seat=torch.tensor([1, 5]))
    with pytest.raises(ValueError, match=r"final_seat must be a \(2,\) integer tensor of seats 0\.\.1, got shape \(3"):
        game.step(legal, final_seat=torch.zeros(3, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"final_seat must be .* dtype torch.float32"):
        game.step(legal, final_seat=torch.zeros(2))
    after = game.step(legal, final_seat=[1, 1])  # a list of seats will do
    assert after.observation.shape == (2, 294)
    for mask in (torch.tensor([0, 1]), [1, 0], torch.ones(3, dtype=torch.bool), None, "all"):  # (table numbers
        with pytest.raises(ValueError, match=r"mask must be a \(2,\) bool tensor \(the tables to deal new games"):
            game.reset_tables(mask)  # are not a mask; None and a word are none either: torch could not read them)
    with pytest.raises(ValueError, match="table=7"):
        game.to_game_state(7)
    st = game.to_game_state(0)
    st.hands[0].append(st.stock.pop())
    with pytest.raises(ValueError, match="no game reaches"):
        game.from_game_states([st, game.to_game_state(1)])
    assert ts.observation.shape == (2, 294)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_plays_the_cpu_games() -> None:
    """The same seed gives the same games on a GPU as on the CPU (the random streams are device-free)."""
    cpu, gpu = BatchGame(Rules(num_players=3), 16, seed=1), BatchGame(Rules(num_players=3), 16, device="cuda", seed=1)
    a, b = cpu.reset(), gpu.reset()
    agent = BatchRandom(Rules(num_players=3), seed=0)
    for _ in range(200):
        assert torch.equal(a.observation, b.observation.cpu())
        moves = agent.act(a.observation, a.action_mask)
        a, b = cpu.step(moves), gpu.step(moves.cuda())


@pytest.mark.parametrize("solving", ["kept", "gathered"])
@pytest.mark.parametrize("autoreset", [True, False])
def test_the_every_row_path_plays_the_same_games_as_the_cpu_path(solving: str, autoreset: bool) -> None:
    """The GPU's every-row path, run on a CPU, against the CPU's own: the same seed and moves give
    every field of every TimeStep and the same state, through round ends, game ends (auto-reset
    deals and final observations) and reshuffles."""
    rules = Rules(num_players=3, rounds=(1, 2, 11), max_turns_per_round=30)
    cpu = BatchGame(rules, 24, seed=4, autoreset=autoreset)
    rows = BatchGame(rules, 24, seed=4, autoreset=autoreset, solving=solving)
    rows._sparse = False
    a, b = cpu.reset(), rows.reset()
    agent = BatchRandom(rules, seed=2)
    games = 0
    for _ in range(400):
        for name in a._fields:
            assert torch.equal(getattr(a, name), getattr(b, name)), name
        for name, value in cpu.state.fields().items():
            assert torch.equal(value, getattr(rows.state, name)), name
        games += int(a.game_over.sum())
        moves = agent.act(a.observation, a.action_mask)
        a, b = cpu.step(moves), rows.step(moves)
    assert games >= 8


def test_a_hand_of_only_the_card_just_taken_may_discard_it() -> None:
    """With several decks a seat can take the discard and hold nothing but copies of it: the ban on
    discarding it again then lifts (the scalar rule), in the batch too."""
    rules = Rules(decks=4, rounds=(1,))
    st = engine.new_game(rules, np.random.default_rng(0))
    seat = st.current_player
    everything = [c for h in st.hands for c in h] + list(st.stock) + list(st.discard_pile)
    for _ in range(4):
        everything.remove(5)
    st.hands[seat] = [5, 5, 5]
    st.hands[1 - seat] = [everything.pop() for _ in range(3)]
    st.discard_pile = type(st.discard_pile)([everything.pop(), 5])
    st.stock = everything
    game = BatchGame(rules, 1)
    game.from_game_states([st])
    ts = game.step(torch.tensor([1]))  # take the 5 on top: the hand is four 5s
    engine.apply(st, 1)
    expected = engine.action_mask(st).astype(bool)
    assert expected[2 + 5]
    np.testing.assert_array_equal(ts.action_mask[0].numpy(), expected)


def test_unknown_solver_backend_is_refused() -> None:
    with pytest.raises(ValueError, match=r"solver='fast' is not allowed: use one of \['auto', 'torch', 'triton', 'c'\]"):
        BatchGame(Rules(), 2, solver="fast")


@pytest.mark.parametrize("autoreset", [True, False])
def test_lockstep_phase_follows_every_table(autoreset: bool) -> None:
    """The phase the engine assumes on the host (to skip what no table needs) is every playing
    table's phase, through round ends, game ends and restarts."""
    rules = Rules(num_players=3, rounds=(1, 2), max_turns_per_round=7)
    game = BatchGame(rules, 32, seed=4, autoreset=autoreset)  # a finished table ignores its action
    ts = game.reset()
    gen = torch.Generator().manual_seed(4)
    ended = 0
    for _ in range(120):
        live = ~game.state.game_over
        assert game._lockstep_phase is not None
        assert bool((game.state.phase[live] == game._lockstep_phase).all())
        if not bool(live.any()):
            break
        pick = torch.where(ts.action_mask, torch.rand(ts.action_mask.shape, generator=gen), -1.0).argmax(1)
        ts = game.step(torch.where(live, pick, 0))
        ended += int(ts.round_over.sum())
    assert ended > 32


def test_lockstep_ends_when_tables_move_apart() -> None:
    rules = Rules(rounds=(1, 2))
    game = BatchGame(rules, 4, seed=1)
    ts = game.reset()
    first = ts.action_mask.float().argmax(1)
    game.step(first, active=torch.tensor([True, False, True, True]))
    assert game._lockstep_phase is None
    game.reset()
    assert game._lockstep_phase == 0
    game.reset_tables(torch.tensor([True, False, False, False]))
    assert game._lockstep_phase == 0  # a new game starts with a draw, like the others
    ts = game.step(game.reset().action_mask.float().argmax(1))
    assert game._lockstep_phase == 1
    game.reset_tables(torch.tensor([True, False, False, False]))
    assert game._lockstep_phase is None
    game.reset()
    ts = game.from_game_states([game.to_game_state(i) for i in range(4)])
    assert game._lockstep_phase == 0  # loaded tables all in one phase: read from them
    game.step(ts.action_mask.float().argmax(1))
    game.from_game_states([game.to_game_state(i) for i in range(4)])
    assert game._lockstep_phase == 1
    states = [game.to_game_state(i) for i in range(4)]
    game.reset()
    game.from_game_states([game.to_game_state(0), *states[1:]])
    assert game._lockstep_phase is None  # a table drawing, three discarding


def _fields(game: BatchGame) -> dict[str, torch.Tensor]:
    return {name: value.clone() for name, value in game.state.fields().items()}


@pytest.mark.parametrize("every_row", [False, True], ids=["cpu path", "every-row path, kept penalties"])
def test_a_loaded_state_plays_on_as_the_saved_game(every_row: bool) -> None:
    """``load_state`` of a game's saved fields, at a draw and at a discard, mid-round and after
    seats went out: the loaded game plays on as the saved one, every field of every step. What
    the engine keeps besides the state comes from the loaded tables: the lockstep (a discard
    step that took itself for a draw would skip the go-out check) and, on the every-row path,
    the kept penalties that score the seats which do not discard again before their round ends.
    The twin of step 12 is loaded before its first reset (a game built only to load a state)."""
    rules = Rules(num_players=3, rounds=(1, 2, 3), max_turns_per_round=9)

    def make(reset: bool = True) -> BatchGame:
        game = BatchGame(rules, 48, seed=6, solving="kept")
        if every_row:
            game._sparse, game._kernel_backend = False, "torch"
            assert game._cached_scoring
        if reset:
            game.reset()
        return game

    source = make()
    ts = source.reset()
    greedy = BatchGreedy(rules)
    twins: list[BatchGame] = []
    for step in range(80):
        if step in (7, 12, 29):
            twin = make(reset=step != 12)
            loaded = twin.load_state(_fields(source))
            assert twin._lockstep_phase == source._lockstep_phase == step % 2
            for name in ("observation", "action_mask", "seat", "scores"):
                assert torch.equal(getattr(loaded, name), getattr(ts, name)), name
            twins.append(twin)
        actions = greedy.act(ts.observation, ts.action_mask)
        ts = source.step(actions)
        for twin in twins:
            got = twin.step(actions)
            for name in ts._fields:
                assert torch.equal(getattr(got, name), getattr(ts, name)), (step, name)
            assert all(torch.equal(v, getattr(twin.state, k)) for k, v in source.state.fields().items()), step
    assert int(ts.scores.sum()) > 0


def test_a_loaded_state_is_a_copy() -> None:
    game, other = BatchGame(Rules(), 4, seed=1), BatchGame(Rules(), 4, seed=2)
    game.reset()
    saved = _fields(other.reset() and other)
    game.load_state(saved)
    kept = _fields(game)
    for value in saved.values():
        value.zero_()
    assert all(torch.equal(v, getattr(game.state, k)) for k, v in kept.items())


def test_load_state_names_what_does_not_fit() -> None:
    game, bigger = BatchGame(Rules(), 4), BatchGame(Rules(), 5)
    game.reset()
    bigger.reset()
    hands = game.state.hands
    with pytest.raises(ValueError, match=rf"field hands must be a tensor of shape \(4, 2, 52\) and dtype {hands.dtype} "
                                         rf"\(this game's: same rules and num_tables\), got shape \(5, 2, 52\)"):
        game.load_state(_fields(bigger))
    fields = _fields(game)
    fields["turn"] = fields["turn"].float()
    with pytest.raises(ValueError, match=r"field turn must be a tensor of shape \(4,\) and dtype torch.int64 .*"
                                         r"got shape \(4,\) and dtype torch.float32"):
        game.load_state(fields)
    fields["turn"] = [0] * 4
    with pytest.raises(ValueError, match=r"field turn must be .* got a list"):
        game.load_state(fields)
    del fields["turn"]
    fields["round"] = torch.zeros(4)
    with pytest.raises(ValueError, match=r"exactly the state's fields .*: missing \['turn'\], unknown \['round'\]"):
        game.load_state(fields)
    with pytest.raises(ValueError, match=r"a mapping of the state's fields by name .*, got a list"):
        game.load_state([hands])


def test_a_load_reads_the_lockstep_from_the_tables_still_playing() -> None:
    """Finished games (``autoreset=False``) keep the phase they ended in; the tables still
    playing set the lockstep of a load, at a draw and at a discard."""
    rules = Rules(rounds=(1,), max_turns_per_round=6)
    game = BatchGame(rules, 16, seed=3, autoreset=False)
    ts = game.reset()
    agent = BatchRandom(rules, seed=1)
    for _ in range(40):
        over = game.state.game_over
        if bool(over.any()) and not bool(over.all()):
            break
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    assert bool(over.any()) and not bool(over.all())
    for _ in range(2):
        twin = BatchGame(rules, 16, seed=3, autoreset=False)
        twin.reset()
        twin.load_state(_fields(game))
        assert twin._lockstep_phase == game._lockstep_phase is not None
        ts = game.step(agent.act(ts.observation, ts.action_mask))


@pytest.mark.parametrize("call", ["reset", "reset_tables", "from_game_states", "load_state"])
def test_a_deal_or_a_load_returns_a_time_step_without_events(call: str) -> None:
    """After ``reset``, ``reset_tables``, ``from_game_states`` and ``load_state`` nothing has
    happened yet: no reward, no round or game over, nobody went out, no round points."""
    rules = Rules(num_players=3, rounds=(1, 2))
    game = BatchGame(rules, 6, seed=2)
    ts = game.reset()
    agent = BatchRandom(rules, seed=3)
    for _ in range(40):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    if call == "reset":
        ts = game.reset()
    elif call == "reset_tables":
        ts = game.reset_tables(torch.tensor([True, False] * 3))
    elif call == "from_game_states":
        ts = game.from_game_states([game.to_game_state(i) for i in range(6)])
    else:
        ts = game.load_state(_fields(game))
    assert not ts.rewards.any() and not ts.round_over.any() and not ts.game_over.any()
    assert bool((ts.went_out == -1).all()) and not ts.ended_round.any() and not ts.round_points.any()
    assert ts.final_observation is ts.observation and torch.equal(ts.scores, game.state.scores)
