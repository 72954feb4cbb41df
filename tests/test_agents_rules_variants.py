"""The scripted agents under every rule variant, and the search's own greedy policy against greedy-v0.

Written for mutants that survived (docs/MUTATION.md): ``greedy-v0`` dropping the aces-high
flag, ``tt_env.simulation.greedy`` (search's fast twin of greedy-v0) reached by no agent test,
``ExpertAgent.after_draw`` dropping ``meld_needs_natural``, a checkpoint option error naming
``None`` instead of the checkpoint.
"""

from __future__ import annotations

import numpy as np
import pytest

from tt_env.agents import ExpertAgent, GreedyAgent, make_agent, registry
from tt_env.engine import Rules, game, parse_cards
from tt_env.engine.melds import after_draw_values, least_penalty
from tt_env.observation import encode
from tt_env.search.simulation import greedy, play_out

VARIANTS = [Rules(), Rules(aces="high_or_low"), Rules(meld_needs_natural=True), Rules(discard_drawn_discard=True),
            Rules(num_players=3, aces="high_or_low", meld_needs_natural=True, rounds=(3, 9, 11))]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: repr(r)[6:60])
def test_simulation_greedy_plays_exactly_as_greedy_v0(rules):
    agent, rng = GreedyAgent(rules), np.random.default_rng(0)
    state = game.new_game(rules, np.random.default_rng(3))
    decisions = 0
    while not state.game_over and decisions < 160:
        seat = state.current_player
        expected = agent.act(encode(state, seat), game.action_mask(state), rng)
        assert greedy(state) == expected, state.describe()
        game.apply(state, int(rng.choice(game.legal_actions(state))) if decisions % 3 else expected)
        decisions += 1
    assert decisions > 100


def test_play_out_ends_the_round_and_gives_its_points():
    rules = Rules(rounds=(4,), max_turns_per_round=30)
    state = game.new_game(rules, np.random.default_rng(5))
    points = play_out(state, greedy)
    assert points is not None and state.game_over and points == state.round_results[-1].points
    assert play_out(game.new_game(rules, np.random.default_rng(5)), greedy, max_steps=1) is None


def test_greedy_v0_scores_hands_under_its_rules():
    hand, wild = parse_cards("QS KS AS 5H"), 7  # Q-K-A is a run only when aces may be high
    assert GreedyAgent(Rules(aces="high_or_low")).penalty(hand, wild) == least_penalty(hand, wild, True) == 5
    assert GreedyAgent(Rules()).penalty(hand, wild) == least_penalty(hand, wild) == 26
    wilds = parse_cards("7C 7D 7H")  # three wilds alone are a meld unless a meld needs a natural
    assert GreedyAgent(Rules(meld_needs_natural=True)).penalty(wilds, wild) == 21
    assert GreedyAgent(Rules()).penalty(wilds, wild) == 0


def test_expert_after_draw_uses_its_rules():
    hand, wild = parse_cards("7C 7D 7H"), 7  # a fourth wild: four wilds alone meld unless a natural is needed
    draw = parse_cards("7S")[0]
    for rules in (Rules(), Rules(meld_needs_natural=True), Rules(aces="high_or_low")):
        expert = ExpertAgent(rules)
        assert expert.after_draw(hand, draw, wild) == after_draw_values(
            hand, [draw], wild, rules.aces_high, rules.meld_needs_natural)[0]
    assert ExpertAgent(Rules(meld_needs_natural=True)).after_draw(hand, draw, wild) != \
        ExpertAgent(Rules()).after_draw(hand, draw, wild)


def test_a_bad_checkpoint_option_names_the_checkpoint(tmp_path, monkeypatch):
    def loader(path, rules, *, temperature=1.0):
        raise AssertionError("not reached: the option is refused first")

    monkeypatch.setattr(registry, "_CHECKPOINT_LOADERS", [loader])
    path = tmp_path / "policy.pt"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=rf"agent '{path}' takes no option\(s\) \['bogus'\]: allowed are "
                                         rf"\['temperature'\]"):
        make_agent(str(path), Rules(), bogus=1)
