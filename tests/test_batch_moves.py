"""The CPU kernels of a step against the tensor code: the moves, the end of each turn, the deals and
stock refills, random-v0's pick.

``tests/test_batch_engine.py`` plays the engine against the scalar engine step by step through
whichever backend ``"auto"`` picks (the C loops on a CPU when built). Here the C loops
(``tt_env/batch/_kernels_moves.c``, ``_kernels_deal.c``, ``_kernels_pick.c``) are checked against the tensor code (a
GPU's path) on the same games: every field of the state and of the TimeStep after every step,
with stock refills, partial steps (``active``), finished games, and unchecked actions; then the
C loops' input errors.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tt_env.batch import BatchGame
from tt_env.batch import agents as agents_module
from tt_env.batch import deal as deal_module
from tt_env.batch import game as game_module
from tt_env.batch import moves as moves_module
from tt_env.batch import observe as observe_module
from tt_env.batch.agents import BatchRandom, nth_legal
from tt_env.batch.moves import apply_moves, end_turns
from tt_env.batch.state import BatchState
from tt_env.engine.rules import Rules

needs_c = pytest.mark.skipif(moves_module._c_apply_moves is None, reason="the C extension is not built")

RULES = {
    "2p long rounds": Rules(rounds=(1, 11), max_turns_per_round=120),  # the stock runs out: refills
    "3p aces high natural": Rules(num_players=3, aces="high_or_low", meld_needs_natural=True, rounds=(1, 11),
                                  max_turns_per_round=24),
    "4p ddd short": Rules(num_players=4, discard_drawn_discard=True, rounds=(2, 9), max_turns_per_round=9),
    "5p 2 decks": Rules(num_players=5, rounds=(1, 3), max_turns_per_round=60),
    "8p": Rules(num_players=8, rounds=(1, 11), max_turns_per_round=40),
}


def twin_games(rules: Rules, tables: int, seed: int, **kwargs: object) -> tuple[BatchGame, BatchGame]:
    """The same games twice: by the C loops (the CPU's default) and by the tensor code."""
    by_c, by_torch = BatchGame(rules, tables, seed=seed, **kwargs), BatchGame(rules, tables, seed=seed, **kwargs)
    by_torch._kernel_backend = "torch"
    return by_c, by_torch


def assert_same(c_game: BatchGame, torch_game: BatchGame, c_ts: tuple, torch_ts: tuple) -> None:
    for name, c_value in c_game.state.fields().items():
        t_value = getattr(torch_game.state, name)
        assert c_value.dtype == t_value.dtype and torch.equal(c_value, t_value), name
    for name, c_value, t_value in zip(c_ts._fields, c_ts, torch_ts, strict=True):
        assert c_value.dtype == t_value.dtype and torch.equal(c_value, t_value), name


@needs_c
@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize("autoreset", [True, False])
def test_the_c_loops_play_what_the_tensor_code_plays(name: str, autoreset: bool) -> None:
    rules = RULES[name]
    c_game, torch_game = twin_games(rules, 16, seed=7, autoreset=autoreset)
    refills = []
    refill = c_game._refill_stocks
    c_game._refill_stocks = lambda empty: (refills.append(int(empty.sum())), refill(empty))
    agent = BatchRandom(rules, seed=9)
    c_ts, torch_ts = c_game.reset(), torch_game.reset()
    assert_same(c_game, torch_game, c_ts, torch_ts)
    finished = 0
    for _ in range(500):
        actions = agent.act(c_ts.observation, c_ts.action_mask)
        c_ts, torch_ts = c_game.step(actions), torch_game.step(actions)
        assert_same(c_game, torch_game, c_ts, torch_ts)
        finished += int(c_ts.game_over.sum())
    assert finished > 0  # finished games (and, without autoreset, tables that no longer move) too
    if name == "2p long rounds":
        assert sum(refills) > 0  # empty stocks were refilled between the C loop's two calls


@needs_c
def test_partial_steps_and_unchecked_actions_match() -> None:
    """``active`` (the multi-agent loops' partial steps) and, with ``check_actions=False``, an
    illegal action id: the C loops take them as the tensor code does."""
    rules = Rules(num_players=3, rounds=(4, 5), max_turns_per_round=30)
    c_game, torch_game = twin_games(rules, 32, seed=2, check_actions=False)
    agent = BatchRandom(rules, seed=4)
    gen = torch.Generator().manual_seed(6)
    c_ts, torch_ts = c_game.reset(), torch_game.reset()
    illegal = 0
    for step in range(300):
        actions = agent.act(c_ts.observation, c_ts.action_mask)
        active = torch.rand(32, generator=gen) < 0.6
        if step in (3, 40):  # a discard's id for a draw (unchecked: played as the first legal action)
            drawing = (c_game.state.phase == 0) & ~c_game.state.game_over
            actions = torch.where(drawing, torch.randint(2, 54, (32,), generator=gen), actions)
            illegal += int((drawing & active).sum())
        c_ts, torch_ts = c_game.step(actions, active), torch_game.step(actions, active)
        assert_same(c_game, torch_game, c_ts, torch_ts)
    assert illegal > 0  # illegal draws were played


@needs_c
@pytest.mark.parametrize("density", [0.0, 0.04, 0.3, 1.0])
def test_random_v0_picks_the_same_action_in_c(density: float) -> None:
    gen = torch.Generator().manual_seed(int(density * 100))
    mask = torch.rand(2000, 54, generator=gen) < density
    mask[:40] = False
    mask[40:80, 53] = True  # the last column alone, or with others
    u = torch.rand(2000, generator=gen)
    u[::7] = 1.0 - 2.0**-24  # the largest float32 below 1: int(u * L) may round up to L
    u[1::7] = 0.0
    c_actions, torch_actions = nth_legal(mask, u, backend="c"), nth_legal(mask, u, backend="torch")
    assert torch.equal(c_actions, torch_actions)
    legal = mask.gather(1, c_actions.unsqueeze(1)).squeeze(1)
    assert bool((legal | ~mask.any(1)).all()) and not bool(c_actions[~mask.any(1)].any())


def test_backends_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    game = BatchGame(Rules(), 2)
    game.reset()
    actions = torch.zeros(2, dtype=torch.int64)
    flags = torch.zeros(2, dtype=torch.bool)
    with pytest.raises(ValueError, match="backend='fast' is not allowed: use one of auto, c, torch, triton"):
        apply_moves(game.state, actions, None, lambda empty: None, backend="fast")
    with pytest.raises(ValueError, match="backend='gpu' is not allowed: use one of auto, c, torch, triton"):
        end_turns(game.state, flags, flags, 200, backend="gpu")
    with pytest.raises(ValueError, match="backend='gpu' is not allowed: use one of auto, c, torch, triton"):
        nth_legal(torch.ones(2, 54, dtype=torch.bool), torch.zeros(2), backend="gpu")
    if moves_module._c_apply_moves is not None:  # a state off the CPU (here: shapes only) is refused
        elsewhere = BatchState.empty(2, 2, 52, torch.device("meta"))
        with pytest.raises(ValueError, match="and CPU tensors; these are on meta"):
            apply_moves(elsewhere, actions.to("meta"), None, lambda empty: None, backend="c")
        with pytest.raises(ValueError, match="and CPU tensors; these are on meta"):
            nth_legal(torch.ones(2, 54, dtype=torch.bool, device="meta"), torch.zeros(2, device="meta"), backend="c")
    monkeypatch.setattr(moves_module, "_c_apply_moves", None)
    monkeypatch.setattr(moves_module, "_c_end_turns", None)
    monkeypatch.setattr(agents_module, "_c_nth_legal", None)
    with pytest.raises(ValueError, match="backend='c' needs the built C extension"):
        end_turns(game.state, flags, flags, 200, backend="c")
    with pytest.raises(ValueError, match="backend='c' needs the built C extension"):
        nth_legal(torch.ones(2, 54, dtype=torch.bool), torch.zeros(2), backend="c")
    assert apply_moves(game.state, actions, None, lambda empty: None).tolist() == [False, False]  # "auto": torch


def _no_c_loop(*args: object) -> None:
    raise AssertionError("a C loop ran where the tensor code was asked for")


def test_the_engine_s_torch_path_never_runs_the_c_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    """``BatchGame._kernel_backend = "torch"`` (the GPU's path on a CPU) runs no C loop of a step:
    not the moves, the end of the turns, the observation, the go-out check's hands or the deals,
    through finished games."""
    for module, name in [(moves_module, "_c_apply_moves"), (moves_module, "_c_end_turns"),
                         (observe_module, "_c_observe_and_mask"), (observe_module, "_c_seat_hands"),
                         (deal_module, "_c_deal_rows"), (deal_module, "_c_reshuffle_rows")]:
        monkeypatch.setattr(module, name, _no_c_loop)
    rules = Rules(rounds=(1,), max_turns_per_round=40)
    game = BatchGame(rules, 8, seed=1)
    game._kernel_backend = "torch"
    agent = BatchRandom(rules, seed=1)
    agent_pick = agents_module._c_nth_legal
    monkeypatch.setattr(agents_module, "_c_nth_legal", None)  # the agent by the tensor code too
    ts = game.reset()
    finished = 0
    for _ in range(120):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
        finished += int(ts.game_over.sum())
    assert finished >= 8
    monkeypatch.setattr(agents_module, "_c_nth_legal", agent_pick)
    with pytest.raises(AssertionError, match="a C loop ran"):
        end_turns(game.state, ts.game_over, ts.game_over, 40)  # "auto" takes it


@needs_c
def test_the_move_loops_name_bad_input() -> None:
    game = BatchGame(Rules(num_players=3), 4)
    game.reset()
    s = game.state
    ok = dict(actions=torch.zeros(4, dtype=torch.int64), active=None, hands=s.hands, pile_counts=s.pile_counts,
              known_taken=s.known_taken, discards=s.discards, passed=s.passed, stock=s.stock,
              stock_len=s.stock_len, pile=s.pile, pile_len=s.pile_len, current=s.current, phase=s.phase,
              game_over=s.game_over, taken=s.taken, turn=s.turn)

    def call(n: int = 3, **changes: torch.Tensor | None) -> int:
        buffers = [None if t is None else t.clone().contiguous().numpy() for t in (ok | changes).values()]
        return moves_module._c_apply_moves(n, False, *buffers, np.zeros(4, dtype=bool), np.zeros(4, dtype=bool))

    assert call() == 0  # the state as it is passes (and is changed only in copies)
    with pytest.raises(TypeError, match="hands must be a contiguous float32 buffer, not format 'd'"):
        call(hands=s.hands.double())
    with pytest.raises(TypeError, match="phase must be a contiguous int64 buffer"):
        call(phase=s.phase.int())
    with pytest.raises(TypeError, match="active must be a contiguous bool buffer"):
        call(active=torch.ones(4, dtype=torch.int64))
    shoe = game.shoe_size
    with pytest.raises(ValueError, match=f"pile has {4 * shoe - 24} entries, expected {4 * shoe} for 4 tables of 3 "):
        call(pile=s.pile[:, :-6])
    with pytest.raises(ValueError, match="num_players=1 is not allowed: use 2..8"):
        call(n=1)
    for field, value in [("current", 3), ("phase", 2), ("stock_len", -1), ("pile_len", "above")]:
        bad = ok[field].clone()
        bad[2] = value if value != "above" else shoe + 1
        with pytest.raises(ValueError, match=f"table 2: its {field} is outside what a game state holds"):
            call(**{field: bad})
    bad_stock = s.stock.clone()
    bad_stock[1, int(s.stock_len[1]) - 1] = -3
    with pytest.raises(ValueError, match="table 1: its stock is outside"):
        call(stock=bad_stock)
    finished = s.game_over.clone()
    finished[1] = True
    bad_stock[1, int(s.stock_len[1]) - 1] = 60
    with pytest.raises(ValueError, match="table 1: its stock is outside"):
        call(stock=bad_stock)
    assert call(stock=bad_stock, game_over=finished) == 0  # a finished table is not read
    empty = s.stock_len.clone()
    empty[[0, 3]] = 0
    assert call(stock_len=empty) == 2  # two stock draws from an empty stock: nothing done, refill first

    flags = torch.zeros(4, dtype=torch.bool)
    out = (np.zeros(4, dtype=np.int64), np.zeros(4, dtype=bool))
    bad_current = s.current.clone()
    bad_current[0] = -1
    with pytest.raises(ValueError, match="table 0: its current is outside what a game state holds"):
        moves_module._c_end_turns(3, 200, flags.numpy(), flags.numpy(), bad_current.numpy(), s.phase.clone().numpy(),
                                  s.went_out.clone().numpy(), s.turn.numpy(), *out)
    with pytest.raises(ValueError, match="ends has 3 entries, expected 4"):
        moves_module._c_end_turns(3, 200, flags.numpy(), flags.numpy(), s.current.clone().numpy(),
                                  s.phase.clone().numpy(), s.went_out.clone().numpy(), s.turn.numpy(), out[0],
                                  np.zeros(3, dtype=bool))
    with pytest.raises(ValueError, match="actions has 5 entries, expected 4"):
        agents_module._c_nth_legal(np.zeros((4, 54), dtype=bool), np.zeros(4, dtype=np.float32),
                                   np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError, match="mask has 270 entries, expected 216"):
        agents_module._c_nth_legal(np.zeros((5, 54), dtype=bool), np.zeros(4, dtype=np.float32),
                                   np.zeros(4, dtype=np.int64))


def cloned(state: BatchState) -> BatchState:
    return BatchState(**{name: value.clone() for name, value in state.fields().items()})


def mid_game(rules: Rules, tables: int, seed: int, steps: int) -> BatchGame:
    game = BatchGame(rules, tables, seed=seed)
    agent = BatchRandom(rules, seed=seed)
    ts = game.reset()
    for _ in range(steps):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    return game


@needs_c
@pytest.mark.parametrize("name", list(RULES))
def test_deals_and_refills_in_c_are_the_tensor_codes(name: str) -> None:
    """``deal_rows`` and ``reshuffle_rows`` on rows in any order (new games and next rounds mixed,
    piles of every length down to none) against the tensor code on the same state."""
    rules = RULES[name]
    game = mid_game(rules, 24, seed=3, steps=37)
    game._kernel_backend = "torch"
    gen = torch.Generator().manual_seed(len(name))
    rows = torch.randperm(24, generator=gen)[:15]
    fresh = torch.rand(15, generator=gen) < 0.5
    mask = torch.zeros(24, dtype=torch.bool).index_fill_(0, rows, True)
    by_c = cloned(game.state)
    deal_module.deal_rows(by_c, rows, fresh, game._seed32, game._rounds, game_module._FIRST_DEALER_SALT)
    game._deal_tables(mask, torch.zeros(24, dtype=torch.bool).index_put_((rows,), fresh))
    for field, value in by_c.fields().items():
        assert torch.equal(value, getattr(game.state, field)), field
    game = mid_game(rules, 24, seed=4, steps=61)
    game._kernel_backend = "torch"
    game.state.pile_len[rows[:3]] = torch.tensor([0, 1, 2])
    by_c = cloned(game.state)
    deal_module.reshuffle_rows(by_c, rows, game._seed32)
    game._refill_stocks(mask)
    for field, value in by_c.fields().items():
        assert torch.equal(value, getattr(game.state, field)), field


@needs_c
def test_the_deal_loops_name_bad_input_and_change_nothing() -> None:
    game = mid_game(Rules(num_players=3, rounds=(2, 5)), 4, seed=1, steps=9)
    s, before = game.state, cloned(game.state)

    def deal(rows: list[int], fresh: list[bool], rounds: tuple[int, ...] = (2, 5)) -> None:
        deal_module.deal_rows(s, torch.tensor(rows), torch.tensor(fresh), 7, torch.tensor(rounds), 1)

    def unchanged() -> None:
        for field, value in before.fields().items():
            assert torch.equal(value, getattr(s, field)), field

    with pytest.raises(ValueError, match=r"rows\[1\]=4 is not a table: use 0..3"):
        deal([0, 4], [False, False])
    s.round_index[2] = 2
    with pytest.raises(ValueError, match="table 2: its round_index is outside what a game state holds"):
        deal([0, 2], [False, False])
    s.round_index[2], s.dealer[1] = 1, 3
    with pytest.raises(ValueError, match="table 1: its dealer is outside what a game state holds"):
        deal([1], [False])
    with pytest.raises(ValueError, match=r"rounds\[1\]=40 cannot be dealt to 3 players from 104 cards"):
        deal([0], [True], (2, 40))
    s.round_index[2], s.dealer[1] = before.round_index[2], before.dealer[1]
    unchanged()
    pile_len = s.pile_len.clone()
    s.pile_len[3] = 105  # two decks: 104 cards
    with pytest.raises(ValueError, match="table 3: its pile_len is outside what a game state holds"):
        deal_module.reshuffle_rows(s, torch.tensor([0, 3]), 7)
    s.pile_len[3], s.pile[0, int(pile_len[0]) - 1] = pile_len[3], 52
    with pytest.raises(ValueError, match="table 0: its pile is outside what a game state holds"):
        deal_module.reshuffle_rows(s, torch.tensor([0, 3]), 7)
    s.pile[0] = before.pile[0]
    unchanged()
    with pytest.raises(TypeError, match="fresh must be a contiguous bool buffer"):
        deal_module._c_deal_rows(3, 7, 1, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                                 *[np.zeros(1)] * 20)
    s.round_index[2], s.dealer[2] = 9, 9
    deal([2, 0], [True, False])  # a fresh table's round index and dealer are not read
    assert int(s.round_index[2]) == 0 and int(s.round_index[0]) == min(int(before.round_index[0]) + 1, 1)


def test_every_kernel_comes_with_the_extension() -> None:
    """One extension holds every CPU kernel: built, each is there; not built, none is (the
    tests above are then skipped, and ``test_batch_observe`` checks the build itself)."""
    kernels = [moves_module._c_apply_moves, moves_module._c_end_turns, agents_module._c_nth_legal,
               observe_module._c_observe_and_mask, observe_module._c_seat_hands, deal_module._c_deal_rows,
               deal_module._c_reshuffle_rows]
    assert all(k is not None for k in kernels) or all(k is None for k in kernels)
