"""CUDA graphs of a step (``BatchGame(cuda_graphs=True)``, ``tt_env.batch.graphs``).

A graph replays what its capture launched. These tests run the graphs' bookkeeping on a CPU with
``step_trace.RecordedGraphs``, whose replay runs the step again and fails unless it ran exactly
the captured program (the same operations, Python values and long-lived tensors, and nothing
read on the host), and check the games against eager steps. On a GPU the last test plays real
graphs against eager steps.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from step_trace import RecordedGraphs, RecordedKernel, StepTrace, stand_in

from tt_env.batch import BatchGame, go_out_filter, solver, solver_triton
from tt_env.batch.agents import BatchRandom
from tt_env.batch.graphs import StepGraphs, step_graphs
from tt_env.engine.rules import Rules


def _every_row_game(rules: Rules, tables: int, **kwargs) -> BatchGame:
    """A game on a GPU's path (every row, no CPU output pool), the C solver standing in for the
    fused meld program (whose launches are checked apart, below)."""
    kwargs.setdefault("check_actions", False)
    game = BatchGame(rules, tables, seed=4, solver="c", **kwargs)
    game._sparse = False
    game._outputs = None
    return game


def _eager_and_graphed(rules: Rules, tables: int, **kwargs) -> tuple[BatchGame, BatchGame, RecordedGraphs]:
    """Twin games on a GPU's path, the second stepped through graphs of the CPU stand-in (its backend last)."""
    eager, graphed = _every_row_game(rules, tables, **kwargs), _every_row_game(rules, tables, **kwargs)
    backend = RecordedGraphs(hosts=[graphed, graphed.state])
    graphed._graphs = StepGraphs(graphed, backend)
    return eager, graphed, backend


@pytest.fixture
def c_solver_recorded_as_one_operation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "_c_least_penalty", stand_in(solver._c_least_penalty))


def _assert_same(eager: BatchGame, graphed: BatchGame, a, b, step: int) -> None:
    for name in a._fields:
        assert torch.equal(getattr(a, name), getattr(b, name)), (step, name)
    assert (a.final_observation is a.observation) == (b.final_observation is b.observation), step
    for name, value in eager.state.fields().items():
        assert torch.equal(value, getattr(graphed.state, name)), (step, name)


CASES = {
    "3p, gathered": (Rules(num_players=3, rounds=(1, 11), max_turns_per_round=40), 300,
                     dict(kernels="torch", solving="gathered")),
    "2p, 2 decks, aces high, kept, win, no autoreset": (
        Rules(num_players=2, decks=2, aces="high_or_low", rounds=(1, 2), max_turns_per_round=30), 200,
        dict(kernels="torch", solving="kept", reward_mode="win", autoreset=False)),
    "4p, natural, penalty, the GPU's filter layout": (
        Rules(num_players=4, meld_needs_natural=True, rounds=(1, 3), max_turns_per_round=12), 200,
        dict(kernels="torch", solving="gathered", reward_mode="penalty")),
    "2p, Triton kernels (interpreted)": (Rules(num_players=2, rounds=(1, 2), max_turns_per_round=12), 90,
                                         dict(kernels="triton", solving="gathered")),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.usefixtures("c_solver_recorded_as_one_operation")
def test_replayed_steps_play_the_eager_games(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every step's TimeStep and state equal the eager twin's, through reshuffles, round ends and
    finished games, while each replay runs exactly the captured program; a returned TimeStep is
    the caller's to keep (the next replay does not write into it)."""
    rules, steps, kwargs = CASES[name]
    if "filter layout" in name:  # the tensor code's go-out filter as on a GPU: slices, not 13-bit masks
        monkeypatch.setattr(go_out_filter, "_wilds_needed_bits", go_out_filter._wilds_needed_slices)
    if kwargs["kernels"] == "triton" and not solver_triton.available():
        pytest.skip("needs Triton")
    eager, graphed, backend = _eager_and_graphed(rules, 12, **kwargs)
    a, b = eager.reset(), graphed.reset()
    agent = BatchRandom(rules, seed=2)
    games = refills = 0
    earlier = []
    for step in range(steps):
        _assert_same(eager, graphed, a, b, step)
        moves = agent.act(a.observation, a.action_mask)
        stock = eager.state.stock_len.clone()
        earlier = [*earlier[-2:], (a, b)]
        a, b = eager.step(moves), graphed.step(moves)
        for old_a, old_b in earlier:  # kept as they were (each phase's graph writes into its own outputs)
            assert torch.equal(old_a.observation, old_b.observation), step
        games += int(a.game_over.sum())
        refills += int((eager.state.stock_len > stock).sum())
    assert graphed._graphs.captured == (0, 1)
    assert backend.replays == steps - 4  # two eager warm-ups of each phase
    assert games >= 6 and refills >= 1, (games, refills)


@pytest.mark.usefixtures("c_solver_recorded_as_one_operation")
def test_steps_out_of_lockstep_run_eagerly_and_the_graphs_take_the_game_back() -> None:
    """``active=`` ends the lockstep (eager steps from then on), ``reset()`` brings it back with the
    state copied into the graphs' tensors, and a new seed, which a capture bakes in, captures again.
    (With the actions checked against the mask of the step before.)"""
    rules = Rules(num_players=3, rounds=(1, 2), max_turns_per_round=20)
    eager, graphed, backend = _eager_and_graphed(rules, 10, check_actions=True)
    agent = BatchRandom(rules, seed=5)
    a, b = eager.reset(), graphed.reset()

    def play(steps: int, active: torch.Tensor | None = None) -> None:
        nonlocal a, b
        for step in range(steps):
            _assert_same(eager, graphed, a, b, step)
            moves = agent.act(a.observation, a.action_mask)
            a, b = eager.step(moves, active), graphed.step(moves, active)
        _assert_same(eager, graphed, a, b, steps)

    play(12)
    assert graphed._graphs.captured == (0, 1) and backend.replays == 8
    play(1, active=torch.arange(10) % 2 == 0)
    play(20)
    assert backend.replays == 8  # out of lockstep: eager
    a, b = eager.reset(), graphed.reset()
    play(30)
    assert backend.replays == 38
    a, b = eager.reset(seed=9), graphed.reset(seed=9)
    play(3)
    assert graphed._graphs.captured == () and backend.replays == 38  # the new seed: warm-ups again
    play(30)
    assert graphed._graphs.captured == (0, 1) and backend.replays == 38 + 29


@pytest.mark.parametrize("solving", ["kept", "gathered"])
@pytest.mark.usefixtures("c_solver_recorded_as_one_operation")
def test_replays_go_on_after_a_load(solving: str) -> None:
    """``load_state`` of a saved state (at a discard: the lockstep read from the tables) replaces
    the state's fields and, with kept penalties, those penalties: the next replays copy them into
    the graphs' tensors and play on as eager steps do."""
    rules = Rules(num_players=3, rounds=(1, 2), max_turns_per_round=12)
    eager, graphed, backend = _eager_and_graphed(rules, 10, solving=solving)
    agent = BatchRandom(rules, seed=8)
    a, b = eager.reset(), graphed.reset()
    saved = None
    for step in range(40):
        if step == 13:
            saved = {k: v.clone() for k, v in eager.state.fields().items()}
        moves = agent.act(a.observation, a.action_mask)
        a, b = eager.step(moves), graphed.step(moves)
    replays = backend.replays
    a, b = eager.load_state(saved), graphed.load_state(saved)
    assert graphed._lockstep_phase == 1
    for step in range(40):
        _assert_same(eager, graphed, a, b, step)
        moves = agent.act(a.observation, a.action_mask)
        a, b = eager.step(moves), graphed.step(moves)
    _assert_same(eager, graphed, a, b, 40)
    assert backend.replays == replays + 40
    assert graphed.state.hands is graphed._graphs._static["hands"]


def test_a_step_the_recorder_cannot_replay_fails() -> None:
    """The stand-in's own checks: a host read, a tensor from host data, and a Python value that
    changed since the capture are each refused."""
    x = torch.arange(6)
    backend = RecordedGraphs()
    with pytest.raises(AssertionError, match="waits on the device"):
        backend.capture(lambda: (x[x > 2] + 1,), [x])
    with pytest.raises(AssertionError, match="made from host data"):
        backend.capture(lambda: (x + torch.tensor([1, 2, 3, 4, 5, 6]),), [x])
    scale = {"value": 2}
    graph, out = backend.capture(lambda: (x * scale["value"],), [x])
    backend.replay(graph)
    scale["value"] = 3
    with pytest.raises(AssertionError, match="differs from the captured one"):
        backend.replay(graph)


@pytest.mark.parametrize("rules,backend", [
    (Rules(num_players=2), "triton"),
    (Rules(num_players=5, decks=2, aces="high_or_low", meld_needs_natural=True), "triton"),
    (Rules(num_players=2), "torch"),
    (Rules(num_players=2, aces="high_or_low", meld_needs_natural=True), "torch"),  # (the plain program is slow
], ids=["fused, 1 deck", "fused, 2 decks, aces high, natural", "plain, 1 deck",  # at 2 decks on a CPU)
        "plain, 1 deck, aces high, natural"])
def test_the_meld_program_launches_the_same_program_for_any_hands(rules: Rules, backend: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The meld program with a count (gathered solving), fused or plain, launches the same kernels
    with the same arguments whatever the hands, their wild ranks and the count: what a graph of a
    step replays. (The fused kernels are recorded, not run: the interpreter takes minutes a call.)"""
    if backend == "triton":
        monkeypatch.setattr(solver_triton, "_kernels", lambda interpret: (RecordedKernel("suit_move"),
                                                                          RecordedKernel("set_pool"),
                                                                          RecordedKernel("ends")))
        monkeypatch.setattr(solver_triton, "available", lambda: True)
    gen = torch.Generator().manual_seed(1)
    traces = []
    for call in range(3):
        counts = torch.randint(0, rules.num_decks + 1, (24, 52), generator=gen, dtype=torch.uint8)
        wild = torch.randint(1, 14, (24,), generator=gen)
        prefix = torch.tensor([0, 17, 24][call])
        if call == 0:  # the first call makes the plan's tensors (cached: a warm-up step's work)
            solver.least_penalty(counts, wild, rules, backend=backend, prefix=prefix, check=False)
        with StepTrace([counts, wild, prefix]) as trace:
            solver.least_penalty(counts, wild, rules, backend=backend, prefix=prefix, check=False)
        assert not trace.refused, trace.refused
        assert sum(op[0] == "triton" for op in trace.ops) > (10 if backend == "triton" else -1)
        traces.append(trace.ops)
    assert traces[0] == traces[1] == traces[2]


def test_cuda_graphs_need_a_cuda_device() -> None:
    rules = Rules(num_players=2)
    with pytest.raises(ValueError, match="cuda_graphs=True needs a CUDA device, not device='cpu'"):
        BatchGame(rules, 4, cuda_graphs=True)
    with pytest.raises(ValueError, match="cuda_graphs='yes' is not allowed: use True or False"):
        BatchGame(rules, 4, cuda_graphs="yes")


@pytest.mark.parametrize("warmup", [0, -1, True, 1.0, "2"])
def test_warmup_is_a_count_of_one_or_more(warmup: object) -> None:
    game = BatchGame(Rules(num_players=2), 4)
    with pytest.raises(ValueError, match=rf"warmup={warmup!r} is not allowed: use an int >= 1"):
        StepGraphs(game, RecordedGraphs(), warmup=warmup)
    assert StepGraphs(game, RecordedGraphs(), warmup=1)._warmup == 1


def test_cuda_graphs_true_on_a_cuda_device_makes_the_graphs() -> None:
    """(A stand-in game on a CUDA device: nothing runs on it.) Without a backend the graphs are CUDA's."""
    from tt_env.batch.graphs import CudaGraphs

    on_cuda = SimpleNamespace(device=torch.device("cuda"))
    graphs = step_graphs(on_cuda, True)
    assert isinstance(graphs, StepGraphs) and graphs._game is on_cuda and isinstance(graphs._backend, CudaGraphs)
    assert step_graphs(on_cuda, False) is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("rules", [Rules(num_players=2), Rules(num_players=4, decks=2, aces="high_or_low"),
                                   Rules(num_players=3, rounds=(1, 2), max_turns_per_round=12)],
                         ids=["2p", "4p, 2 decks, aces high", "3p, short rounds"])
def test_cuda_graphs_play_the_eager_games_on_cuda(rules: Rules) -> None:
    """Real CUDA graphs against eager steps on a GPU: every TimeStep and state, 300 steps."""
    eager = BatchGame(rules, 1024, device="cuda", seed=3, check_actions=False)
    graphed = BatchGame(rules, 1024, device="cuda", seed=3, check_actions=False, cuda_graphs=True)
    agent = BatchRandom(rules, seed=2, device="cuda")
    a, b = eager.reset(), graphed.reset()
    for step in range(300):
        _assert_same(eager, graphed, a, b, step)
        moves = agent.act(a.observation, a.action_mask)
        a, b = eager.step(moves), graphed.step(moves)
    assert graphed._graphs.captured == (0, 1)


@pytest.mark.usefixtures("c_solver_recorded_as_one_operation")
def test_a_graph_s_long_lived_tensors_outlive_other_games() -> None:
    """A graph holds the addresses of the cached tensors a step reads, not the tensors: games of
    many other batch sizes in between must not evict them (a replay would then read freed memory;
    here the replay's trace would name another tensor)."""
    rules = Rules(num_players=2, rounds=(1,), max_turns_per_round=12)
    eager, graphed, _ = _eager_and_graphed(rules, 8, kernels="torch")
    agent = BatchRandom(rules, seed=1)
    a, b = eager.reset(), graphed.reset()
    for step in range(40):
        if step == 10:  # both phases captured: now other games, one step each at 24 batch sizes
            for size in range(9, 33):
                other = _every_row_game(rules, size, kernels="torch")
                ts = other.reset()
                other.step(agent.act(ts.observation, ts.action_mask))
        _assert_same(eager, graphed, a, b, step)
        moves = agent.act(a.observation, a.action_mask)
        a, b = eager.step(moves), graphed.step(moves)
    assert graphed._graphs.captured == (0, 1)


@pytest.mark.parametrize("attribute,value", [("autoreset", False), ("reward_mode", "win")])
@pytest.mark.usefixtures("c_solver_recorded_as_one_operation")
def test_a_changed_setting_that_a_graph_bakes_in_captures_again(attribute: str, value: object) -> None:
    rules = Rules(num_players=2, rounds=(1,), max_turns_per_round=6)
    eager, graphed = _every_row_game(rules, 6), _every_row_game(rules, 6)
    graphed._graphs = StepGraphs(graphed, RecordedGraphs(hosts=[graphed, graphed.state]))
    agent = BatchRandom(rules, seed=3)
    a, b = eager.reset(), graphed.reset()
    ended = 0
    for step in range(60):
        if step == 10:
            setattr(eager, attribute, value)
            setattr(graphed, attribute, value)
        _assert_same(eager, graphed, a, b, step)
        ended += int(a.game_over.sum()) if step > 10 else 0
        moves = agent.act(a.observation, a.action_mask)
        a, b = eager.step(moves), graphed.step(moves)
    assert ended > 0 and graphed._graphs.captured == (0, 1)
