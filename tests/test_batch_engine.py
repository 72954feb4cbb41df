"""The batched engine against the scalar engine, step by step (the scalar engine is the specification).

Every table of a batch plays random legal moves and is checked at every step against the scalar
engine (``tests/batch_differential.py`` says how): observation, mask, rewards, scores, round
points and next state.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from batch_differential import play_side_by_side

from tt_env.batch import BatchGame
from tt_env.engine import game as engine
from tt_env.engine.rules import Rules

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


CASES = {
    "2p default": Rules(),
    "3p aces high": Rules(num_players=3, aces="high_or_low", rounds=(1, 6, 11)),
    "4p natural + ddd": Rules(num_players=4, meld_needs_natural=True, discard_drawn_discard=True, rounds=(2, 9)),
    "6p short rounds": Rules(num_players=6, max_turns_per_round=15, rounds=(3, 11)),
    "8p": Rules(num_players=8, rounds=(1, 11), max_turns_per_round=40),
    "2p 4 decks": Rules(decks=4, rounds=(5, 10), max_turns_per_round=70),  # a round ends within the 160 steps
}


@pytest.mark.parametrize("name", list(CASES))
def test_batch_matches_scalar_engine(name: str) -> None:
    events = play_side_by_side(CASES[name], tables=12, steps=160, seed=7)
    assert events["rounds"] > 0


def test_turns_scaled_by_a_divisor_float32_cannot_hold() -> None:
    """The observation divides its scaled pieces in float32 where every divisor is exact there;
    a turn limit of 2**24 + 1 is not (float32 rounds it to 2**24), so the turn is divided in
    float64 and rounded once, as the scalar encoder does (float32 alone differs from turn 1)."""
    limit = 2**24 + 1
    play_side_by_side(Rules(rounds=(1, 2), max_turns_per_round=limit), tables=3, steps=12, seed=2)
    game = BatchGame(Rules(max_turns_per_round=limit), 1)
    ts = game.reset()
    for action in (0, 2 + int(game.state.hands[0, 0].argmax())):  # draw, then discard a held card
        ts = game.step(torch.tensor([action]))
    turn = ts.observation[0, -1].item()
    assert turn == np.float32(1 / limit) != np.float32(1) / np.float32(limit)


ACCELERATOR_CASES = {  # small hands, few tables, aces low: the tensor meld program is slow on a CPU
    # (its aces-high widening most of all; tests/test_batch_solver.py checks it against C directly)
    "2p": Rules(rounds=(1, 2), max_turns_per_round=10),
    "3p 1 deck natural ddd": Rules(num_players=3, decks=1, meld_needs_natural=True, discard_drawn_discard=True,
                                   rounds=(1, 2), max_turns_per_round=8),
}


@pytest.mark.parametrize("name", list(ACCELERATOR_CASES))
def test_accelerator_path_matches_scalar_engine(name: str) -> None:
    """The masked, every-row path a GPU takes (and the tensor meld program), checked on a CPU."""
    events = play_side_by_side(ACCELERATOR_CASES[name], tables=2, steps=24, seed=13, accelerator_path=True)
    assert events["rounds"] > 0


KEPT_PENALTY_CASES = {  # the every-row path's scoring from the penalties kept at each discard
    "2p": Rules(rounds=(1, 2, 3, 7)),
    "4p short rounds": Rules(num_players=4, rounds=(1, 5), max_turns_per_round=4),
    # fewer turns than seats: some seats never discard, so the hands are solved at the round's end
    "3p two turns": Rules(num_players=3, rounds=(1, 4), max_turns_per_round=2),
}


GATHERED_CASES = {  # the every-row path solving only the hands that need it, gathered to the front
    "2p": Rules(rounds=(1, 2, 3, 7)),
    "3p aces high natural": Rules(num_players=3, aces="high_or_low", meld_needs_natural=True, rounds=(1, 2, 9)),
    "4p two turns": Rules(num_players=4, rounds=(1, 5), max_turns_per_round=2),  # fewer turns than seats
    "6p 2 decks": Rules(num_players=6, rounds=(1, 2, 11), max_turns_per_round=14),
}


@pytest.mark.parametrize("name", list(GATHERED_CASES))
def test_every_row_path_solving_gathered_hands_matches_scalar_engine(name: str) -> None:
    """``solving="gathered"`` (the fused solver's default on a GPU) with the C solver, which marks the
    hands past the gathered count -1 as the kernels leave them: a wrong need, count or order of
    the gathered hands breaks the go-out checks or the round scores."""
    rules = GATHERED_CASES[name]
    game = BatchGame(rules, 1, solving="gathered")
    game._sparse = False
    assert game._gathered and not game._cached_scoring
    events = play_side_by_side(rules, tables=8, steps=150, seed=17, accelerator_path=True, solver="auto",
                               solving="gathered")
    assert events["rounds"] >= 4 and events["went_out"] > 0


def test_gathered_solving_with_the_tensor_program() -> None:
    """The same with the plain tensor program (its ``prefix`` masks after solving every row)."""
    events = play_side_by_side(Rules(rounds=(1, 2), max_turns_per_round=10), tables=3, steps=24, seed=0,
                               accelerator_path=True, solving="gathered")  # (a seed whose games go out)
    assert events["rounds"] > 0 and events["went_out"] > 0


@pytest.mark.parametrize("solving,fused,gathered", [("auto", False, False), ("auto", True, True),
                                                     ("kept", True, False), ("gathered", False, True)])
def test_solving_defaults_to_gathered_with_the_fused_solver(monkeypatch: pytest.MonkeyPatch, solving: str,
                                                              fused: bool, gathered: bool) -> None:
    from tt_env.batch import solver_triton

    monkeypatch.setattr(solver_triton, "available", lambda: fused)
    game = BatchGame(Rules(), 1, solver="triton" if fused else "torch", solving=solving)
    assert game._gathered == gathered


def test_solving_rejects_unknown_modes() -> None:
    with pytest.raises(ValueError, match=r"solving='fast' is not allowed: use one of \['auto', 'gathered', 'kept'\]"):
        BatchGame(Rules(), 1, solving="fast")


@pytest.mark.parametrize("name", list(KEPT_PENALTY_CASES))
def test_every_row_path_scores_rounds_exactly(name: str) -> None:
    """The every-row path with the C solver (fast enough for many rounds): round scores equal the
    scalar engine's, whether they come from the kept penalties or, with fewer turns than seats,
    from solving every hand."""
    rules = KEPT_PENALTY_CASES[name]
    game = BatchGame(rules, 1)
    game._sparse = False
    assert game._cached_scoring == (rules.max_turns_per_round >= rules.num_players)
    events = play_side_by_side(rules, tables=8, steps=120, seed=21, accelerator_path=True, solver="auto")
    assert events["rounds"] >= 4 and events["went_out"] > 0


@pytest.mark.parametrize("solving", ["kept", "gathered"])
def test_every_row_path_scores_loaded_states(solving: str) -> None:
    """After ``from_game_states`` the kept penalties are the loaded hands' own: loaded when
    someone went out and the next seat already took its last turn, the round ends after one more
    turn, with the scalar engine's scores."""
    rules = Rules(num_players=3, rounds=(1, 2))
    source = BatchGame(rules, 64, seed=5)
    rng = np.random.default_rng(5)
    ts = source.reset()
    picked: list[engine.GameState] = []
    for _ in range(400):
        s = source.state
        went = (s.went_out >= 0) & (s.phase == 0) & ((s.current - s.went_out) % 3 == 2)
        picked += [source.to_game_state(i) for i in went.nonzero().flatten().tolist()]
        if len(picked) >= 8:
            break
        logits = torch.from_numpy(rng.random((64, 54)))
        ts = source.step(torch.where(ts.action_mask, logits, -1.0).argmax(1))
    states = picked[:8]
    assert len(states) == 8
    game = BatchGame(rules, 8, solver="auto", solving=solving)
    game._sparse = False
    ts = game.from_game_states(states)
    scalar = [st.copy() for st in states]
    ended = [False] * 8
    for _ in range(12):
        actions = [int(rng.choice(engine.legal_actions(st))) if not ended[i] else 0 for i, st in enumerate(scalar)]
        active = torch.tensor([not e for e in ended])
        ts = game.step(torch.tensor(actions), active=active)
        for i, st in enumerate(scalar):
            if ended[i]:
                continue
            result = engine.apply(st, actions[i])
            if result.round_record is not None:
                assert ts.round_points[i].tolist() == result.round_record.points
                ended[i] = True
    assert all(ended)


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
@pytest.mark.parametrize("rules", [Rules(num_players=4, rounds=(1, 2), max_turns_per_round=12),
                                   Rules(rounds=(9, 11), max_turns_per_round=16),
                                   Rules(num_players=3, aces="high_or_low", rounds=(4, 6), max_turns_per_round=9)],
                         ids=["4p", "2p big hands", "3p aces high"])
def test_gpu_matches_scalar_engine(device: str, rules: Rules) -> None:
    """The GPU's path (every row; with Triton installed the fused solver and gathered solving, else
    the plain program and kept penalties)."""
    events = play_side_by_side(rules, tables=4, steps=60, seed=5, device=device)
    assert events["rounds"] > 0


@pytest.mark.parametrize("accelerator_path", [False, True], ids=["CPU path", "every-row path"])
@pytest.mark.parametrize("num_players", [2, 4])
@pytest.mark.parametrize("mode", ["penalty", "win"])
def test_reward_modes_match(mode: str, num_players: int, accelerator_path: bool) -> None:
    """At 4 players a win or a loss can be shared (tests/test_batch_rewards.py checks every case)."""
    rules = Rules(num_players=num_players, rounds=(1, 2), max_turns_per_round=6)
    events = play_side_by_side(rules, tables=8, steps=30 * num_players, seed=3, reward_mode=mode,
                               accelerator_path=accelerator_path, solver="auto")
    assert events["games"] > 0


def test_reshuffles_match() -> None:
    """Long rounds of 2 players on one deck empty the stock: the refill is checked."""
    events = play_side_by_side(Rules(rounds=(11,)), tables=6, steps=200, seed=11)
    assert events["reshuffles"] > 0
