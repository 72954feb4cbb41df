"""Corrupt observations are refused by ``determinize`` with :class:`InconsistentObservation`, cheaply.

Each corruption below changes one piece of a real observation so that no game under the
rules produces it; ``determinize`` must refuse it (naming the piece where it can) without a
numpy error, and without allocating from the bad value (memory is measured with tracemalloc,
which sees numpy's buffers). A hypothesis test changes entries at random: whatever comes in,
the answer is a world that re-encodes to the input exactly, or ``InconsistentObservation``.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tt_env.observation.decode import decode_observation
from tt_env.engine import Rules, game
from tt_env.observation import encode, get_layout
from tt_env.observation.checks import check_vector
from tt_env.search import InconsistentObservation, determinize

RULES = Rules(num_players=3)
LAY = get_layout(3)


def _position(rules: Rules, seed: int, wanted: Callable[[game.GameState], bool]) -> game.GameState:
    """The first position of a random game (seeded) where ``wanted(state)`` holds."""
    rng = np.random.default_rng(seed)
    state = game.new_game(rules, rng)
    while not wanted(state):
        game.apply(state, int(rng.choice(game.legal_actions(state))))
    return state


def _rich(state: game.GameState) -> bool:
    """Mid-round, discard phase, a discard pile with cards below its top, an opponent holding a taken card."""
    return (state.turn >= 6 and state.phase == game.PHASE_DISCARD and len(state.discard_pile) >= 2
            and any(state.known_taken[(state.current_player + k) % 3] for k in (1, 2)))


STATE = _position(RULES, 3, _rich)
OBS = encode(STATE, STATE.current_player)
MASK = game.action_mask(STATE)


def _at(name: str, index: int = 0) -> int:
    return LAY.offsets[name] + index


def _set(changes: dict[int, float]) -> np.ndarray:
    obs = OBS.copy()
    for i, v in changes.items():
        obs[i] = v
    return obs


def _two_tops() -> np.ndarray:
    top = int(np.flatnonzero(LAY.view(OBS, "discard_top"))[0])
    other = (top + 1) % 52
    return _set({_at("discard_top", other): 1.0, _at("discard_below", other): 0.0})


def _wild() -> np.ndarray:
    wild = int(np.flatnonzero(LAY.view(OBS, "wild_rank"))[0])
    return _set({_at("wild_rank", wild): 0.0, _at("wild_rank", (wild + 1) % 13): 1.0})


def _no_round() -> np.ndarray:
    return _set({_at("round", STATE.round_number - 1): 0.0})


def _taken_card() -> int:
    """Index of an opponent-taken card in OBS."""
    return int(np.flatnonzero(LAY.view(OBS, "opponent_taken"))[0]) + LAY.opponent_taken


CORRUPTIONS = {
    "two cards on top of the discard pile": (_two_tops, "discard_top"),
    "a changed wild rank": (_wild, "wild_rank"),
    "no round marked": (_no_round, "round"),
    "two rounds marked": (lambda: _set({_at("round", 10 - STATE.round_number % 2): 1.0}), "round"),
    "both phases": (lambda: _set({_at("phase", 0): 1.0}), "phase"),
    "no phase": (lambda: _set({_at("phase", 1): 0.0}), "phase"),
    "half a phase": (lambda: _set({_at("phase", 1): 0.5}), "phase"),
    "two seats went out": (lambda: _set({_at("went_out", 1): 1.0, _at("went_out", 2): 1.0}), "went_out"),
    "a went-out flag of 0.5": (lambda: _set({_at("went_out", 1): 0.5}), "went_out"),
    "-1e8 in opponent_taken": (lambda: _set({_at("opponent_taken", 7): -1e8}), "opponent_taken"),
    "1e8 in opponent_taken": (lambda: _set({_at("opponent_taken", 7): 1e8}), "opponent_taken"),
    "NaN in opponent_taken": (lambda: _set({_at("opponent_taken", 7): np.nan}), "opponent_taken"),
    "inf in the hand": (lambda: _set({_at("hand", 7): np.inf}), "hand"),
    "-inf in the discards": (lambda: _set({_at("opponent_discards", 3): -np.inf}), "opponent_discards"),
    "a negative count in the pile": (lambda: _set({_at("discard_below", 9): -1.0}), "discard_below"),
    "half a card in the hand": (lambda: _set({_at("hand", 9): 0.5}), "hand"),
    "two copies of a card with one deck per 52 (3 players, 2 decks: three)": (
        lambda: _set({_at("discard_below", 9): 3.0}), "discard_below"),
    "a taken card counted twice more": (lambda: _set({_taken_card(): 3.0}), "opponent_taken"),
    "NaN as a hand size": (lambda: _set({_at("hand_sizes", 1): np.nan}), "hand_sizes"),
    "a hand size between cards": (lambda: _set({_at("hand_sizes", 1): 0.3}), "hand_sizes"),
    "a hand size of 100": (lambda: _set({_at("hand_sizes", 1): 100 / 14}), "hand_sizes"),
    "inf as the stock size": (lambda: _set({_at("stock_size"): np.inf}), "stock_size"),
    "a stock of half a card": (lambda: _set({_at("stock_size"): 0.5 / RULES.num_cards}), "stock_size"),
    "a negative score": (lambda: _set({_at("scores", 0): -0.01}), "scores"),
    "a score between points": (lambda: _set({_at("scores", 2): 0.015}), "scores"),
    "a huge score": (lambda: _set({_at("scores", 2): 1e30}), "scores"),
    "NaN as the turn": (lambda: _set({_at("turn"): np.nan}), "turn"),
    "-1e8 as the turn": (lambda: _set({_at("turn"): -1e8}), "turn"),
    "a turn past the limit": (lambda: _set({_at("turn"): 5.0}), "turn"),
    "one turn more than the discards allow": (
        lambda: _set({_at("turn"): np.float32((STATE.turn + 1) / RULES.max_turns_per_round)}), None),
    "an extra card in the hand": (lambda: _set({_at("hand", int(np.argmin(LAY.view(OBS, "hand")))): 1.0}), None),
    "cards below an empty top": (
        lambda: _set({_at("discard_top", int(np.flatnonzero(LAY.view(OBS, "discard_top"))[0])): 0.0}),
        "discard_below"),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_each_single_corruption_is_refused_cheaply(name):
    make, piece = CORRUPTIONS[name]
    obs = make()
    assert not np.array_equal(obs, OBS, equal_nan=True)
    for mask in (MASK, None):
        tracemalloc.start()
        try:
            with pytest.raises(InconsistentObservation) as info:
                determinize(obs, RULES, np.random.default_rng(0), action_mask=mask)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 2_000_000, f"{name}: {peak} bytes allocated before refusing"
        if piece is not None:
            assert piece in str(info.value), str(info.value)


def test_the_uncorrupted_observation_is_accepted():
    world = determinize(OBS, RULES, np.random.default_rng(0), action_mask=MASK)
    np.testing.assert_array_equal(encode(world, 0), OBS)


@pytest.mark.parametrize("mask_change", ["a discard in the draw phase", "a card not held", "two cards banned",
                                         "a value of 2", "the wrong shape", "strings"])
def test_a_mask_that_does_not_fit_the_observation_is_refused(mask_change):
    state = _position(Rules(), 5, lambda s: s.phase == game.PHASE_DISCARD and s.taken_this_turn is not None
                      and len(set(s.hands[s.current_player])) > 2)
    obs, mask = encode(state, state.current_player), game.action_mask(state).copy()
    held = set(state.hands[state.current_player])
    if mask_change == "a discard in the draw phase":
        obs = obs.copy()
        obs[get_layout(2).offsets["phase"]:get_layout(2).offsets["phase"] + 2] = [1.0, 0.0]
    elif mask_change == "a card not held":
        mask[game.DISCARD_BASE + min(set(range(52)) - held)] = 1
    elif mask_change == "two cards banned":  # only the card just taken may be banned
        mask[game.DISCARD_BASE + min(held - {state.taken_this_turn})] = 0
    elif mask_change == "a value of 2":
        mask[np.flatnonzero(mask)[0]] = 2
    elif mask_change == "the wrong shape":
        mask = mask[:-1]
    else:
        mask = np.array(["1"] * game.NUM_ACTIONS)
    with pytest.raises(InconsistentObservation, match="mask|phase"):
        determinize(obs, Rules(), np.random.default_rng(0), action_mask=mask)


@pytest.mark.parametrize("bad", [None, "text", [[1.0, 2.0]], {"mask": 1}, object()])
def test_what_is_not_an_observation_is_refused(bad):
    with pytest.raises(InconsistentObservation):
        determinize(bad, RULES, np.random.default_rng(0))


VALUES = st.one_of(st.sampled_from([0.0, 1.0, 2.0, 3.0, -1.0, 0.5, 1e8, -1e8, 1e30, np.nan, np.inf, -np.inf]),
                   st.floats(allow_nan=True, allow_infinity=True, width=32))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(st.integers(0, LAY.size - 1), VALUES), min_size=1, max_size=4),
       with_mask=st.booleans())
def test_any_changed_observation_is_refused_or_reencodes_exactly(changes, with_mask):
    obs = OBS.copy()
    for i, v in changes:
        obs[i] = v
    mask = MASK if with_mask else None
    try:
        world = determinize(obs, RULES, np.random.default_rng(0), action_mask=mask)
    except InconsistentObservation:
        return
    np.testing.assert_array_equal(encode(world, 0), obs)
    if with_mask:
        np.testing.assert_array_equal(game.action_mask(world), MASK)


# ---------------------------------------------------------------- decoding for agents
@pytest.mark.parametrize("index,value", [(_at("hand", 3), np.nan), (_at("hand", 3), 1e9), (_at("hand", 3), -2.0),
                                         (_at("hand_sizes", 0), np.inf), (_at("scores", 1), np.nan),
                                         (_at("opponent_taken", 60), 0.5)])
def test_agents_decoding_refuses_non_finite_and_impossible_counts(index, value):
    obs = _set({index: value})
    with pytest.raises(ValueError, match="observation"):
        decode_observation(obs)
    with pytest.raises(InconsistentObservation):
        check_vector(obs)


def test_agents_decoding_still_reads_good_observations():
    view = decode_observation(OBS)
    assert sorted(view.hand) == sorted(STATE.hands[STATE.current_player])
    assert check_vector(OBS) is not None


# ---------------------------------------------------------------- what agents are given
AGENT_OPTIONS = {"random-v0": {}, "greedy-v0": {}, "expert-v0": {}, "ismcts-v0": {"worlds": 2, "min_worlds": 2}}


def _bad_masks() -> dict[str, object]:
    held = set(STATE.hands[STATE.current_player])
    stray = MASK.copy()
    stray[game.DISCARD_BASE + min(set(range(52)) - held)] = 1
    both = MASK.copy()
    both[game.DRAW_STOCK] = 1
    draws_only = np.zeros_like(MASK)
    draws_only[game.DRAW_STOCK] = 1
    return {"short": MASK[:10], "None": None, "2-d": MASK[None], "strings": np.array(["1"] * game.NUM_ACTIONS),
            "a value of 0.5": MASK * 0.5, "NaN": np.full(game.NUM_ACTIONS, np.nan), "all zero": np.zeros_like(MASK),
            "a card not held": stray, "draws and discards": both, "draws in the discard phase": draws_only}


@pytest.mark.parametrize("agent", list(AGENT_OPTIONS))
@pytest.mark.parametrize("what", list(_bad_masks()))
def test_agents_refuse_a_mask_that_means_nothing(agent, what):
    from tt_env.agents import make_agent

    player = make_agent(agent, RULES, **AGENT_OPTIONS[agent])
    mask = _bad_masks()[what]
    if agent == "random-v0" and what in ("a card not held", "draws in the discard phase"):
        pytest.skip("random-v0 reads no observation: it cannot tell")
    with pytest.raises(ValueError, match="mask"):
        player.act(OBS, mask, np.random.default_rng(0))


@pytest.mark.parametrize("agent", ["greedy-v0", "expert-v0", "ismcts-v0"])
@pytest.mark.parametrize("index,value", [(_at("hand", 3), np.nan), (_at("hand", 3), -1.0), (_at("hand", 3), 1e9),
                                         (_at("hand", 3), 0.5), (_at("hand", 3), np.inf)])
def test_agents_refuse_an_impossible_hand(agent, index, value):
    from tt_env.agents import make_agent

    player = make_agent(agent, RULES, **AGENT_OPTIONS[agent])
    with pytest.raises(ValueError, match=r"observation hand\[3\]"):
        player.act(_set({index: value}), MASK, np.random.default_rng(0))
