"""Batched agents: greedy-v0 makes the scalar agent's exact choices; random-v0 is uniform and legal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tt_env.agents.greedy import GreedyAgent
from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchGreedy, BatchNetwork, BatchRandom, make_batch_agent
from tt_env.engine.rules import Rules

RULES = {
    "2p": Rules(),
    "3p aces high ddd": Rules(num_players=3, aces="high_or_low", discard_drawn_discard=True, rounds=(1, 7, 11)),
    "4p natural 3 decks": Rules(num_players=4, meld_needs_natural=True, decks=3, rounds=(4, 11)),
}


@pytest.mark.parametrize("name", list(RULES))
def test_batch_greedy_equals_scalar_greedy(name: str) -> None:
    """On the positions of random play, every row's batched choice is the scalar agent's."""
    rules = RULES[name]
    game = BatchGame(rules, 16, seed=5)
    ts = game.reset()
    batch, scalar = BatchGreedy(rules), GreedyAgent(rules)
    mover = BatchRandom(rules, seed=1)
    rng = np.random.default_rng(0)
    compared = 0
    for step in range(80):
        got = batch.act(ts.observation, ts.action_mask)
        want = [scalar.act(o, m.astype(np.int8), rng) for o, m in zip(ts.observation.numpy(), ts.action_mask.numpy(), strict=True)]
        assert got.tolist() == want, step
        compared += len(want)
        # mix the greedy moves with random ones so that positions vary
        ts = game.step(torch.where(torch.rand(16) < 0.5, got, mover.act(ts.observation, ts.action_mask)))
    assert compared == 16 * 80


def test_batch_random_is_legal_and_covers_the_mask() -> None:
    rules = Rules()
    game = BatchGame(rules, 4, seed=2)
    ts = game.reset()
    agent = BatchRandom(rules, seed=3)
    seen: set[int] = set()
    for _ in range(400):
        a = agent.act(ts.observation, ts.action_mask)
        assert ts.action_mask.gather(1, a.unsqueeze(1)).all()
        seen.update(a.tolist())
        ts = game.step(a)
    assert {0, 1} <= seen and len(seen) > 20


def test_batch_network_acts_legally_with_any_policy() -> None:
    rules = Rules()
    game = BatchGame(rules, 8, seed=4)
    ts = game.reset()
    ones = BatchNetwork(lambda obs, mask: torch.zeros(mask.shape), greedy=False, seed=0)
    for _ in range(50):
        a = ones.act(ts.observation, ts.action_mask)
        assert ts.action_mask.gather(1, a.unsqueeze(1)).all()
        ts = game.step(a)


def test_make_batch_agent_names_and_errors() -> None:
    rules = Rules()
    assert isinstance(make_batch_agent("greedy-v0", rules), BatchGreedy)
    assert isinstance(make_batch_agent("random-v0", rules), BatchRandom)
    with pytest.raises(ValueError, match="no batched version"):
        make_batch_agent("expert-v0", rules)


def test_made_agents_keep_the_rules_and_the_checkpoint_s_name() -> None:
    """``make_batch_agent`` builds greedy-v0 for the rules it is given (here 3 players, aces high),
    and names a network loaded from a path as the scalar agent does (the checkpoint's name)."""
    rules = RULES["3p aces high ddd"]
    game = BatchGame(rules, 16, seed=2)
    ts = game.reset()
    made, direct, mover = make_batch_agent("greedy-v0", rules), BatchGreedy(rules), BatchRandom(rules, seed=3)
    for _ in range(30):
        assert torch.equal(made.act(ts.observation, ts.action_mask), direct.act(ts.observation, ts.action_mask))
        ts = game.step(mover.act(ts.observation, ts.action_mask))
    path = Path(__file__).resolve().parents[1] / "models" / "checkpoints" / "ppo-2p-v1.pt"
    assert make_batch_agent(str(path), Rules()).name == "ppo-2p-v1"
    assert make_batch_agent(str(path), Rules()).greedy and not make_batch_agent(str(path), Rules(), greedy=False).greedy


def test_agents_refuse_rows_of_the_wrong_shape_by_name() -> None:
    """A 2-player greedy-v0 given 3-player observations would read the wrong columns and play on:
    every batched agent checks the shapes of what it is given (no wait on the device)."""
    ts = BatchGame(Rules(num_players=3), 4, seed=0).reset()
    agents = [BatchGreedy(Rules()), BatchRandom(Rules()), BatchNetwork(lambda obs, mask: torch.zeros(mask.shape))]
    with pytest.raises(ValueError, match=r"observation must be a \(4, 294\) tensor \(the 2-player observation\), one "
                                         r"row per row of action_mask, got shape \(4, 401\)"):
        agents[0].act(ts.observation, ts.action_mask)
    assert BatchGreedy(Rules(num_players=3)).act(ts.observation, ts.action_mask).shape == (4,)
    for agent in agents:
        with pytest.raises(ValueError, match=r"action_mask must be a \(B, 54\) tensor .* got shape \(4, 10\)"):
            agent.act(ts.observation, ts.action_mask[:, :10])
        with pytest.raises(ValueError, match=r"action_mask must be a \(B, 54\) tensor .* got a ndarray"):
            agent.act(ts.observation, ts.action_mask.numpy())
        with pytest.raises(ValueError, match=r"observation must be a \(4, .* got shape \(2, 401\)"):
            agent.act(ts.observation[:2], ts.action_mask)


def test_agent_seeds_are_named_when_torch_would_refuse_them_later() -> None:
    """A batched agent's seed is checked when it is made: a network's generator is only seeded at
    its first sampled action, where torch's error would come far from the cause."""
    for bad in (-1, "a", None, True, 1.5, 2 ** 64):
        for make in (lambda s: BatchRandom(seed=s), lambda s: BatchNetwork(lambda o, m: m.float(), seed=s)):
            with pytest.raises(ValueError, match=rf"seed={bad!r} is not allowed: a batched agent's seed is an "
                                                  rf"integer 0\.\.2\*\*64-1"):
                make(bad)
    ts = BatchGame(Rules(), 8, seed=1).reset()
    a, b = BatchRandom(seed=np.int64(5)), BatchRandom(seed=5)  # numpy's ints are their ints
    assert torch.equal(a.act(ts.observation, ts.action_mask), b.act(ts.observation, ts.action_mask))
    assert BatchRandom(seed=2 ** 64 - 1).act(ts.observation, ts.action_mask).shape == (8,)


def test_a_wild_jack_tied_with_tens_is_kept_as_the_scalar_agent_keeps_it() -> None:
    """A tie the random positions rarely reach: in round 9 (jacks wild) discarding TC, KD, QH or
    the wild JS all leave 67 points. The scalar greedy-v0 values the wild jack at 10 like the
    others, keeps the wild, and discards the highest card int, QH; the batched agent must too."""
    from tt_env.engine import game as engine
    from tt_env.engine import parse_cards
    from tt_env.engine.melds import discard_penalties
    from tt_env.observation import encode

    rules = Rules(rounds=(9,))
    state = engine.new_game(rules, np.random.default_rng(0))
    engine.apply(state, engine.DRAW_STOCK)
    seat, target = state.current_player, parse_cards("4C TC 3D 6D 9D KD 2H 5H QH AS 7S JS")
    hand = state.hands[seat]
    for card in target:  # swap the cards in from the stock or the other hand: still one deck
        if card not in hand:
            out = next(c for c in hand if c not in target)
            pile = state.stock if card in state.stock else state.hands[1 - seat]
            pile[pile.index(card)], hand[hand.index(out)] = out, card
    assert sorted(hand) == sorted(target) and state.wild_rank == 11
    left = dict(discard_penalties(hand, 11))
    assert {c for c in hand if left[c] == min(left.values())} == set(parse_cards("TC KD QH JS"))
    obs, mask = encode(state, seat), engine.action_mask(state)
    want = GreedyAgent(rules).act(obs, mask.astype(np.int8), np.random.default_rng(0))
    got = BatchGreedy(rules).act(torch.from_numpy(obs).unsqueeze(0), torch.from_numpy(mask.astype(bool)).unsqueeze(0))
    assert want == engine.DISCARD_BASE + parse_cards("QH")[0] and int(got) == want


def test_every_agent_plays_0_on_rows_with_no_legal_action() -> None:
    """A finished table (autoreset=False, as TorchRL steps them) has no legal action: a sampling
    BatchNetwork raised inside torch ("probability tensor contains either inf, nan ...") and
    BatchGreedy answered a discard; like the greedy network and BatchRandom, they now play 0 there."""
    rules = Rules(rounds=[1])
    game = BatchGame(rules, 8, seed=1, autoreset=False)
    ts = game.reset()
    zeros = lambda obs, mask: torch.zeros(mask.shape)  # noqa: E731
    agents = [BatchNetwork(zeros, greedy=False, seed=0), BatchNetwork(zeros), BatchRandom(rules), BatchGreedy(rules)]
    mixed = 0
    for _ in range(400):
        some = ts.action_mask.any(dim=1)
        mixed += int(bool(some.any()) and not bool(some.all()))
        for agent in agents:
            a = agent.act(ts.observation, ts.action_mask)
            assert not bool(a[~some].any()), agent
            assert ts.action_mask[some].gather(1, a[some].unsqueeze(1)).all(), agent
        if not bool(some.any()):
            break
        ts = game.step(agents[0].act(ts.observation, ts.action_mask))
    assert mixed > 0 and not bool(ts.action_mask.any())


def test_agents_check_what_they_are_built_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """``make_batch_agent("greedy-v0", rules, device="gpu")`` (or "cuda" on a machine without it)
    was built, ``BatchGreedy("x")`` and ``BatchRandom("x")`` took a str for rules and failed at
    their first action, and ``greedy="False"`` (a true string) sampled: each is refused when made."""
    for spec in ("greedy-v0", "random-v0"):
        with pytest.raises(ValueError, match=r"device='gpu' is not allowed: use 'cpu', 'cuda' or 'cuda:K'"):
            make_batch_agent(spec, Rules(), device="gpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"device='cuda' is not available here: this machine has no CUDA device"):
        make_batch_agent("greedy-v0", Rules(), device="cuda")
    for make in (BatchGreedy, BatchRandom, lambda rules: make_batch_agent("greedy-v0", rules)):
        with pytest.raises(TypeError, match=r"rules='x' is not a Rules: build one with tt_env\.engine\.rules\.Rules"):
            make("x")
    for bad in ("False", 0, None):
        with pytest.raises(ValueError, match=rf"greedy={bad!r} is not allowed: use True or False"):
            BatchNetwork(lambda obs, mask: mask.float(), greedy=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=rf"greedy={bad!r} is not allowed: use True or False"):
            make_batch_agent("greedy-v0", Rules(), greedy=bad)  # type: ignore[arg-type]
    assert BatchNetwork(lambda obs, mask: mask.float(), greedy=np.bool_(False)).greedy is False
    assert BatchGreedy().rules == Rules() and BatchRandom(None).rules == Rules()
