"""The batched engine against the scalar engine, step by step (the scalar engine is the specification).

Every table of a batch plays random legal moves; before each step the table is read back as a
scalar ``GameState`` (``to_game_state``), the same move is applied to it with
``engine.game.apply``, and the batch's observation, mask, rewards, scores, round points and next
state must equal the scalar engine's. Randomness is the one thing that differs by design (the
batch shuffles from its own streams): after a reshuffle the stock is compared as a multiset, and
after a new deal the deal is checked for validity.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from tt_env.batch import BatchGame
from tt_env.engine import game as engine
from tt_env.engine.rules import Rules, hand_size
from tt_env.engine.scoring import REWARD_SCALE, win_rewards
from tt_env.observation import encode

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def snapshot(st: engine.GameState) -> dict:
    """What a state means for play: order-free parts sorted, ordered parts (stock, pile) as is."""
    return {
        "hands": [sorted(h) for h in st.hands], "stock": list(st.stock), "pile": list(st.discard_pile),
        "known_taken": [sorted(k) for k in st.known_taken], "discards": [sorted(d) for d in st.discards],
        "passed": [sorted(p) for p in st.passed], "round_index": st.round_index, "round_number": st.round_number,
        "dealer": st.dealer, "current": st.current_player, "phase": st.phase, "scores": list(st.scores),
        "went_out": st.went_out, "turn": st.turn, "taken": st.taken_this_turn, "game_over": st.game_over,
    }


def expected_rewards(points: list[int], scores: list[int], game_over: bool, mode: str) -> list[float]:
    """``three_thirteen_v0``'s rewards for a finished round."""
    n = len(points)
    if mode == "relative":
        total = sum(points)
        return [((total - p) / (n - 1) - p) / REWARD_SCALE for p in points]
    if mode == "penalty":
        return [-p / REWARD_SCALE for p in points]
    return win_rewards(scores) if game_over else [0.0] * n


def check_deal(st: engine.GameState) -> None:
    """A freshly dealt round: right hand sizes, one card up, the whole shoe accounted for."""
    n, size = st.rules.num_players, hand_size(st.round_number)
    assert [len(h) for h in st.hands] == [size] * n
    assert len(st.discard_pile) == 1 and st.turn == 0 and st.phase == engine.PHASE_DRAW
    assert st.current_player == (st.dealer + 1) % n and st.went_out is None
    everything = Counter(c for h in st.hands for c in h) + Counter(st.stock) + Counter(st.discard_pile)
    assert everything == Counter({c: st.rules.num_decks for c in range(52)})


def play_side_by_side(rules: Rules, tables: int, steps: int, seed: int, reward_mode: str = "relative",
                      device: str = "cpu", accelerator_path: bool = False, solver: str | None = None,
                      solving: str = "auto") -> Counter:
    """Random legal play on a batch, checked against the scalar engine; returns event counts.

    ``accelerator_path`` runs, on a CPU, the code a GPU runs: every row through the rare parts
    of a step with a select, the observation's tensor code, and (unless ``solver`` says
    otherwise) the tensor program for the melds instead of C; ``solving`` picks which hands that path solves."""
    if solver is None:
        solver = "torch" if accelerator_path else "auto"
    g = BatchGame(rules, tables, device=device, seed=seed, reward_mode=reward_mode, solver=solver, solving=solving)
    if accelerator_path:
        g._sparse = False
        g._kernel_backend = "torch"
    ts = g.reset()
    rng = np.random.default_rng(seed)
    events: Counter = Counter()
    for i in range(tables):
        check_deal(g.to_game_state(i))
    for _ in range(steps):
        pre = [g.to_game_state(i) for i in range(tables)]
        actions = []
        for i, st in enumerate(pre):
            seat = st.current_player
            assert int(ts.seat[i]) == seat
            np.testing.assert_array_equal(ts.observation[i].cpu().numpy(), encode(st, seat))
            np.testing.assert_array_equal(ts.action_mask[i].cpu().numpy(), engine.action_mask(st).astype(bool))
            actions.append(int(rng.choice(engine.legal_actions(st))))
        ts = g.step(torch.tensor(actions))
        for i, st in enumerate(pre):
            before = snapshot(st)
            result = engine.apply(st, actions[i])
            post = g.to_game_state(i)
            got, want = snapshot(post), snapshot(st)
            ended = result.round_record is not None
            assert bool(ts.round_over[i]) == ended and bool(ts.game_over[i]) == result.game_over
            assert int(ts.went_out[i]) == (before["current"] if result.went_out else -1)
            assert int(ts.ended_round[i]) == (result.round_record.round_number if ended else 0)
            rewards = [0.0] * rules.num_players
            if ended:
                events["rounds"] += 1
                points = result.round_record.points
                assert ts.round_points[i].tolist() == points
                rewards = expected_rewards(points, st.scores, result.game_over, reward_mode)
            np.testing.assert_array_equal(ts.rewards[i].cpu().numpy(), np.asarray(rewards, dtype=np.float32))
            assert ts.scores[i].tolist() == st.scores
            if result.game_over:
                events["games"] += 1
                np.testing.assert_array_equal(ts.final_observation[i].cpu().numpy(), encode(st, st.current_player))
                assert post.round_index == 0 and post.scores == [0] * rules.num_players
                check_deal(post)
            elif ended:
                for key in ("round_index", "round_number", "dealer", "scores", "game_over"):
                    assert got[key] == want[key], key
                check_deal(post)
            elif result.reshuffled:
                events["reshuffles"] += 1
                seat = st.current_player
                drawn = Counter(got["hands"][seat]) - Counter(before["hands"][seat])
                assert sum(drawn.values()) == 1
                assert Counter(got["stock"]) + drawn == Counter(before["pile"][:-1])
                assert got["pile"] == before["pile"][-1:]
                for key in got:
                    if key not in ("stock", "hands"):
                        assert got[key] == want[key], key
            else:
                assert got == want, {k: (got[k], want[k]) for k in got if got[k] != want[k]}
            if result.went_out:
                events["went_out"] += 1
    return events


CASES = {
    "2p default": Rules(),
    "3p aces high": Rules(num_players=3, aces="high_or_low", rounds=(1, 6, 11)),
    "4p natural + ddd": Rules(num_players=4, meld_needs_natural=True, discard_drawn_discard=True, rounds=(2, 9)),
    "6p short rounds": Rules(num_players=6, max_turns_per_round=15, rounds=(3, 11)),
    "8p": Rules(num_players=8, rounds=(1, 11), max_turns_per_round=40),
    "2p 4 decks": Rules(decks=4, rounds=(5, 10)),
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
    events = play_side_by_side(Rules(rounds=(1, 2), max_turns_per_round=10), tables=3, steps=24, seed=4,
                               accelerator_path=True, solving="gathered")
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


@pytest.mark.parametrize("mode", ["penalty", "win"])
def test_reward_modes_match(mode: str) -> None:
    rules = Rules(rounds=(1, 2), max_turns_per_round=6)
    events = play_side_by_side(rules, tables=8, steps=60, seed=3, reward_mode=mode)
    assert events["games"] > 0


def test_reshuffles_match() -> None:
    """Long rounds of 2 players on one deck empty the stock: the refill is checked."""
    events = play_side_by_side(Rules(rounds=(11,)), tables=6, steps=200, seed=11)
    assert events["reshuffles"] > 0
