"""The batched observation's two backends: the C loop (a CPU's) and the tensor code (every device's).

``tests/test_batch_engine.py`` checks the engine's observations and masks against the scalar
engine at every step, through whichever backend ``"auto"`` picks (C on a CPU when built). Here the
two backends are checked against each other on the states of random play, for every seat's view,
and the tensor code alone against the scalar engine (as a GPU runs it); then the C loop's input
errors.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch
from batch_differential import play_side_by_side

from tt_env.batch import BatchGame
from tt_env.batch import observe as observe_module
from tt_env.batch.agents import BatchRandom
from tt_env.batch.observe import observe, observe_and_mask, seat_counts, seat_hand_bytes
from tt_env.batch.state import BatchState
from tt_env.engine.rules import Rules

needs_c = pytest.mark.skipif(observe_module._c_observe_and_mask is None, reason="the C extension is not built")

RULES = {
    "2p": Rules(rounds=(1, 7, 11), max_turns_per_round=30),
    "3p aces high natural": Rules(num_players=3, aces="high_or_low", meld_needs_natural=True, rounds=(1, 11),
                                  max_turns_per_round=24),
    "4p ddd short": Rules(num_players=4, discard_drawn_discard=True, rounds=(2, 9), max_turns_per_round=9),
    "5p 2 decks": Rules(num_players=5, rounds=(1, 3), max_turns_per_round=30),
    "8p": Rules(num_players=8, rounds=(1, 11), max_turns_per_round=40),
    "2p huge turn limit": Rules(rounds=(1, 2), max_turns_per_round=2**24 + 1),  # divided in float64
}


def views(game: BatchGame, backend: str) -> list[torch.Tensor]:
    """The mover's observation and mask, then every seat's observation, by ``backend``."""
    s, args = game.state, (game.round_number, game.shoe_size, game.rules.max_turns_per_round)
    obs, mask = observe_and_mask(s, *args, game.rules.discard_drawn_discard, backend=backend)
    seats = [observe(s, *args, torch.full_like(s.current, k), backend=backend) for k in range(game.num_players)]
    return [obs, mask, *seats]


@needs_c
@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize("autoreset", [True, False])
def test_the_c_loop_writes_what_the_tensor_code_computes(name: str, autoreset: bool) -> None:
    rules = RULES[name]
    game = BatchGame(rules, 24, seed=3, autoreset=autoreset)
    agent = BatchRandom(rules, seed=5)
    ts = game.reset()
    finished = 0
    for step in range(400):
        if step % 7 == 0 or bool(ts.round_over.any()):
            for c_view, torch_view in zip(views(game, "c"), views(game, "torch"), strict=True):
                assert c_view.dtype == torch_view.dtype and torch.equal(c_view, torch_view)
        ts = game.step(agent.act(ts.observation, ts.action_mask))
        finished += int(ts.game_over.sum())
    assert finished > 0  # finished games were compared too (short games)


@pytest.mark.parametrize("name", ["2p", "3p aces high natural", "4p ddd short"])
def test_the_tensor_code_matches_the_scalar_engine(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a GPU runs, on a CPU: the engine with the C loop taken away."""
    monkeypatch.setattr(observe_module, "_c_observe_and_mask", None)
    events = play_side_by_side(RULES[name], tables=6, steps=120, seed=11)
    assert events["rounds"] > 0


def test_backends_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    game = BatchGame(Rules(), 2)
    game.reset()
    args = (game.state, game.round_number, game.shoe_size, 200)
    with pytest.raises(ValueError, match="backend='fast' is not allowed: use one of auto, c, torch, triton"):
        observe(*args, backend="fast")
    if observe_module._c_observe_and_mask is not None:  # a state off the CPU (here: shapes only) is refused
        elsewhere = BatchState.empty(2, 2, 52, torch.device("meta"))
        with pytest.raises(ValueError, match="and CPU tensors; these are on meta"):
            observe(elsewhere, game.round_number.to("meta"), game.shoe_size, 200, backend="c")
    monkeypatch.setattr(observe_module, "_c_observe_and_mask", None)
    with pytest.raises(ValueError, match="backend='c' needs the built C extension"):
        observe(*args, backend="c")
    assert observe(*args).shape == (2, 294)  # "auto" falls back to the tensor code


def _no_c_loop(*args: object) -> None:
    raise AssertionError("the C loop ran where the tensor code was asked for")


def test_torch_means_the_tensor_code_in_the_calls_and_in_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """``backend="torch"`` (and ``BatchGame(..., kernels="torch")``, the GPU's code on a CPU) never runs
    the C loop: through a step, a round's end and a finished game's final observation (nor the
    go-out check's seat hands)."""
    monkeypatch.setattr(observe_module, "_c_observe_and_mask", _no_c_loop)
    monkeypatch.setattr(observe_module, "_c_seat_hands", _no_c_loop)
    rules = Rules(rounds=(1,), max_turns_per_round=4)
    game = BatchGame(rules, 8, kernels="torch")
    agent = BatchRandom(rules)
    ts = game.reset()
    finished = 0
    for _ in range(12):  # four turns in all, then the one-round games end and restart
        ts = game.step(agent.act(ts.observation, ts.action_mask))
        finished += int(ts.game_over.sum())
    assert finished >= 8  # every table finished a game: its final observation was made too
    with pytest.raises(AssertionError, match="the C loop ran"):
        observe(game.state, game.round_number, game.shoe_size, 4)  # "auto" takes it


@needs_c
def test_the_c_loop_names_bad_input() -> None:
    game = BatchGame(Rules(num_players=3), 4)
    game.reset()
    s = game.state
    ok = dict(hands=s.hands, pile_counts=s.pile_counts, known_taken=s.known_taken, discards=s.discards,
              pile=s.pile, pile_len=s.pile_len, seat=s.current, current=s.current, phase=s.phase,
              went_out=s.went_out, round_number=game.round_number, stock_len=s.stock_len, scores=s.scores,
              turn=s.turn, game_over=s.game_over, taken=s.taken)

    def call(n: int = 3, obs_width: int = 401, **changes: torch.Tensor) -> None:
        buffers = [t.contiguous().numpy() for t in (ok | changes).values()]
        obs = np.zeros((4, obs_width), dtype=np.float32)
        observe_module._c_observe_and_mask(n, *buffers, 156.0, 200.0, 14.0, 100.0, False, obs,
                                           np.zeros((4, 54), dtype=bool))

    call()  # the state as it is passes
    with pytest.raises(TypeError, match="hands must be a contiguous float32 buffer, not format 'd'"):
        call(hands=s.hands.double())
    with pytest.raises(TypeError, match="phase must be a contiguous int64 buffer"):
        call(phase=s.phase.int())
    with pytest.raises(ValueError, match="obs has 1600 entries, expected 1604 for 4 tables of 3 players"):
        call(obs_width=400)
    with pytest.raises(ValueError, match="num_players=9 is not allowed: use 2..8"):
        call(n=9)
    for field, value in [("seat", 3), ("current", -1), ("phase", 2), ("went_out", 3), ("round_number", 12),
                         ("pile_len", 157), ("taken", 52)]:
        bad = ok[field].clone()
        bad[2] = value
        with pytest.raises(ValueError, match=f"table 2: its {field} is outside what a game state holds"):
            call(**{field: bad})
    bad_pile = s.pile.clone()
    bad_pile[1, int(s.pile_len[1]) - 1] = 52
    with pytest.raises(ValueError, match="table 1: its pile is outside"):
        call(pile=bad_pile)


@pytest.mark.parametrize("backend", ["c", "torch"])
def test_the_observation_goes_into_out_when_given(backend: str) -> None:
    if backend == "c" and observe_module._c_observe_and_mask is None:
        pytest.skip("the C extension is not built")
    game = BatchGame(Rules(num_players=3), 6, seed=2)
    game.reset()
    args = (game.state, game.round_number, game.shoe_size, 200, False)
    expected, expected_mask = observe_and_mask(*args, backend=backend)
    out = torch.full((6, 401), 7.0)
    obs, mask = observe_and_mask(*args, backend=backend, out=out)
    assert obs is out and torch.equal(out, expected) and torch.equal(mask, expected_mask)
    for bad in (torch.zeros(6, 400), torch.zeros(6, 401, dtype=torch.float64), torch.zeros(401, 6).t()):
        with pytest.raises(ValueError, match=r"out is a torch.float\d+ tensor of shape \(6, 40[01]\): it must be a "
                                             r"contiguous float32 one of shape \(6, 401\)"):
            observe_and_mask(*args, backend=backend, out=bad)


@needs_c
@pytest.mark.parametrize("players", [2, 5, 8])
def test_a_seats_hand_as_bytes_in_c_is_the_tensor_codes(players: int) -> None:
    """``seat_hand_bytes`` (the go-out check's input): the C loop against ``seat_counts(...).to(uint8)``,
    on counts up to 4 decks' and every seat."""
    gen = torch.Generator().manual_seed(players)
    counts = torch.randint(0, 5, (300, players, 52), generator=gen).float()
    seat = torch.randint(0, players, (300,), generator=gen)
    by_c = seat_hand_bytes(counts, seat)
    assert by_c.dtype == torch.uint8 and torch.equal(by_c, seat_hand_bytes(counts, seat, backend="torch"))
    assert torch.equal(by_c.long(), seat_counts(counts, seat).long())


@needs_c
def test_a_seats_hand_as_bytes_names_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    counts, seat = torch.ones(4, 3, 52), torch.tensor([0, 1, 2, 0])
    for value in (2.5, -1.0, 256.0, 1e10, float("nan"), float("inf")):
        bad = counts.clone()
        bad[2, 2, 7] = value
        with pytest.raises(ValueError, match="table 2: its hand's count of card 7 is not a whole number of copies "
                                             "0..255"):
            seat_hand_bytes(bad, seat)
    with pytest.raises(ValueError, match="table 3: its seat is outside what a game state holds"):
        seat_hand_bytes(counts, torch.tensor([0, 1, 2, 3]))
    out = np.zeros((4, 52), dtype=np.uint8)
    with pytest.raises(TypeError, match="out must be a contiguous uint8 buffer, not format '\\?'"):
        observe_module._c_seat_hands(3, counts.numpy(), seat.numpy(), out.astype(bool))
    with pytest.raises(ValueError, match="out has 204 entries, expected 208 for 4 tables of 3 players"):
        observe_module._c_seat_hands(3, counts.numpy(), seat.numpy(), out[:, :51].copy())
    with pytest.raises(ValueError, match="num_players=1 is not allowed: use 2..8"):
        observe_module._c_seat_hands(1, counts.numpy(), seat.numpy(), out)
    monkeypatch.setattr(observe_module, "_c_seat_hands", _no_c_loop)
    assert torch.equal(seat_hand_bytes(counts, seat, backend="torch"), torch.ones(4, 52, dtype=torch.uint8))


def test_the_c_loop_is_built_wherever_the_c_solver_is() -> None:
    """Both extensions come from the same build (setup.py): one without the other means the build
    lost it, and the tests above would be skipped without a word."""
    solver_built = importlib.util.find_spec("tt_env.engine._meldsolver") is not None
    assert (observe_module._c_observe_and_mask is not None) == solver_built


def test_a_cpu_deals_and_refills_in_c_where_it_is_built() -> None:
    """The tensor code deals the same tables (tests/test_batch_triton_kernels.py), only slower:
    the choice itself is what a C loop that was never used would get wrong."""
    from tt_env.batch import kernels
    from tt_env.batch.deal import deals_in_c

    built = kernels.c_deal_rows is not None
    assert deals_in_c(torch.device("cpu"), "auto") == built and (not built or deals_in_c(torch.device("cpu"), "c"))
    assert not deals_in_c(torch.device("cpu"), "torch") and not deals_in_c(torch.device("meta"), "auto")


@pytest.mark.parametrize("backend", ["c", "torch"])
def test_the_draw_actions_at_the_stock_s_and_the_pile_s_edges(backend: str) -> None:
    """An empty stock may be drawn from only when the pile holds more than its top (a refill needs
    cards under it), the top discard only when there is one: as ``tt_env.engine.game`` says."""
    if backend == "c" and observe_module._c_observe_and_mask is None:
        pytest.skip("the C extension is not built")
    game = BatchGame(Rules(), 6, seed=1)
    game.reset()
    s = game.state
    s.stock_len[:] = torch.tensor([0, 0, 0, 5, 5, 0])
    s.pile_len[:] = torch.tensor([0, 1, 2, 0, 1, 3])
    mask = observe_and_mask(s, game.round_number, game.shoe_size, 200, False, backend=backend)[1]
    assert mask[:, 0].tolist() == [False, False, True, True, True, True]
    assert mask[:, 1].tolist() == [False, True, True, False, True, True]
