"""``ismcts-v1``: the search on worlds from the learned belief, with policy-based inference."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from models.belief import Belief  # noqa: E402
from models.belief_net import BeliefNet  # noqa: E402
from models.search_agents import ISMCTS_V1_DEFAULTS, WORLDS_BY_PLAYERS, default_worlds  # noqa: E402
from tt_env.agents import ExpertAgent, ISMCTSAgent, list_agents, make_agent  # noqa: E402
from tt_env.engine import Rules, game  # noqa: E402
from tt_env.observation import encode  # noqa: E402

SMALL = {"worlds": 4, "min_worlds": 2}


def _belief(rules: Rules) -> Belief:
    torch.manual_seed(0)
    net = BeliefNet(rules.num_players, width=8, blocks=1)
    torch.nn.init.normal_(net.head.weight)
    return Belief(net, rules)


def _positions(rules: Rules, count: int, seed: int = 0):
    expert = ExpertAgent(rules)
    rng = np.random.default_rng(seed)
    state = game.new_game(rules, np.random.default_rng(seed))
    out = []
    while len(out) < count and not state.game_over:
        obs, mask = encode(state, state.current_player), game.action_mask(state)
        out.append((obs, mask))
        game.apply(state, expert.act(obs, mask, rng))
    return out


def test_registered_with_its_documented_defaults():
    assert "ismcts-v1" in list_agents()
    agent = make_agent("ismcts-v1", Rules())
    assert isinstance(agent, ISMCTSAgent) and agent.name == "ismcts-v1"
    for key, value in ISMCTS_V1_DEFAULTS.items():
        assert getattr(agent, "c" if key == "exploration" else key) == value, key
    assert type(agent.belief).__name__ == "Belief" and agent.belief.num_players == 2
    assert make_agent("ismcts-v1", Rules(num_players=3)).belief.num_players == 3


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_budget_in_worlds_shrinks_with_more_players(num_players):
    agent = make_agent("ismcts-v1", Rules(num_players=num_players))
    assert (agent.worlds, agent.min_worlds) == default_worlds(num_players)
    assert agent.worlds == WORLDS_BY_PLAYERS[num_players] and agent.min_worlds == agent.worlds // 2
    assert WORLDS_BY_PLAYERS[2] > WORLDS_BY_PLAYERS[3] > WORLDS_BY_PLAYERS[4]
    chosen = make_agent("ismcts-v1", Rules(num_players=num_players), worlds=6)
    assert (chosen.worlds, chosen.min_worlds) == (6, min(6, agent.worlds // 2))
    assert make_agent("ismcts-v1", Rules(num_players=num_players), worlds=20, min_worlds=20).min_worlds == 20
    with pytest.raises(ValueError, match="worlds='many' is not allowed"):
        make_agent("ismcts-v1", Rules(num_players=num_players), worlds="many")
    with pytest.raises(ValueError, match=r"takes no option\(s\) \['world'\]"):
        make_agent("ismcts-v1", Rules(), world=6)


def test_the_readme_table_matches_the_defaults():
    from doc_pages import page_with

    marker = "## `ismcts-v1`"  # docs/belief.md (the README's until issue 24)
    text = page_with(marker)
    section = text[text.index(marker):]
    section = section[:section.index("\n```")]
    for key, value in ISMCTS_V1_DEFAULTS.items():
        assert f"| `{key}` | {value} |" in section, key
    w = WORLDS_BY_PLAYERS
    assert f"| `worlds` | {w[2]} at 2 players, {w[3]} at 3, {w[4]} at 4 |" in section
    low = [default_worlds(n)[1] for n in (2, 3, 4)]  # half the default worlds, whatever worlds is given
    assert f"| `min_worlds` | {low[0]} at 2 players, {low[1]} at 3, {low[2]} at 4 or more (half the default " in section
    assert make_agent("ismcts-v1", Rules(), worlds=32).min_worlds == low[0]


@pytest.mark.parametrize("num_players", [2, 3])
def test_plays_legal_moves_and_is_seeded(num_players):
    rules = Rules(num_players=num_players)
    agent = make_agent("ismcts-v1", rules, belief=_belief(rules), **SMALL)
    for obs, mask in _positions(rules, 25, seed=num_players):
        a = agent.act(obs, mask, np.random.default_rng(5))
        assert mask[a]
        assert agent.act(obs, mask, np.random.default_rng(5)) == a


def test_bad_options_are_refused():
    rules = Rules()
    for bad in ({"tilt": -1.0}, {"infer": -1}, {"margin": float("inf")}, {"horizon": 1.5}):
        with pytest.raises(ValueError, match="is not allowed"):
            ISMCTSAgent(rules, belief=_belief(rules), **bad)
    with pytest.raises(ValueError, match="belief model"):
        ISMCTSAgent(rules, belief="belief-2p-v0")
    from models.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="player count mismatch"):
        make_agent("ismcts-v1", Rules(num_players=3), belief="belief-2p-v0")


class _Counting:
    """A belief that counts its draws and deals what a real one would."""

    def __init__(self, belief: Belief) -> None:
        self.belief, self.draws = belief, 0

    def sample_unknown(self, observation, rng):
        self.draws += 1
        return self.belief.sample_unknown(observation, rng)

    def logits(self, observation):
        return self.belief.logits(observation)


def test_worlds_come_from_the_belief_and_inference_redraws_them():
    rules = Rules()
    counting = _Counting(_belief(rules))
    plain = make_agent("ismcts-v1", rules, belief=counting, infer=0, worlds=4, min_worlds=4, z=100.0, candidates=2)
    inferring = make_agent("ismcts-v1", rules, belief=counting, infer=8, worlds=4, min_worlds=4, z=100.0,
                           candidates=2)
    searched, plain_draws, inferring_draws = 0, 0, 0
    for obs, mask in _positions(rules, 60, seed=3):
        before = counting.draws
        plain.act(obs, mask, np.random.default_rng(0))
        if plain.last_search:
            searched += 1
            # a draw per world (one more where a hand the opponent cannot hold is drawn again)
            assert counting.draws - before >= 4
            plain.last_search = {}
        plain_draws += counting.draws - before
        before = counting.draws
        inferring.act(obs, mask, np.random.default_rng(0))
        inferring_draws += counting.draws - before
    assert searched > 10
    assert inferring_draws > 1.5 * plain_draws  # worlds that contradict the last discard were drawn again


def test_allow_rule_mismatch_reaches_the_belief_as_the_evaluator_passes_it():
    """``--allow-rule-mismatch`` was given to checkpoint agents only, so ``ismcts-v1`` at other
    scoring was refused with a message that asked for that very flag."""
    from models.checkpoint import CheckpointError
    from tt_env.agents.registry import takes_option
    from tt_env.evaluation.duplicate import build_agent

    rules = Rules(aces="high_or_low", rounds=(1,))
    with pytest.raises(CheckpointError, match="allow_rule_mismatch=True"):
        build_agent("ismcts-v1", rules)
    agent = build_agent("ismcts-v1", rules, allow_rule_mismatch=True)
    assert agent.name == "ismcts-v1"
    assert takes_option("ismcts-v1", "allow_rule_mismatch") and takes_option("ppo-2p-v0", "allow_rule_mismatch")
    assert not takes_option("greedy-v0", "allow_rule_mismatch") and not takes_option("nope-v9", "anything")
    assert build_agent("greedy-v0", rules, allow_rule_mismatch=True).name == "greedy-v0"  # (not given to it)
    with pytest.raises(CheckpointError, match="deck count mismatch"):  # the deck count must still fit
        build_agent("ismcts-v1", Rules(decks=2, aces="high_or_low"), allow_rule_mismatch=True)


def test_numpy_numbers_are_options_and_a_belief_of_the_wrong_kind_is_named():
    """ismcts refused ``worlds=np.int64(8)`` as "not an int"; ``belief=True`` failed inside
    ``os.fspath``; a belief name of no shipped belief looked for a sidecar file."""
    agent = make_agent("ismcts-v0", Rules(), worlds=np.int64(8), min_worlds=np.int32(4), z=np.float32(1.5))
    assert (agent.worlds, agent.min_worlds) == (8, 4) and isinstance(agent.worlds, int)
    with pytest.raises(ValueError, match=r"worlds=True is not allowed"):
        make_agent("ismcts-v0", Rules(), worlds=np.bool_(True))
    with pytest.raises(ValueError, match=r"belief=True is not allowed: use a shipped belief's name \(\['belief-2p-v0'"):
        make_agent("ismcts-v1", Rules(), belief=True)
    with pytest.raises(ValueError, match=r"unknown belief 'nope': shipped beliefs are \['belief-2p-v0'"):
        make_agent("ismcts-v1", Rules(), belief="nope")
