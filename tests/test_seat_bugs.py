"""Tests written against the one-line bugs a mutation audit found surviving (issue 25), most of them
seat bugs that games of 2 players cannot show: at 2 players ``seat + 1`` and ``seat - 1`` are the
same seat, and the "other opponents" are nobody. Each test below plays 3 and 4 players (and other
rules) where the bug shows."""

from __future__ import annotations

import numpy as np
import pytest

from tt_env.agents.last_turn import expected_penalties, last_turn_scores
from tt_env.observation.decode import decode_observation
from tt_env.engine import game
from tt_env.engine.rules import Rules
from tt_env.observation import encode, get_layout
from tt_env.search import determinize, sample_world


def positions(rules: Rules, seed: int, every: int = 3, limit: int = 40, agent: str | None = None):
    """(state copy, seat to move) at every ``every``-th decision of a game of random moves (or ``agent``'s)."""
    from tt_env.agents import make_agent

    rng = np.random.default_rng(seed)
    player = make_agent(agent, rules) if agent else None
    state = game.new_game(rules, np.random.default_rng(seed))
    out, i = [], 0
    while not state.game_over and len(out) < limit:
        if i % every == 0:
            out.append((state.copy(), state.current_player))
        if player is not None:
            p = state.current_player
            action = int(player.act(encode(state, p), game.action_mask(state), rng))
        else:
            legal = game.legal_actions(state)
            action = int(legal[int(rng.integers(len(legal)))])
        game.apply(state, action)
        i += 1
    return out


# ---------------------------------------------------------------------- determinize: first player and dealer
@pytest.mark.parametrize("n", [3, 4, 5])
def test_determinize_puts_the_dealer_and_the_mover_where_they_are(n):
    rules = Rules(num_players=n, rounds=[3, 4])
    checked = 0
    for state, _ in positions(rules, seed=n, every=1, limit=60):
        for observer in range(n):  # the mover's view (with its mask) and the others' views
            mover = observer == state.current_player
            mask = game.action_mask(state) if mover else None
            world = determinize(encode(state, observer), rules, np.random.default_rng(0), action_mask=mask)
            if world.current_player != (state.current_player - observer) % n:
                assert not mover  # another seat the observation allows (the start of a round)
                continue
            assert world.dealer == (state.dealer - observer) % n
            checked += 1
    assert checked > 100


# ---------------------------------------------------------------------- the last turn: the rules' decks
def test_the_last_turns_stock_weights_count_the_rules_decks():
    rules = Rules(num_players=2, decks=2)
    differ = 0
    for state, seat in positions(rules, seed=1, every=1, limit=80):
        if state.phase != game.PHASE_DRAW:
            continue
        view = decode_observation(encode(state, seat))
        scores = dict(last_turn_scores(view, rules))
        kwargs = {"aces_high": rules.aces_high, "meld_needs_natural": rules.meld_needs_natural,
                  "discard_drawn_discard": rules.discard_drawn_discard}
        two, _ = expected_penalties(view.hand, view.discard_top, view.unseen_weights(2), view.wild_rank, **kwargs)
        one, _ = expected_penalties(view.hand, view.discard_top, view.unseen_weights(1), view.wild_rank, **kwargs)
        assert scores[game.DRAW_STOCK] == pytest.approx(two)
        differ += abs(one - two) > 1e-9
    assert differ > 0  # positions where one deck's weights would give another value


# ---------------------------------------------------------------------- the search: the observer's reward
@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_search_chooses_by_the_observers_own_reward(n, monkeypatch):
    from tt_env.agents.ismcts import ISMCTSAgent

    rules = Rules(num_players=n, rounds=[5])
    agent = ISMCTSAgent(rules, worlds=4, min_worlds=4)
    for state, seat in positions(rules, seed=7, every=1, limit=30):
        if state.phase == game.PHASE_DISCARD:
            break
    obs, mask = encode(state, seat), game.action_mask(state)
    seen: list[int] = []

    def fake_iterate(root, world, action):
        seen.append(action)
        order = sorted(set(seen))
        best_for_me, best_for_others = order[-1], order[0]
        return [1.0 if action == best_for_me else 0.0] + [1.0 if action == best_for_others else 0.0] * (n - 1)

    monkeypatch.setattr(agent, "_iterate", fake_iterate)
    choice = agent.act(obs, mask, np.random.default_rng(0))
    tried = sorted(set(seen))
    assert len(tried) > 1
    assert choice == tried[-1]


# ---------------------------------------------------------------------- the tilt over several opponents
def _spread_position(n: int):
    """A position where every opponent has discarded this round (so each has a tilt to apply)."""
    rules = Rules(num_players=n, rounds=[7])
    for state, seat in positions(rules, seed=3, every=1, limit=200):
        if all(len(state.discards[(seat + k) % n]) >= 2 for k in range(1, n)) and state.phase == game.PHASE_DRAW:
            return rules, state, seat
    raise AssertionError("no such position")


@pytest.mark.parametrize("n", [3, 4])
def test_a_numeric_tilt_moves_every_opponents_hand(n):
    rules, state, seat = _spread_position(n)
    obs, mask = encode(state, seat), game.action_mask(state)
    moved = np.zeros(n, dtype=int)
    for s in range(20):
        plain = sample_world(obs, rules, np.random.default_rng(s), action_mask=mask, belief=0.0)
        tilted = sample_world(obs, rules, np.random.default_rng(s), action_mask=mask, belief=3.0, steps=60)
        for k in range(1, n):
            moved[k] += sorted(plain.hands[k]) != sorted(tilted.hands[k])
    assert all(moved[k] >= 10 for k in range(1, n)), moved


class FavouringBelief:
    """A stand-in for a learned belief: uniform hands (determinize's), and per opponent ``k`` logits that
    favour the card types of one suit, ``k - 1`` (so each opponent has logits of its own)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules

    def sample_unknown(self, obs, rng):
        world = determinize(obs, self.rules, rng)
        n = self.rules.num_players
        return np.stack([np.bincount(world.hands[k][len(world.known_taken[k]):], minlength=52)
                         for k in range(1, n)])

    def logits(self, obs):
        n = self.rules.num_players
        out = np.full((n - 1, 52), -6.0)
        for k in range(n - 1):
            out[k, [c for c in range(52) if c // 13 == k]] = 6.0  # suit k (cards are suit-major)
        return out


@pytest.mark.parametrize("n", [3, 4])
def test_a_models_tilt_reads_each_opponents_own_logits(n):
    rules, state, seat = _spread_position(n)
    obs, mask = encode(state, seat), game.action_mask(state)
    belief = FavouringBelief(rules)
    share = np.zeros((n, 4))
    for s in range(10):
        world = sample_world(obs, rules, np.random.default_rng(s), action_mask=mask, belief=belief, steps=200,
                             tilt=1e-6)
        for k in range(1, n):
            unknown = world.hands[k][len(world.known_taken[k]):]
            for c in unknown:
                share[k, c // 13] += 1
    for k in range(1, n):
        assert share[k].argmax() == k - 1, share  # each opponent drawn towards its own suit


def test_the_agent_passes_its_tilt_on(monkeypatch):
    pytest.importorskip("torch")
    import tt_env.agents.ismcts as ismcts

    rules = Rules(num_players=3)
    calls = []

    def recording(*args, **kwargs):
        calls.append(kwargs)
        raise StopIteration

    agent = ismcts.ISMCTSAgent(rules, belief=FavouringBelief(rules), tilt=0.75, worlds=2, min_worlds=2)
    monkeypatch.setattr(ismcts, "sample_world", recording)
    state, seat = positions(rules, seed=2, every=1, limit=1)[0]
    with pytest.raises(StopIteration):
        agent._world(encode(state, seat), game.action_mask(state), 5)
    assert calls and calls[0]["tilt"] == 0.75 and calls[0]["belief"] is agent.belief


# ---------------------------------------------------------------------- the belief data's labels
@pytest.mark.parametrize("n", [3, 4])
def test_belief_labels_are_each_opponents_unknown_cards_from_the_left(n):
    from training.belief_data import history_blocks, unknown_counts

    rules = Rules(num_players=n, rounds=[6])
    for state, seat in positions(rules, seed=5, every=2, limit=30):
        labels = unknown_counts(state, seat)
        passed, recent = history_blocks(state, seat)
        for k in range(1, n):
            other = (seat + k) % n
            unknown = list(state.hands[other])
            for c in state.known_taken[other]:
                unknown.remove(c)
            np.testing.assert_array_equal(labels[k - 1], np.bincount(unknown, minlength=52))
            np.testing.assert_array_equal(passed[k - 1], np.bincount(state.passed[other], minlength=52))
            assert set(np.flatnonzero(recent[k - 1])) == set(state.discards[other])


# ---------------------------------------------------------------------- the belief model's planes
@pytest.mark.parametrize("n", [3, 4])
def test_belief_planes_describe_each_opponent_in_its_own_row(n):
    pytest.importorskip("torch")
    from models.belief_net import belief_inputs

    rules = Rules(num_players=n, rounds=[3, 4, 5])
    lay = get_layout(n)
    went_out_seen = scores_seen = 0
    for state, seat in positions(rules, seed=6, every=1, limit=300, agent="greedy-v0"):
        went_out_seen += state.went_out is not None and state.went_out != seat
        scores_seen += len(set(state.scores)) == n
        obs = encode(state, seat)
        planes, scalars = belief_inputs(obs[None], n, rules.num_decks)
        assert planes.shape[0] == n - 1
        taken = [np.bincount(state.known_taken[(seat + k) % n], minlength=52) for k in range(1, n)]
        thrown = [np.bincount(state.discards[(seat + k) % n], minlength=52) for k in range(1, n)]
        went = lay.view(obs[None], "went_out")[0]
        scores = lay.view(obs[None], "scores")[0]
        for k in range(n - 1):
            np.testing.assert_allclose(planes[k, 4], taken[k])
            np.testing.assert_allclose(planes[k, 5], thrown[k])
            np.testing.assert_allclose(planes[k, 8], sum(taken) - taken[k])
            np.testing.assert_allclose(planes[k, 9], sum(thrown) - thrown[k])
            assert scalars[k, 14] == went[k + 1]
            assert scalars[k, 15] == pytest.approx(went[1:].sum() - went[k + 1])
            assert scalars[k, 20] == pytest.approx(thrown[k].sum() / 20.0)
            assert scalars[k, 22] == pytest.approx(scores[k + 1] - scores[0])
    assert went_out_seen and scores_seen  # positions where these rows differ by opponent
