"""Details of search and the agents built on it that one-line bugs used to break unnoticed.

Each test here failed on a deliberate one-line bug that the rest of the suite let through
(issue 19, section 4): ``ismcts-v0``'s documented defaults changed; ``determinize`` giving the
observer's own discards one card too many; ``sample_world`` tilting every opponent by the
observer's discard count instead of its own; ``expected_penalties`` valuing the stock draw as
the take when nothing is unseen.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import tt_env.search.worlds as search
from doc_pages import page_with
from tt_env.agents import ISMCTSAgent, make_agent
from tt_env.agents.last_turn import expected_penalties, last_turn_scores
from tt_env.observation.decode import decode_observation
from tt_env.engine import Rules, game, parse_cards
from tt_env.engine.melds import least_penalty
from tt_env.observation import encode


# ---------------------------------------------------------------- ismcts-v0's documented defaults
def _readme_option_table() -> dict[str, str]:
    """``{option: default}`` of the ``ismcts-v0`` option table (docs/agents.md; the README's until
    issue 24; a row may name two)."""
    text = page_with("### `ismcts-v0`")
    section = text[text.index("### `ismcts-v0`"):]
    table = section[section.index("| option | default | what |"):].split("\n\n")[0]
    out = {}
    for row in table.splitlines()[2:]:
        names, defaults = [cell.strip() for cell in row.strip("|").split("|")][:2]
        for name, default in zip(re.findall(r"`(\w+)`", names), [d.strip() for d in defaults.split(",")], strict=True):
            out[name] = default.strip("`")
    return out


ATTRIBUTE = {"exploration": "c", "rollout": None}  # how the agent stores an option (None: not comparable)


def test_ismcts_v0_defaults_are_the_documented_ones():
    documented = _readme_option_table()
    assert {"worlds", "min_worlds", "candidates", "z", "tree_depth", "exploration", "rollout", "belief",
            "belief_steps", "exact_last_turn"} <= set(documented)
    signature = inspect.signature(ISMCTSAgent.__init__).parameters
    agent = make_agent("ismcts-v0", Rules())
    for name, text in documented.items():
        value = {"True": True, "False": False}.get(text, text.strip('"'))
        if isinstance(value, str) and re.fullmatch(r"-?[\d.]+", value):
            value = float(value) if "." in value else int(value)
        assert signature[name].default == value, f"{name}: the docs say {text}, the code {signature[name].default!r}"
        attribute = ATTRIBUTE.get(name, name)
        if attribute is not None:
            stored = getattr(agent, attribute)
            assert stored == value and type(stored) is type(value), f"ismcts-v0 stores {name}={stored!r}, not {text}"
    # rollout="expert": expert-v0 plays every seat of the play-outs
    expert, rng = make_agent("expert-v0", Rules()), np.random.default_rng(0)
    state = game.new_game(Rules(), np.random.default_rng(1))
    for _ in range(30):
        seat = state.current_player
        assert agent.rollout(state) == expert.act(encode(state, seat), game.action_mask(state), rng)
        game.apply(state, agent.rollout(state))


def test_ismcts_v0_options_are_the_ones_given():
    given = {"worlds": 7, "min_worlds": 3, "candidates": 3, "z": 0.5, "tree_depth": 2, "exploration": 4.0,
             "belief": 0.1, "belief_steps": 9, "exact_last_turn": False}
    agent = make_agent("ismcts-v0", Rules(), **given)
    for name, value in given.items():
        assert getattr(agent, ATTRIBUTE.get(name, name)) == value, name


def test_sample_world_defaults_are_ismcts_v0s():
    """The docs' ``sample_world(..., belief=0.04)`` and ismcts-v0's belief are the same defaults."""
    params = inspect.signature(search.sample_world).parameters
    agent_params = inspect.signature(ISMCTSAgent.__init__).parameters
    assert params["belief"].default == agent_params["belief"].default == 0.04
    assert params["steps"].default == agent_params["belief_steps"].default == 60


# ---------------------------------------------------------------- the observer's own discards
def _never_take(rules: Rules, seed: int, steps: int) -> list[game.GameState]:
    """Positions of a game in which nobody takes from the discard pile and the stock never runs out:
    the pile then holds the first discard and every discard of the round."""
    rng = np.random.default_rng(seed)
    state = game.new_game(rules, rng)
    out = []
    for _ in range(steps):
        if state.game_over or len(state.stock) < 2:
            break
        out.append(state.copy())
        legal = [a for a in game.legal_actions(state) if a != game.TAKE_DISCARD]
        nxt, _ = game.applied(state, int(rng.choice(legal)), rng)
        if nxt.round_index != state.round_index:
            break
        state = nxt
    return out


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_observers_own_discards_are_as_many_as_it_made(num_players):
    rules = Rules(num_players=num_players, rounds=(11,), max_turns_per_round=60)
    checked = 0
    for seed in range(3):
        for state in _never_take(rules, seed, 80):
            for seat in range(num_players):
                world = search.determinize(encode(state, seat), rules, np.random.default_rng(seed))
                assert len(world.discards[0]) == len(state.discards[seat])
                assert sum(len(d) for d in world.discards) == world.turn  # one discard a turn, as in a game
                checked += len(state.discards[seat]) > 0
    assert checked > 50


# ---------------------------------------------------------------- the tilt of each opponent
@pytest.mark.parametrize("num_players", [3, 4])
def test_each_opponent_is_tilted_by_its_own_discards(num_players, monkeypatch):
    calls: list[tuple[int, float]] = []
    monkeypatch.setattr(search, "tilt_hidden_hand", lambda state, seat, strength, steps, rng:
                        calls.append((seat, strength)))
    rules = Rules(num_players=num_players, rounds=(9,))
    rng = np.random.default_rng(4)
    state = game.new_game(rules, rng)
    differ = 0
    while state.turn < 3 * num_players:
        observer = state.current_player
        calls.clear()
        search.sample_world(encode(state, observer), rules, np.random.default_rng(0), belief=0.5)
        expected = [(k, 0.5 * len(state.discards[(observer + k) % num_players])) for k in range(1, num_players)]
        assert calls == expected
        differ += len({s for _, s in expected} | {0.5 * len(state.discards[observer])}) > 1
        game.apply(state, int(rng.choice([a for a in game.legal_actions(state) if a != game.TAKE_DISCARD])))
    assert differ > 0  # positions where the observer's count differs from an opponent's were checked


# ---------------------------------------------------------------- the last turn with nothing unseen
def test_with_nothing_unseen_a_stock_draw_keeps_the_hand():
    hand, top, wild = parse_cards("5C 5D 9S KH"), parse_cards("5H")[0], 2
    stock, take = expected_penalties(hand, top, [0.0] * 52, wild)
    assert take == 9.0  # 5C 5D 5H, the king thrown, 9S left
    assert stock == float(least_penalty(hand, wild)) == 29.0 != take


def test_last_turn_scores_with_every_card_seen():
    """A view in which the observer has seen every copy of every card: the stock draw is worth the
    hand as held, so the take wins by 20 points."""
    rules = Rules()
    state = game.new_game(rules, np.random.default_rng(0))
    view = decode_observation(encode(state, state.current_player))
    view.hand, view.discard_top, view.wild_rank = parse_cards("5C 5D 9S KH"), parse_cards("5H")[0], 2
    view.discard_below = np.ones(52, dtype=np.int64)  # everything else is known to be in the pile
    assert view.unseen_weights(rules.num_decks) == [0.0] * 52
    assert last_turn_scores(view, rules) == [(game.TAKE_DISCARD, 9.0), (game.DRAW_STOCK, 29.0)]


def test_last_turn_scores_follow_the_rules():
    """Q-K of spades and the ace on the pile: a run (taking wins) only when aces may be high."""
    state = game.new_game(Rules(), np.random.default_rng(0))
    view = decode_observation(encode(state, state.current_player))
    view.hand, view.discard_top, view.wild_rank = parse_cards("QS KS 4H 9D"), parse_cards("AS")[0], 7
    for rules, natural in ((Rules(aces="high_or_low"), False), (Rules(), False), (Rules(meld_needs_natural=True), True)):
        weights = view.unseen_weights(rules.num_decks)
        expected = expected_penalties(view.hand, view.discard_top, weights, view.wild_rank,
                                      aces_high=rules.aces_high, meld_needs_natural=natural)
        assert dict(last_turn_scores(view, rules)) == {game.DRAW_STOCK: expected[0], game.TAKE_DISCARD: expected[1]}
    high = dict(last_turn_scores(view, Rules(aces="high_or_low")))
    assert high[game.TAKE_DISCARD] == 4.0  # Q-K-A melded, the 9 thrown, the 4 left
    assert dict(last_turn_scores(view, Rules()))[game.TAKE_DISCARD] > 4.0


def test_a_world_reshuffles_from_a_generator_of_its_own():
    """The module docstring: fresh generators for the next deals and for the reshuffles. With one
    generator for both, how often a world's stock runs dry would change its later deals."""
    rules = Rules()
    state = game.new_game(rules, np.random.default_rng(2))
    world = search.determinize(encode(state, state.current_player), rules, np.random.default_rng(7))
    assert isinstance(world.shuffle_rng, np.random.Generator) and world.shuffle_rng is not world.rng
    deals = world.rng.integers(2 ** 62, size=4).tolist()
    again = search.determinize(encode(state, state.current_player), rules, np.random.default_rng(7))
    assert again.rng.integers(2 ** 62, size=4).tolist() == deals  # both drawn from the caller's generator
    assert again.shuffle_rng.integers(2 ** 62, size=4).tolist() != deals
