"""A network agent (``models.checkpoint_agent.CheckpointAgent``) as the scripted agents are: its
masks checked, its flags bools, the rules it was loaded for carried and its features computed for
the game on the table."""

from __future__ import annotations

import numpy as np
import pytest

from models.agent_loader import CHECKPOINT_DIR, load_agent
from tt_env.engine.rules import Rules

from test_eval_batch import positions, saved


def test_a_network_refuses_a_mask_that_means_nothing_as_scripted_agents_do(tmp_path):
    """A draw-only mask in the discard phase got a draw back; a discard of a card not held, a
    numpy error; 2s in the mask were taken as legal."""
    agent = load_agent(saved(tmp_path), Rules())
    obs, masks = positions(Rules(), 40)
    row = next(i for i in range(40) if masks[i][2:].any())  # a discard phase
    hand = [c for c in range(52) if masks[row][2 + c]]
    for change, message in (
            (lambda m: (m.__setitem__(slice(None), 0), m.__setitem__(0, 1)), "the observation is in the discard phase"),
            (lambda m: m.__setitem__(0, 1), "allows both draws and discards"),
            (lambda m: m.__setitem__(2 + next(c for c in range(52) if c not in hand), 1), "which the observation.s hand does not hold"),
            (lambda m: m.__setitem__(2 + hand[0], 2), "holds 0 or 1")):
        mask = masks[row].copy()
        change(mask)
        with pytest.raises(ValueError, match=message):
            agent.act(obs[row], mask, None)


def test_a_network_agent_s_flags_and_rules_are_checked(tmp_path):
    """``greedy="false"`` played argmax and ``allow_rule_mismatch="no"`` turned the check off (truthy
    strings); a network agent object had no ``rules``, so an env took it for any game."""
    import gymnasium

    path = saved(tmp_path)
    for option in ("greedy", "allow_rule_mismatch"):
        with pytest.raises(ValueError, match=rf"{option}='false' is not allowed: use True or False"):
            load_agent(path, Rules(), **{option: "false"})
    agent = load_agent(path, Rules())
    assert agent.rules == Rules()
    with pytest.raises(ValueError, match=r"was built for max_turns_per_round=200, but the game has max_turns_per_round"):
        gymnasium.make("tt_env/ThreeThirteen-v0", opponents=[agent], max_turns_per_round=30)


def test_a_loaded_network_computes_its_features_for_the_game_on_the_table():
    """The expert features were computed for a full game of 200 turns and the automatic decks
    whatever the game (its turn limit and decks may differ from the network's): 973 of 1,500
    positions of a 30-turn game had other features, 76 another move."""
    from models.expert_features import ExpertFeaturizer

    game = Rules(max_turns_per_round=30, decks=3)
    agent = load_agent(CHECKPOINT_DIR / "ppo-2p-v1.pt", game)
    assert agent.net._expert.rules == game and agent.net.num_decks == 3
    obs, masks = positions(game, 20)
    expected = ExpertFeaturizer(2, exact_last_turn=agent.net.exact_last_turn, rules=game)(obs, masks)
    got = agent.net._expert(obs, masks)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
