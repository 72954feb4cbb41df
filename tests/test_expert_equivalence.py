"""expert-v0 after batching its solver calls decides exactly as before, score for score.

``tests/expert_reference.py`` keeps the old code (one ``best_melds`` call per possible draw,
one ``least_penalty`` call per discard candidate, the old observation decoder and
``expert_scores``). Positions come from games under many rule variants (2-4 players, aces
high, melds needing a natural, 1-3 decks, round subsets, the discard rule), played by the
new expert with a random move now and then so that odd hands turn up too. At every decision
of every seat both experts must give the same action, the same context (weights, gamma, feed
costs, bonus), the same ``hand_value`` of the hand held (and of every hand a discard would
leave), the same ``choose_discard`` result and the same ``expert_scores``, compared with ``==``
on the floats.

``TT_EXPERT_EQUIVALENCE_DECISIONS`` sets how many decisions to check (default 3,000 on the C
solver, 120 on the pure-Python one); the one-off check of many more is
``TT_EXPERT_EQUIVALENCE_DECISIONS=50000 python -m pytest -q tests/test_expert_equivalence.py``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from expert_reference import ReferenceExpertAgent, reference_decode_observation, reference_expert_scores

from tt_env.agents import ExpertAgent
from tt_env.agents.ismcts import expert_scores
from tt_env.observation.decode import decode_observation
from tt_env.engine import Rules, solver_backend
from tt_env.engine.game import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD, action_mask, apply, new_game
from tt_env.observation import encode

VARIANTS = [
    dict(num_players=2),
    dict(num_players=2, aces="high_or_low", rounds=(1, 5, 9, 11)),
    dict(num_players=2, meld_needs_natural=True, decks=2),
    dict(num_players=3, discard_drawn_discard=True),
    dict(num_players=3, aces="high_or_low", meld_needs_natural=True, rounds=(3, 7, 10, 11)),
    dict(num_players=4, decks=3, rounds=(8, 9, 10, 11)),
    dict(num_players=4, rounds=(1, 2, 3, 4, 11), max_turns_per_round=30),
]
DEFAULT_DECISIONS = 3000 if solver_backend() == "c" else 120


def _decisions() -> int:
    raw = os.environ.get("TT_EXPERT_EQUIVALENCE_DECISIONS", "")
    return int(raw) if raw.strip() else DEFAULT_DECISIONS


def _same_context(new, old) -> None:
    assert (new.wild, new.weights, new.gamma, new.feed, new.out_bonus) == \
        (old.wild, old.weights, old.gamma, old.feed, old.out_bonus)


def check_position(new: ExpertAgent, old: ReferenceExpertAgent, obs: np.ndarray, mask: np.ndarray) -> int:
    """Compare everything the two experts compute at one position; returns the (common) action."""
    view, old_view = decode_observation(obs), reference_decode_observation(obs)
    for field in view.__dataclass_fields__:
        a, b = getattr(view, field), getattr(old_view, field)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), field
        else:
            assert type(a) is type(b) and a == b, field
    ctx, old_ctx = new.context(view), old.context(old_view)
    _same_context(ctx, old_ctx)
    hand = view.hand
    final = view.went_out is not None
    assert new.hand_value(hand, ctx) == old.hand_value(hand, old_ctx)
    if mask[DRAW_STOCK] and mask[TAKE_DISCARD]:
        top = view.discard_top
        legal = [c for c in hand if c != top or new.rules.discard_drawn_discard]
        if legal:
            assert new.choose_discard(hand + [top], legal, ctx, final) == \
                old.choose_discard(hand + [top], legal, old_ctx, final)
    elif not (mask[DRAW_STOCK] or mask[TAKE_DISCARD]):
        legal = np.flatnonzero(mask[DISCARD_BASE:]).tolist()
        assert new.choose_discard(hand, legal, ctx, final) == old.choose_discard(hand, legal, old_ctx, final)
        for c in set(legal):  # every hand a discard leaves, not only the candidates looked at
            rest = list(hand)
            rest.remove(c)
            assert new.hand_value(rest, ctx) == old.hand_value(rest, old_ctx)
    assert expert_scores(new, obs, mask) == reference_expert_scores(old, obs, mask)
    action = new.act(obs, mask, np.random.default_rng(0))
    assert action == old.act(obs, mask, np.random.default_rng(0))
    return action


def play_and_compare(options: dict, decisions: int, seed: int) -> int:
    """Play games of ``options`` until ``decisions`` positions were compared; returns the count."""
    rules = Rules(**options)
    new, old = ExpertAgent(rules), ReferenceExpertAgent(rules)
    rng = np.random.default_rng(seed)
    checked, game_index = 0, 0
    while checked < decisions:
        state = new_game(rules, np.random.default_rng([seed, game_index]))
        game_index += 1
        while not state.game_over and checked < decisions:
            obs, mask = encode(state, state.current_player), action_mask(state)
            action = check_position(new, old, obs, mask)
            checked += 1
            if rng.random() < 0.1:  # now and then a random legal move, for hands experts avoid
                action = int(rng.choice(np.flatnonzero(mask)))
            apply(state, action)
    return checked


@pytest.mark.parametrize("index", range(len(VARIANTS)),
                         ids=[",".join(f"{k}={v}" for k, v in o.items()) for o in VARIANTS])
def test_expert_decides_and_scores_as_before(index: int) -> None:
    share = max(1, _decisions() // len(VARIANTS))
    assert play_and_compare(VARIANTS[index], share, seed=100 + index) == share


def test_the_comparison_catches_a_changed_score(monkeypatch) -> None:
    """The check is not vacuous: a gain off by one part in 10^12 is caught."""
    import tt_env.agents.expert as expert_module

    real = expert_module.draw_gains

    def slightly_off(*args):
        return [(penalty, gain * (1 + 1e-12)) for penalty, gain in real(*args)]

    monkeypatch.setattr(expert_module, "draw_gains", slightly_off)
    with pytest.raises(AssertionError):
        play_and_compare(VARIANTS[0], 60, seed=1)


def test_the_discard_after_a_take_is_the_one_scored_when_taking(monkeypatch) -> None:
    """choose_discard keeps its last answer: the discard decision after taking the discard asks
    exactly what the draw decision asked, so it is not solved again, and a fresh agent (no
    memory) and the old expert choose the same card."""
    rules = Rules(num_players=3)
    agent = ExpertAgent(rules)
    calls = []
    real = ExpertAgent._choose_discard

    def counted(self, *args):
        calls.append(args)
        return real(self, *args)

    monkeypatch.setattr(ExpertAgent, "_choose_discard", counted)
    state, rng, takes = new_game(rules, np.random.default_rng(5)), np.random.default_rng(0), 0
    while not state.game_over and takes < 10:
        obs, mask = encode(state, state.current_player), action_mask(state)
        action = agent.act(obs, mask, rng)
        apply(state, action)
        if action == TAKE_DISCARD:
            takes += 1
            obs, mask = encode(state, state.current_player), action_mask(state)
            before = len(calls)
            card = agent.act(obs, mask, rng)
            assert len(calls) == before  # answered from the draw decision
            assert card == ExpertAgent(rules).act(obs, mask, rng) == ReferenceExpertAgent(rules).act(obs, mask, rng)
            apply(state, card)
    assert takes == 10
