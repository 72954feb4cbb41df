"""A device the batched engine cannot use is refused up front, by name, with what is allowed,
by the engine and by every wrapper and agent that takes a ``device`` (tt_env/batch/devices.py);
a step's inputs land on the engine's device after one host read at most, and unchecked, illegal
actions play the first legal one and final seats stay in range (tt_env/batch/step_inputs.py); the
engine and its agents show what they are."""

from __future__ import annotations

import re

import gymnasium
import numpy as np
import pytest
import torch

import tt_env  # noqa: F401  (registers tt_env/ThreeThirteen-v0)
from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchRandom, make_batch_agent
from tt_env.batch.devices import checked_device
from tt_env.batch.step_inputs import checked_actions, checked_active, checked_final_seats, table_mask
from tt_env.engine.game import NUM_ACTIONS
from tt_env.engine.rules import Rules

MALFORMED = "is not allowed: use 'cpu', 'cuda' or 'cuda:K'"


@pytest.mark.parametrize("device", ["tpu", "gpu", "cuda:x", "", None, 1.5, True, ["cpu"]])
def test_a_malformed_device_is_named_with_the_allowed_values(device: object) -> None:
    with pytest.raises(ValueError, match=re.escape(f"device={device!r} {MALFORMED}")):
        checked_device(device)


@pytest.mark.parametrize("device", ["cpu", torch.device("cpu"), "cpu:0"])
def test_a_usable_device_comes_back_parsed(device: object) -> None:
    assert checked_device(device) == torch.device(device)  # type: ignore[arg-type]


@pytest.mark.parametrize("device", ["mps", "xpu", "meta", torch.device("meta"), "hpu:0"])
def test_a_device_the_engine_cannot_run_on_is_refused_by_name(device: object) -> None:
    """"mps" and "xpu" passed the check and failed in torch (NotImplementedError, "Torch not
    compiled with XPU enabled"), and "meta" was accepted and failed at reset: only CPUs and CUDA pass."""
    match = re.escape(f"device={device!r} is not allowed: the batched engine runs on CPUs and CUDA GPUs only; "
                      "use 'cpu', 'cuda' or 'cuda:K'")
    with pytest.raises(ValueError, match=match):
        checked_device(device)
    with pytest.raises(ValueError, match=match):
        BatchGame(Rules(), 2, device=device)  # type: ignore[arg-type]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", 0, torch.device("cuda", 1)])
def test_cuda_without_cuda_says_so(device: object) -> None:
    with pytest.raises(ValueError, match=r"is not available here: this machine has no CUDA device .* use 'cpu'"):
        checked_device(device)


def test_a_cuda_index_past_the_machine_s_devices_names_those_it_has(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert checked_device("cuda:1") == torch.device("cuda", 1)
    assert checked_device("cuda") == torch.device("cuda")
    assert checked_device(1) == torch.device("cuda", 1)  # an int K is cuda:K, as in torch
    with pytest.raises(ValueError, match=r"device='cuda:2' is not available here: this machine has 2 CUDA device\(s\), "
                                         r"cuda:0\.\.cuda:1"):
        checked_device("cuda:2")


@pytest.mark.parametrize("make", [
    lambda d: BatchGame(Rules(), 2, device=d),
    lambda d: BatchRandom(device=d),
    lambda d: make_batch_agent("random-v0", Rules(), d),
    lambda d: gymnasium.make_vec("tt_env/ThreeThirteen-v0", num_envs=2, vectorization_mode="vector_entry_point",
                                 device=d),
], ids=["BatchGame", "BatchRandom", "make_batch_agent", "make_vec"])
def test_every_entry_point_checks_its_device(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=f"device='tpu' {MALFORMED}"):
        make("tpu")


def test_the_torchrl_env_checks_its_device() -> None:
    torchrl_env = pytest.importorskip("tt_env.batch.torchrl_env")
    with pytest.raises(ValueError, match=f"device='tpu' {MALFORMED}"):
        torchrl_env.ThreeThirteenTorchRLEnv(num_tables=2, device="tpu")


def test_a_numpy_table_count_is_an_int() -> None:
    game = BatchGame(Rules(), np.int64(3))  # type: ignore[arg-type]
    assert game.num_tables == 3 and type(game.num_tables) is int
    assert game.reset().observation.shape[0] == 3
    with pytest.raises(ValueError, match="num_tables=0 is not allowed: use an int >= 1"):
        BatchGame(Rules(), np.int64(0))  # type: ignore[arg-type]


def test_a_step_s_inputs_land_on_the_engine_s_device() -> None:
    """A step's actions, tables and seats are moved to the engine's device (here "meta", a device
    with no data, so that a CPU-only machine sees the move)."""
    meta = torch.device("meta")
    for made in (checked_actions([1, 2], 2, meta), checked_final_seats(torch.tensor([0, 1], dtype=torch.int32), 2,
                                                                        2, meta)):
        assert made.device == meta and made.dtype == torch.int64
    assert checked_active([True, False], 2, meta).device == meta
    assert table_mask(torch.tensor([True]), 1, meta, "mask", "the tables to deal new games on").device == meta


@pytest.mark.parametrize("actions,got", [(None, "NoneType"), (["a", "b"], "list"), ([[0], [0, 1]], "list"),
                                          (np.array([None, None]), "ndarray")])
def test_actions_torch_cannot_read_are_named(actions: object, got: str) -> None:
    """``step(None)`` or ``step(["a", "b"])`` failed inside torch ("can't convert np.ndarray of type
    numpy.object_"): such actions are named, as ``table_mask`` names such masks."""
    game = BatchGame(Rules(), 2)
    game.reset()
    with pytest.raises(ValueError, match=rf"actions must be a \(2,\) integer tensor of action ids 0\.\.53, got {got}$"):
        game.step(actions)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"final_seat must be a \(2,\) integer tensor of seats 0\.\.1, got {got}$"):
        checked_final_seats(actions, 2, 2, torch.device("cpu"))


def test_a_checked_step_reads_the_device_once_with_or_without_final_seats() -> None:
    """The value checks (legal actions, and final seats in range) are one host read together: on a
    GPU each read is a wait (the vector env passes final seats at every step)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class HostReads(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if func in (torch.ops.aten._local_scalar_dense.default, torch.ops.aten.is_nonzero.default):
                self.count += 1
            return func(*args, **(kwargs or {}))

    game = BatchGame(Rules(num_players=3), 4)
    legal = game.reset().action_mask.int().argmax(1)
    for final_seat in (None, torch.tensor([0, 1, 2, 0])):
        with HostReads() as reads:
            game._checked(legal, None, final_seat)
        assert reads.count == 1


@pytest.mark.parametrize("kernels", ["auto", "torch"])
def test_unchecked_final_seats_are_kept_in_range(kernels: str) -> None:
    """With check_actions=False no seat is checked: one out of range is clamped (the last seat's
    view, as a checked game given that seat shows), never used to index past a table's seats."""
    rules = Rules(num_players=3, rounds=[1])
    games = [BatchGame(rules, 4, seed=2, check_actions=check, kernels=kernels) for check in (False, True)]
    agent = BatchRandom(rules, seed=3)
    ts = [g.reset() for g in games][0]
    finished = 0
    for _ in range(200):
        actions = agent.act(ts.observation, ts.action_mask)
        ts = games[0].step(actions, final_seat=torch.full((4,), 9))
        clamped = games[1].step(actions, final_seat=torch.full((4,), 2))
        assert torch.equal(ts.final_observation, clamped.final_observation)
        finished += int(ts.game_over.sum())
    assert finished > 0


@pytest.mark.parametrize("path", ["cpu", "every-row"])
def test_unchecked_illegal_actions_play_the_first_legal_one(path: str) -> None:
    """With check_actions=False an illegal action (out of range, or masked off: a discard's id
    while drawing, a card not held) plays its table's first legal action: the games equal
    checked ones given those actions, and every table keeps its whole shoe."""
    rules = Rules(num_players=3, rounds=[1, 2], max_turns_per_round=40)
    unchecked, checked = (BatchGame(rules, 16, seed=5, check_actions=check) for check in (False, True))
    if path == "every-row":  # a GPU's code, on this CPU (the C solver: the tensor program is slow here)
        for game in (unchecked, checked):
            game._sparse, game._outputs, game._kernel_backend = False, None, "torch"
    agent = BatchRandom(rules, seed=1)
    gen = torch.Generator().manual_seed(2)
    ts = unchecked.reset()
    checked.reset()
    replaced = 0
    for _ in range(150):
        actions = agent.act(ts.observation, ts.action_mask)
        junk = torch.randint(-3, NUM_ACTIONS + 3, (16,), generator=gen)
        actions = torch.where(torch.rand(16, generator=gen) < 0.3, junk, actions)
        legal = ((actions >= 0) & (actions < NUM_ACTIONS)
                 & ts.action_mask.gather(1, actions.clamp(0, NUM_ACTIONS - 1).unsqueeze(1)).squeeze(1))
        first = ts.action_mask.to(torch.uint8).argmax(dim=1)
        replaced += int((~legal).sum())
        ts = unchecked.step(actions)
        want = checked.step(torch.where(legal, actions, first))
        assert torch.equal(ts.observation, want.observation) and torch.equal(ts.scores, want.scores)
        for i in range(16):
            state = unchecked.to_game_state(i)
            held = sum(len(h) for h in state.hands) + len(state.stock) + len(state.discard_pile)
            assert held == rules.num_cards, f"table {i} holds {held} cards of {rules.num_cards}"
    assert replaced > 100


@pytest.mark.parametrize("flag", ["autoreset", "check_actions", "cuda_graphs"])
def test_flags_are_bools_not_strings_that_read_true(flag: str) -> None:
    for bad in ("false", "no", 0, None):
        with pytest.raises(ValueError, match=rf"{flag}={bad!r} is not allowed: use True or False"):
            BatchGame(Rules(), 2, **{flag: bad})
    assert getattr(BatchGame(Rules(), 2, **{flag: np.bool_(False)}), flag, False) is False


def test_a_finished_game_loads_only_where_it_may_stay_finished() -> None:
    """With autoreset=True a finished table would never restart (auto-reset deals at a game's last
    step): loading one is refused by name; with autoreset=False it loads, finished, with no legal move."""
    rules = Rules(rounds=[1])
    game = BatchGame(rules, 1, seed=1, autoreset=False)
    ts, agent = game.reset(), BatchRandom(rules, seed=0)
    while not bool(ts.game_over[0]):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    other = BatchGame(rules, 1, seed=2)
    other.reset()
    finished, playing = game.to_game_state(0), other.to_game_state(0)
    with pytest.raises(ValueError, match=r"states\[1\] is a finished game, which a batch with autoreset=True never "
                                         r"holds: load it into BatchGame\(\.\.\., autoreset=False\)"):
        BatchGame(rules, 2).from_game_states([playing, finished])
    keeper = BatchGame(rules, 1, autoreset=False)
    loaded = keeper.from_game_states([finished])
    assert bool(keeper.state.game_over[0]) and not bool(loaded.action_mask.any())


def test_the_engine_and_its_agents_show_what_they_are() -> None:
    """repr reads as the call that builds an equal engine (its rules, size, device and options)."""
    from tt_env.batch.agents import BatchGreedy, BatchNetwork

    game = BatchGame(Rules(num_players=3, decks=2, aces="high_or_low"), 5, reward_mode="win", autoreset=False,
                     check_actions=False, kernels="torch")
    again = eval(repr(game), {"BatchGame": BatchGame, "Rules": Rules})
    assert repr(again) == repr(game) and again.rules == game.rules and again.num_tables == 5
    assert (again.reward_mode, again.autoreset, again.check_actions) == ("win", False, False)
    assert repr(BatchGreedy(Rules(num_players=4))) == f"BatchGreedy({Rules(num_players=4)!r})"
    assert repr(BatchRandom(seed=np.int64(7))) == "BatchRandom(seed=7, device='cpu')"
    assert repr(BatchNetwork(lambda o, m: m.float(), name="mine", greedy=False, seed=2)) == \
        "BatchNetwork(name='mine', greedy=False, seed=2)"


@pytest.mark.parametrize("kernels", ["auto", "torch"])
def test_narrower_integer_actions_and_seats_play_the_same_games(kernels: str) -> None:
    """int32 actions and uint8 final seats are widened, not misread: the games equal int64 ones."""
    wide, narrow = (BatchGame(Rules(num_players=3, rounds=[1]), 6, seed=3, kernels=kernels) for _ in range(2))
    agent = BatchRandom(Rules(num_players=3), seed=4)
    ts, ts_narrow = wide.reset(), narrow.reset()
    finished = 0
    for _ in range(120):
        actions, seats = agent.act(ts.observation, ts.action_mask), torch.arange(6) % 3
        ts = wide.step(actions, final_seat=seats)
        ts_narrow = narrow.step(actions.to(torch.int32), final_seat=seats.to(torch.uint8))
        for field in ("observation", "action_mask", "rewards", "scores", "final_observation"):
            assert torch.equal(getattr(ts, field), getattr(ts_narrow, field)), field
        finished += int(ts.game_over.sum())
    assert finished > 0  # final seats were used
