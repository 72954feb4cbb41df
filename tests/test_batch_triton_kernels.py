"""The step's fused Triton kernels (the GPU's fast path) against the tensor code, run in Triton's
interpreter on a CPU: the observation and mask (``tt_env.batch.observe_triton``), the deals and
the stock refills (``tt_env.batch.deal_triton``), the moves and the end of the turns
(``tt_env.batch.moves_triton``).

The tensor code is checked against the scalar engine in ``tests/test_batch_observe.py`` and
``tests/test_batch_engine.py``; here each kernel must give the same values: the observation's
float32 values and mask bits on the states of random play (every seat's view, finished games,
the options) and on a hand made of the card just taken only; the deals and refills on masked
rows, at 1 to 4 decks; and the engine's every-row path with all of them, step after step, with
refills, partial steps and unchecked illegal draws. Then every kernel is compiled for a GPU
(sm_90) without one, which catches what the interpreter accepts and the compiler does not. The
kernels compiled on CUDA are checked by the engine's GPU tests (``tests/test_batch_engine.py``).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from test_batch_moves import assert_same
from test_batch_observe import RULES, views

from tt_env.batch import BatchGame, deal_triton, go_out_filter_triton, moves_triton, solver_triton
from tt_env.batch import observe_triton as triton_module
from tt_env.batch.agents import BatchRandom
from tt_env.batch.deal import deals_in_triton
from tt_env.batch.game import _FIRST_DEALER_SALT
from tt_env.batch.go_out_filter import _wilds_needed_slices, could_meld_completely
from tt_env.batch.observe import observe, observe_and_mask
from tt_env.engine.rules import Rules

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_batch_solver import melded_counts, random_counts  # noqa: E402

needs_triton = pytest.mark.skipif(not solver_triton.available(), reason="Triton is not installed")


@needs_triton
@pytest.mark.parametrize("name", [name for name in RULES if name != "2p huge turn limit"])
def test_the_kernel_writes_what_the_tensor_code_computes(name: str) -> None:
    rules = RULES[name]
    game = BatchGame(rules, 40, seed=4, autoreset=False)  # 40 tables: a second, partial block of 32
    agent = BatchRandom(rules, seed=6)
    ts = game.reset()
    rounds_ended = finished = 0
    for step in range(1, 221):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
        rounds_ended += int(ts.round_over.sum())
        finished += int(ts.game_over.sum())
        if step % 20 == 0:
            for fused, reference in zip(views(game, "triton"), views(game, "torch"), strict=True):
                assert fused.dtype == reference.dtype and torch.equal(fused, reference)
    assert rounds_ended > 40 and finished > 0  # states of later rounds and finished games were compared too


@needs_triton
def test_a_hand_of_only_the_taken_card_may_discard_it() -> None:
    """The card just taken may go back only when the hand holds nothing else (here four copies of
    it, at 4 decks): the kernel reads the whole hand for that, as the tensor code sums it."""
    rules = Rules(num_players=2, decks=4, discard_drawn_discard=False)
    game = BatchGame(rules, 3, seed=1)
    game.reset()
    s = game.state
    s.phase.fill_(1)
    s.taken[:] = torch.tensor([9, 9, -1])
    s.hands[:, :, :] = 0
    s.hands[0, s.current[0], 9] = 4  # only the taken card: it may go back
    s.hands[1, s.current[1], 9] = 3  # the taken card and another: it may not
    s.hands[1, s.current[1], 30] = 1
    s.hands[2, s.current[2], 9] = 4  # nothing taken
    args = (s, game.round_number, game.shoe_size, rules.max_turns_per_round, False)
    mask, reference = observe_and_mask(*args, backend="triton")[1], observe_and_mask(*args, backend="torch")[1]
    assert torch.equal(mask, reference)
    assert mask[0, 2 + 9] and not mask[1, 2 + 9] and mask[1, 2 + 30] and mask[2, 2 + 9]


@needs_triton
def test_the_draws_follow_the_stock_and_the_pile() -> None:
    """The two draw actions at the edges: an empty stock may be drawn from only when the pile
    holds more than its top (a refill needs cards under it), the top only when there is one."""
    game = BatchGame(Rules(), 6, seed=1)
    game.reset()
    s = game.state
    s.stock_len[:] = torch.tensor([0, 0, 0, 5, 5, 0])
    s.pile_len[:] = torch.tensor([0, 1, 2, 0, 1, 3])
    args = (s, game.round_number, game.shoe_size, 200, False)
    mask, reference = observe_and_mask(*args, backend="triton")[1], observe_and_mask(*args, backend="torch")[1]
    assert torch.equal(mask, reference)
    assert mask[:, 0].tolist() == [False, False, True, True, True, True]
    assert mask[:, 1].tolist() == [False, True, True, False, True, True]


@needs_triton
def test_out_receives_the_observation() -> None:
    game = BatchGame(Rules(num_players=3), 5, seed=2)
    game.reset()
    args = (game.state, game.round_number, game.shoe_size, 200, False)
    out = torch.full((5, 401), -7.0)
    obs, _ = observe_and_mask(*args, backend="triton", out=out)
    assert obs is out and torch.equal(out, observe_and_mask(*args, backend="torch")[0])


@needs_triton
@pytest.mark.parametrize("players, decks", [(2, "auto"), (3, 2), (5, "auto"), (4, 4)])
def test_the_deal_and_refill_kernels_write_what_the_tensor_code_does(players: int, decks: object) -> None:
    """Masked rows dealt (next rounds and new games mixed) and refilled, in place, against
    ``BatchGame._deal`` and ``_reshuffle`` on the every-row path: every field, the rows outside
    the mask untouched."""
    rules = Rules(num_players=players, decks=decks, rounds=(1, 5, 11), max_turns_per_round=100)
    game = BatchGame(rules, 37, seed=players)  # 37 tables: three blocks of 16, the last partial
    game._sparse, game._kernel_backend = False, "torch"
    agent = BatchRandom(rules, seed=1)
    ts = game.reset()
    for _ in range(15):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    generator = torch.Generator().manual_seed(players)
    todo, fresh = torch.rand(37, generator=generator) < 0.5, torch.rand(37, generator=generator) < 0.4
    game.state.game_over = torch.arange(37) % 3 == 0  # a finished game keeps its flag unless dealt afresh
    before = copy.deepcopy(game.state)
    by_kernel = copy.deepcopy(game.state)
    game._on_rows(todo, game._deal, fresh.clone())
    deal_triton.deal_masked(by_kernel, todo, fresh, game._seed32, game._rounds, _FIRST_DEALER_SALT)
    for name, value in game.state.fields().items():
        assert torch.equal(getattr(by_kernel, name), value), name
        assert torch.equal(value[~todo], getattr(before, name)[~todo]), name
    game._on_rows(todo, game._reshuffle)
    deal_triton.reshuffle_masked(by_kernel, todo, game._seed32)
    for name, value in game.state.fields().items():
        assert torch.equal(getattr(by_kernel, name), value), name


@needs_triton
@pytest.mark.parametrize("players", [3, 4])
def test_the_every_row_path_plays_the_same_games_with_the_kernels(players: int,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine as a GPU runs it (every row, ``solving="gathered"``) with the kernels for every
    observation, mask, final observation, deal and refill, against the same path with the tensor
    code: every field of the state and of the TimeStep after every step, across stock refills,
    round ends and new games."""
    # 3 players, 1 deck: one round of 13 cards, whose stock of 12 runs out; 4 players: short rounds, new games
    rules = Rules(num_players=3, decks=1, rounds=(11,), max_turns_per_round=40) if players == 3 else \
        Rules(num_players=4, rounds=(1, 2), max_turns_per_round=12)
    games = []
    for backend in ("triton", "torch"):
        game = BatchGame(rules, 12, seed=8, solving="gathered")
        game._sparse, game._kernel_backend = False, backend
        games.append(game)
    filtered = []  # the go-out filter's kernel runs in the kernels' game (the filter itself is tested apart)
    kernel_filter = go_out_filter_triton.could_meld_completely
    monkeypatch.setattr(go_out_filter_triton, "could_meld_completely",
                        lambda *args: (filtered.append(1), kernel_filter(*args))[1])
    refills = []
    refill = games[0]._refill_stocks
    games[0]._refill_stocks = lambda empty: (refills.append(int(empty.sum())), refill(empty))
    agent = BatchRandom(rules, seed=3)
    fused_ts, torch_ts = games[0].reset(), games[1].reset()
    assert_same(*games, fused_ts, torch_ts)
    finished = 0
    for _ in range(90 if players == 3 else 60):
        actions = agent.act(torch_ts.observation, torch_ts.action_mask)
        fused_ts, torch_ts = games[0].step(actions), games[1].step(actions)
        assert_same(*games, fused_ts, torch_ts)
        finished += int(torch_ts.game_over.sum())
    assert finished > 0  # final observations and new games' deals were made by the kernels too
    assert len(filtered) > 10
    if players == 3:
        assert sum(refills) > 0  # stocks ran out and were refilled by the kernel


@needs_triton
def test_the_filter_kernel_counts_as_both_layouts() -> None:
    """The go-out filter's kernel keeps exactly the hands the tensor code keeps (both layouts):
    hands built from melds and random hands, 1 to 4 decks, every wild rank and none."""
    rng = np.random.default_rng(5)
    kept_all = dropped = 0
    for decks in (1, 2, 3, 4):
        for counts, wilds in (melded_counts(rng, 700, decks), (random_counts(rng, 700, decks),
                                                                rng.integers(0, 14, 700))):
            counts_t, wilds_t = torch.from_numpy(counts).to(torch.uint8), torch.from_numpy(wilds)
            kept = could_meld_completely(counts_t, wilds_t, backend="triton")
            assert torch.equal(kept, could_meld_completely(counts_t, wilds_t, backend="torch"))
            wilds_have, needed, melds = _wilds_needed_slices(counts_t.view(-1, 4, 13), wilds_t)
            assert torch.equal(kept, wilds_have >= torch.maximum(needed, melds))
            kept_all, dropped = kept_all + int(kept.sum()), dropped + int((~kept).sum())
    assert kept_all > 1000 and dropped > 1000  # both answers, many times


@needs_triton
def test_partial_steps_and_unchecked_actions_match_with_the_kernels() -> None:
    """``active`` (the multi-agent loops' partial steps) and, with ``check_actions=False``, an
    illegal action id (a discard's id for a draw, played as the first legal action): the moves
    kernel takes them as the tensor code does."""
    rules = Rules(num_players=3, discard_drawn_discard=True, rounds=(4, 5), max_turns_per_round=30)
    games = []
    for backend in ("triton", "torch"):
        game = BatchGame(rules, 20, seed=2, check_actions=False, solving="gathered")
        game._sparse, game._kernel_backend = False, backend
        games.append(game)
    agent = BatchRandom(rules, seed=4)
    generator = torch.Generator().manual_seed(6)
    fused_ts, torch_ts = games[0].reset(), games[1].reset()
    illegal = 0
    for step in range(50):
        actions = agent.act(torch_ts.observation, torch_ts.action_mask)
        active = torch.rand(20, generator=generator) < 0.6
        if step in (3, 40):
            drawing = (games[1].state.phase == 0) & ~games[1].state.game_over
            actions = torch.where(drawing, torch.randint(2, 54, (20,), generator=generator), actions)
            illegal += int((drawing & active).sum())
        fused_ts, torch_ts = games[0].step(actions, active), games[1].step(actions, active)
        assert_same(*games, fused_ts, torch_ts)
    assert illegal > 0


@pytest.mark.skipif(not torch.cuda.is_available() or not solver_triton.available(),
                    reason="needs a CUDA GPU and Triton")
@pytest.mark.parametrize("rules", [Rules(num_players=2, rounds=(1, 11), max_turns_per_round=60),
                                   Rules(num_players=5, decks=4, aces="high_or_low", rounds=(3, 4)),
                                   Rules(num_players=8, discard_drawn_discard=True, rounds=(1, 2),
                                         max_turns_per_round=20)],
                         ids=["2p", "5p 4 decks aces high", "8p ddd"])
def test_the_compiled_kernels_play_the_tensor_code_s_games_on_cuda(rules: Rules) -> None:
    """On a GPU: the engine with the compiled kernels (the default there) against the same
    engine with the tensor code, every field after every step, 512 tables."""
    games = []
    for backend in ("auto", "torch"):
        game = BatchGame(rules, 512, device="cuda", seed=3)
        game._kernel_backend = backend
        games.append(game)
    agent = BatchRandom(rules, seed=2, device="cuda")
    fused_ts, torch_ts = games[0].reset(), games[1].reset()
    for _ in range(200):
        actions = agent.act(torch_ts.observation, torch_ts.action_mask)
        fused_ts, torch_ts = games[0].step(actions), games[1].step(actions)
        assert_same(*games, fused_ts, torch_ts)


@needs_triton
def test_kernels_triton_on_a_cpu_plays_the_c_loops_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """``BatchGame(..., kernels="triton")`` on a CPU's own path (the rare parts on just the rows
    that need them): the kernels, interpreted, play the games the C loops play."""
    calls = {"observe": 0, "moves": 0}

    def counting(key: str, fn):
        def counted(*args, **kwargs):
            calls[key] += 1
            return fn(*args, **kwargs)
        return counted

    monkeypatch.setattr(triton_module, "observe_and_mask", counting("observe", triton_module.observe_and_mask))
    monkeypatch.setattr(moves_triton, "apply_moves", counting("moves", moves_triton.apply_moves))
    rules = Rules(num_players=3, decks=1, rounds=(10, 11), max_turns_per_round=30)
    by_c, by_kernels = BatchGame(rules, 10, seed=6), BatchGame(rules, 10, seed=6, kernels="triton")
    agent = BatchRandom(rules, seed=7)
    c_ts, fused_ts = by_c.reset(), by_kernels.reset()
    for _ in range(70):
        actions = agent.act(c_ts.observation, c_ts.action_mask)
        c_ts, fused_ts = by_c.step(actions), by_kernels.step(actions)
        assert_same(by_c, by_kernels, c_ts, fused_ts)
    assert calls == {"observe": 71, "moves": 70}  # the kernels game's steps, not the C loops game's


def test_triton_is_asked_for_by_name_and_refused_with_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    game = BatchGame(Rules(rounds=(1, 2), max_turns_per_round=2**24 + 1), 2)
    game.reset()
    args = (game.state, game.round_number, game.shoe_size, game.rules.max_turns_per_round)
    monkeypatch.setattr(solver_triton, "available", lambda: True)
    with pytest.raises(ValueError, match=r"backend='triton' needs divisors that float32 holds as whole numbers "
                                         r"\(num_cards=52, max_turns=16777217\): use 'torch' or 'auto'"):
        observe(*args, backend="triton")
    monkeypatch.setattr(solver_triton, "available", lambda: False)
    for call in (lambda: observe(game.state, game.round_number, game.shoe_size, 200, backend="triton"),
                 lambda: deals_in_triton(torch.device("cpu"), "triton")):
        with pytest.raises(ValueError, match=r"backend='triton' needs Triton \(pip install -e '.\[gpu\]'\)"):
            call()


@pytest.mark.parametrize("values, usable", [((52, 200, 14.0, 100.0), True), ((52, 200, 14.5, 100.0), False),
                                            ((52, 2**24 + 1, 14.0, 100.0), False), ((52, 0, 14.0, 100.0), False),
                                            ((1, 1, 1.0, 1.0), True), ((2**24, 2**24, 2.0**24, 2.0**24), True)])
def test_usable_asks_for_whole_divisors_float32_holds(values: tuple, usable: bool) -> None:
    assert triton_module.usable(*values) is usable


def test_auto_takes_the_kernel_on_cuda_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """``"auto"`` means the C loops on a CPU and the kernels on CUDA (when Triton is there and, for
    the observation, the divisors allow): asked of the choices themselves, for a CPU, the meta
    device and a stand-in for CUDA."""
    from tt_env.batch import observe as observe_module
    from tt_env.batch.state import BatchState

    monkeypatch.setattr(solver_triton, "available", lambda: True)
    cpu = BatchState.empty(2, 2, 52, torch.device("cpu"))
    meta = BatchState.empty(2, 2, 52, torch.device("meta"))
    expected_cpu = "torch" if observe_module._c_observe_and_mask is None else "c"
    assert observe_module._kernel(cpu, "auto", 52, 200) == expected_cpu
    assert observe_module._kernel(meta, "auto", 52, 200) == "torch"  # neither CPU nor CUDA
    assert observe_module._kernel(cpu, "triton", 52, 200) == "triton"
    assert observe_module._kernel(cpu, "torch", 52, 200) == "torch"
    cuda = SimpleNamespace(hands=SimpleNamespace(device=SimpleNamespace(type="cuda")))  # no GPU needed
    assert observe_module._kernel(cuda, "auto", 52, 200) == "triton"
    assert observe_module._kernel(cuda, "auto", 52, 2**25) == "torch"  # a divisor float32 does not hold
    assert observe_module._kernel(cuda, "torch", 52, 200) == "torch"
    assert deals_in_triton(cuda.hands.device, "auto") and not deals_in_triton(torch.device("cpu"), "auto")
    assert not deals_in_triton(cuda.hands.device, "torch") and not deals_in_triton(cuda.hands.device, "c")
    monkeypatch.setattr(solver_triton, "available", lambda: False)
    assert observe_module._kernel(cuda, "auto", 52, 200) == "torch"
    assert not deals_in_triton(cuda.hands.device, "auto")


TENSOR_TYPES = {torch.float32: "*fp32", torch.int64: "*i64", torch.uint8: "*u8", torch.int8: "*i8", torch.bool: "*u8"}


def compile_for_gpu(kernel, args: list, constexprs: dict):
    """Compile a ``triton.jit`` kernel for an NVIDIA H100/H200 (sm_90) ahead of time, on a CPU:
    the argument types from example ``args`` (the kernel's other parameters, in order). Twice:
    as given, and with every integer argument 1, which Triton's launcher turns into a constant
    (``tl.constexpr``: a Python int in the kernel, without ``.to``); returns the first."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    runtime = [p.name for p in kernel.params if not p.is_constexpr]
    assert len(runtime) == len(args) and set(constexprs) == {p.name for p in kernel.params if p.is_constexpr}
    signature = {name: TENSOR_TYPES[v.dtype] if isinstance(v, torch.Tensor) else "fp32" if isinstance(v, float)
                 else "i32" if -2**31 <= v < 2**31 else "i64" for name, v in zip(runtime, args, strict=True)}
    ones = {name: 1 for name, v in zip(runtime, args, strict=True) if isinstance(v, int)}
    compiled = []
    for constants in (constexprs, constexprs | ones):
        types = signature | {name: "constexpr" for name in constants}
        compiled.append(triton.compile(ASTSource(fn=kernel, signature=types, constexprs=constants),
                                       target=GPUTarget("cuda", 90, 32)))
    return compiled[0]


def _nvidia_backend() -> bool:
    if not solver_triton.available():
        return False
    from triton.backends import backends

    return "nvidia" in backends


@pytest.mark.skipif(not _nvidia_backend(), reason="Triton with its NVIDIA backend is not installed")
def test_every_kernel_compiles_for_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the interpreter runs, the compiler must take too: a global the kernel may not read, a
    variable whose type a branch changes, an integer argument of 1 made a constant, and the like
    fail only here. Compiled for sm_90 (no GPU
    needed): the observation (with and without its mask; its scaled pieces checked to be
    correctly rounded quotients, ``div.rn``), the deal, the refill, the moves (every table and
    some) and the end of the turns."""
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, said out loud (no warning)
    players = 3
    game = BatchGame(Rules(num_players=players), 4)
    game.reset()
    s = game.state
    flags = torch.zeros(4, dtype=torch.uint8)
    observe_kernel = triton_module._kernel(False)
    observe_args = [s.hands, s.pile_counts, s.known_taken, s.discards, s.pile, s.pile_len, s.current, s.current,
                    s.phase, s.went_out, game.round_number, s.stock_len, s.scores, s.turn, flags, s.taken,
                    torch.empty(4, 107 * players + 80), torch.empty(4, 54, dtype=torch.int8), 4, game.shoe_size,
                    52.0, 200.0, 14.0, 100.0]
    for with_mask in (True, False):
        compiled = compile_for_gpu(observe_kernel, observe_args, dict(
            N=players, WIDTH=107 * players + 80, WITH_MASK=with_mask, DRAWN_BACK=False, ACTIONS=54, BLOCK=32))
        assert "div.rn.f32" in compiled.asm["ptx"] and compiled.asm["cubin"]
    deal, refill = deal_triton._kernels(False)
    size = game.shoe_size
    shapes = dict(S=size, S_P=deal_triton._padded(size), BLOCK=deal_triton.BLOCK_TABLES)
    fields = [getattr(s, name) for name in deal_triton._DEAL_FIELDS]
    assert compile_for_gpu(deal, [flags, flags, game._rounds, *fields, flags, s.counter, 4, 3_000_000_000,
                                  _FIRST_DEALER_SALT, 11], dict(N=players, **shapes)).asm["cubin"]
    refill_fields = [getattr(s, name) for name in deal_triton._REFILL_FIELDS]
    assert compile_for_gpu(refill, [flags, *refill_fields, 4, 12345], shapes).asm["cubin"]
    moves, end = moves_triton._kernels(False)
    move_fields = [getattr(s, name) for name in moves_triton._MOVE_FIELDS]
    signs = torch.zeros(4, dtype=torch.int8)
    for every_table in (True, False):
        assert compile_for_gpu(moves, [s.turn, flags, flags, *move_fields, signs, 4], dict(
            N=players, S=size, ALL=every_table, BLOCK=moves_triton.BLOCK_TABLES)).asm["cubin"]
    assert compile_for_gpu(end, [flags, flags, s.current, s.phase, s.went_out, s.turn, s.turn, signs, 4, 200],
                           dict(N=players, BLOCK=moves_triton.BLOCK_TABLES)).asm["cubin"]
    hands = torch.zeros(4, 52, dtype=torch.uint8)
    assert compile_for_gpu(go_out_filter_triton._kernel(False), [hands, s.turn, signs, 4],
                           dict(BLOCK=go_out_filter_triton.BLOCK_HANDS)).asm["cubin"]
