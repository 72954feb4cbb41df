"""The one-draw lookahead features (models/lookahead_features.py) and the from-scratch CardNet options (issue 17)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from models import build_network
from models import batch_policy as bp
from models.features import PENALTY_SCALE
from models.lookahead_features import lookahead_features, unseen_weights
from models.networks import RowwiseLinear
from tt_env.engine.game import DISCARD_BASE, TAKE_DISCARD
from tt_env.engine.melds import after_draw_values, discard_penalties, least_penalty
from tt_env.engine.rules import Rules
from tt_env.observation import get_layout

from test_eval_batch import positions


def _view(obs: np.ndarray, lay) -> tuple[list[int], int, int | None]:
    """(hand, wild rank, top discard in view or None) of one observation."""
    hand = np.repeat(np.arange(52), np.rint(obs[lay.hand:lay.hand + 52]).astype(np.int64)).tolist()
    wild = int(obs[lay.wild_rank:lay.wild_rank + 13].argmax()) + 1
    top_block = obs[lay.discard_top:lay.discard_top + 52]
    top = int(top_block.argmax()) if obs[lay.phase] > 0.5 and top_block.any() else None
    return hand, wild, top


def _unseen(obs: np.ndarray, lay, num_players: int, decks: int) -> np.ndarray:
    """The unseen copies of each card, counted the plain way."""
    seen = np.zeros(52)
    for piece in ("hand", "discard_top", "discard_below"):
        seen += obs[getattr(lay, piece):getattr(lay, piece) + 52]
    for k in range(num_players - 1):
        seen += obs[lay.opponent_taken + 52 * k:lay.opponent_taken + 52 * (k + 1)]
    return np.maximum(decks - np.rint(seen), 0)


def _expected(hand: list[int], wild: int, weights: np.ndarray) -> tuple[float, float]:
    """(expected least penalty after one more draw, chance the draw lets it go out), from the definition."""
    penalty = least_penalty(hand, wild)
    if penalty == 0:
        return 0.0, 1.0
    expected, out = float(penalty), 0.0
    for u in np.flatnonzero(weights > 0):
        a = after_draw_values(hand, [int(u)], wild)[0]
        if a < penalty:
            expected -= weights[u] * (penalty - a)
            out += weights[u] * (a == 0)
    return expected, out


def _exact(hand: list[int], wild: int, weights: np.ndarray) -> float:
    """The exact expected least penalty after one draw and the best discard (the solver on every draw)."""
    penalty = least_penalty(hand, wild)
    if penalty == 0:
        return 0.0
    return float(sum(weights[u] * min(penalty, min(p for _, p in discard_penalties(hand + [int(u)], wild)))
                     for u in np.flatnonzero(weights > 0)))


@pytest.mark.parametrize("rules", [Rules(), Rules(num_players=5)], ids=["2p", "5p-two-decks"])
def test_unseen_weights_count_the_copies_not_in_view(rules):
    n = rules.num_players
    obs, _ = positions(rules, 60, seed=4)
    lay = get_layout(n)
    weights = unseen_weights(obs, n, rules.num_decks)
    for o, w in zip(obs, weights, strict=True):
        unseen = _unseen(o, lay, n, rules.num_decks)
        assert w.sum() == pytest.approx(1.0)
        assert np.allclose(w, unseen / unseen.sum())
        hand, _, _ = _view(o, lay)
        if rules.num_decks == 1:
            assert not w[hand].any()  # a held card has no other copy


def test_every_copy_in_view_gives_zero_weights():
    obs = np.zeros((1, get_layout(2).size), dtype=np.float32)
    obs[0, get_layout(2).discard_below:get_layout(2).discard_below + 52] = 1.0
    assert not unseen_weights(obs, 2, 1).any()


def test_features_follow_their_definition():
    rules = Rules()
    obs, masks = positions(rules, 240, seed=6)
    lay = get_layout(2)
    planes, scalars = lookahead_features(obs, masks, 2, rules.num_decks)
    weights = unseen_weights(obs, 2, rules.num_decks)
    draw_rows = discard_rows = 0
    for i, (o, m) in enumerate(zip(obs, masks, strict=True)):
        hand, wild, top = _view(o, lay)
        if top is not None:
            view, legal = sorted(hand + [top]), sorted(set(hand) - {top})
        else:
            view, legal = hand, [c for c in sorted(set(hand)) if m[DISCARD_BASE + c]]
        expected = {}
        for c in legal:
            rest = list(view)
            rest.remove(c)
            expected[c], out = _expected(rest, wild, weights[i])
            assert planes[i, 0, c] == pytest.approx(expected[c] / PENALTY_SCALE, abs=1e-6)
            assert planes[i, 2, c] == pytest.approx(out, abs=1e-6)
            assert _exact(rest, wild, weights[i]) <= expected[c] + 1e-5  # after_draw_values is an upper bound
        best = min(expected.values())
        for c in legal:
            assert planes[i, 1, c] == pytest.approx((expected[c] - best) / PENALTY_SCALE, abs=1e-6)
        others = np.setdiff1d(np.arange(52), legal)
        assert not planes[i, :, others].any(), "only the legal discards have features"
        if top is not None:
            draw_rows += 1
            stock, out = _expected(hand, wild, weights[i])
            take = min(p for c, p in discard_penalties(view, wild) if c != top)
            assert scalars[i] == pytest.approx([stock / PENALTY_SCALE, (take - stock) / PENALTY_SCALE, out], abs=1e-6)
        else:
            discard_rows += 1
            assert not scalars[i].any()
    assert draw_rows > 50 and discard_rows > 50


def test_the_card_just_taken_gets_no_features():
    """After taking the discard, the mask bans throwing it back; the observation alone cannot tell."""
    rules = Rules()
    obs, masks = positions(rules, 400, seed=2)
    banned = [i for i, m in enumerate(masks) if m[DISCARD_BASE:].any()
              and (np.rint(obs[i, :52]) > 0).sum() > m[DISCARD_BASE:].sum()]
    assert banned, "no discard decision after taking the discard in the sample"
    planes, _ = lookahead_features(obs[banned], masks[banned], 2, 1)
    for row, i in enumerate(banned):
        held = np.flatnonzero(np.rint(obs[i, :52]) > 0)
        illegal = [c for c in held if not masks[i, DISCARD_BASE + c]]
        assert illegal and not planes[row, :, illegal].any()
    every_card = masks[banned].copy()
    every_card[:, DISCARD_BASE:] = np.rint(obs[banned, :52]) > 0
    without_masks, _ = lookahead_features(obs[banned], None, 2, 1)
    assert np.array_equal(without_masks, lookahead_features(obs[banned], every_card, 2, 1)[0])
    assert not np.array_equal(without_masks, planes)


def test_the_last_turn_choice_is_the_exact_one_up_to_the_bound():
    """On a draw decision the take-minus-stock scalar has the sign of the exact last-turn choice
    wherever the stock value is exact (tt_env/agents/last_turn.py computes that choice)."""
    from tt_env.agents.last_turn import expected_penalties

    rules = Rules()
    obs, masks = positions(rules, 300, seed=8)
    lay = get_layout(2)
    draws = [i for i, m in enumerate(masks) if m[0] and m[TAKE_DISCARD]]
    _, scalars = lookahead_features(obs[draws], masks[draws], 2, 1)
    weights = unseen_weights(obs[draws], 2, 1)
    exact_rows = 0
    for row, i in enumerate(draws):
        hand, wild, top = _view(obs[i], lay)
        stock, take = expected_penalties(hand, top, weights[row].tolist(), wild)
        if abs(scalars[row, 0] * PENALTY_SCALE - stock) < 1e-4:
            exact_rows += 1
            assert scalars[row, 1] * PENALTY_SCALE == pytest.approx(take - stock, abs=1e-4)
    assert exact_rows > len(draws) // 2


def test_lookahead_features_use_no_scripted_agent():
    """Their inputs are the observation and the engine's solver: the module imports nothing else."""
    import ast
    from pathlib import Path

    import models.lookahead_features as module

    imported = set()
    for node in ast.walk(ast.parse(Path(module.__file__).read_text())):
        if isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert imported == {"__future__", "bisect", "numpy", "tt_env.engine.melds", "tt_env.observation", ".features"}
    features_source = (Path(module.__file__).parent / "features.py").read_text()
    assert "tt_env.agents" not in features_source


# ---------------------------------------------------------------- CardNet options
def test_scratch_cardnet_starts_with_no_greedy_shortcut():
    greedy_start = build_network("cardnet", num_players=2, channels=8, hidden=16)
    scratch = build_network("cardnet", num_players=2, channels=8, hidden=16, lookahead_features=True,
                            solver_shortcuts=False)
    assert torch.equal(greedy_start.prior.detach(), torch.ones(2))
    assert torch.equal(scratch.prior.detach(), torch.zeros(2))
    assert scratch.input_size == greedy_start.input_size + 3 * 52 + 3
    assert scratch.config()["lookahead_features"] and not scratch.config()["solver_shortcuts"]
    rebuilt = build_network("cardnet", **scratch.config())
    assert rebuilt.input_size == scratch.input_size


def test_a_fresh_scratch_net_is_nearly_uniform():
    """No shortcut: the start's probabilities barely depend on the penalties (greedy's start does)."""
    torch.manual_seed(0)
    obs, masks = positions(Rules(), 200, seed=1)
    for shortcuts, uniform in ((False, True), (True, False)):
        net = build_network("cardnet", num_players=2, lookahead_features=True, solver_shortcuts=shortcuts)
        with torch.no_grad():
            probs = net(obs, masks)[0].probs.numpy()
        legal = masks > 0
        spread = np.nanmax(np.where(legal, probs, np.nan) * legal.sum(1, keepdims=True), axis=1)
        assert (np.median(spread) < 1.2) == uniform, spread


def test_the_lookahead_paths_start_at_zero_and_read_the_lookahead():
    """Started at 0; grown large, they make the network play the best one-draw lookahead."""
    obs, masks = positions(Rules(), 200, seed=3)
    net = build_network("cardnet", num_players=2, lookahead_features=True, solver_shortcuts=False)
    assert torch.equal(net.lookahead_prior.detach(), torch.zeros(2))
    with torch.no_grad():
        net.lookahead_prior.fill_(5.0)
        probs = net(obs, masks)[0].probs.numpy()
    planes, scalars = lookahead_features(obs, masks, 2, 1)
    near = 0.5 / PENALTY_SCALE  # half a point: 2.5 logits at weight 5, beyond the random layers' noise
    for i, m in enumerate(masks):
        if m[0] and m[TAKE_DISCARD] and abs(scalars[i, 1]) > near:
            assert (probs[i, TAKE_DISCARD] > probs[i, 0]) == (scalars[i, 1] < 0)
        elif not m[0]:
            chosen = int(np.argmax(probs[i, DISCARD_BASE:]))
            assert m[DISCARD_BASE + chosen] and planes[i, 1, chosen] <= near


def test_lookahead_features_need_solver_features():
    with pytest.raises(ValueError, match="lookahead_features=True needs solver_features=True"):
        build_network("cardnet", num_players=2, solver_features=False, lookahead_features=True)


def test_scratch_cardnet_preprocess_carries_the_lookahead_planes():
    obs, masks = positions(Rules(), 30, seed=3)
    net = build_network("cardnet", num_players=2, lookahead_features=True)
    x = net.preprocess(obs, masks)
    planes, scalars = lookahead_features(obs, masks, 2, 1)
    n = net.obs_size
    assert np.array_equal(x[:, n + 3 * 52:n + 6 * 52], planes.reshape(30, -1))
    assert np.array_equal(x[:, -3:], scalars)


# ---------------------------------------------------------------- the draw head's rows
def test_rowwise_linear_rows_do_not_depend_on_the_batch():
    """The 64-input, 2-output layer whose matrix product rounded rows by their position on this
    project's Sapphire Rapids CPU: as a product and a sum, each row is the same in any pass."""
    torch.manual_seed(0)
    layer = RowwiseLinear(64, 2)
    plain = torch.nn.Linear(64, 2)
    plain.load_state_dict(layer.state_dict())
    x = torch.rand(128, 64, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        alone = torch.cat([layer(x[i:i + 1]) for i in range(128)])
        for size in (8, 32, 128):
            order = torch.randperm(128, generator=torch.Generator().manual_seed(size))
            shuffled = torch.cat([layer(x[order][i:i + size]) for i in range(0, 128, size)])
            assert torch.equal(shuffled, alone[order])
        assert torch.allclose(alone, plain(x), atol=1e-6)
    assert set(layer.state_dict()) == {"weight", "bias"}


def test_cardnet_passes_are_batched_wherever_its_layers_allow():
    """With the row-wise draw head, the default CardNet gets passes of 8 rows or more where every
    other layer's rows are independent of their position (on this project's machines: all of them)."""
    net = build_network("cardnet", num_players=2).eval()
    probes = torch.rand((bp.PROBE_ROWS, net.input_size), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode(), bp.fixed_kernels():
        policy = bp.trace_policy(net, probes[:8])
        dependent = []
        for name, layer in [("glob", net.glob), ("draw_head.0", net.draw_head[0]), ("value_head.0", net.value_head[0])]:
            x = torch.rand((128, layer.in_features), generator=torch.Generator().manual_seed(2))
            order = torch.arange(128).roll(1)
            if not torch.equal(bp.in_passes(lambda t: (layer(t), t), x[order], (8,)),
                               bp.in_passes(lambda t: (layer(t), t), x, (8,))[order]):
                dependent.append(name)
        sizes = bp.agreeing_sizes(policy, probes)
    if not dependent:
        assert sizes and sizes[-1] == 8, "the network's passes fell back to one row"


def test_cardnet_counts_the_decks_it_is_given():
    """``decks`` sets the copies the lookahead counts as unseen (the rules' deck count, not the automatic one)."""
    obs, masks = positions(Rules(num_players=2, decks=2), 40, seed=5)
    auto = build_network("cardnet", num_players=2, lookahead_features=True)
    two = build_network("cardnet", num_players=2, lookahead_features=True, decks=2)
    assert (auto.num_decks, two.num_decks) == (1, 2)
    assert two.config()["decks"] == 2 and auto.config()["decks"] is None
    assert build_network("cardnet", **two.config()).num_decks == 2
    lay = get_layout(2)
    weights = unseen_weights(obs, 2, two.num_decks)
    for i, o in enumerate(obs):
        counts = _unseen(o, lay, 2, 2)
        assert counts.max() == 2 and np.allclose(weights[i], counts / counts.sum())
    want_planes, want_scalars = lookahead_features(obs, masks, 2, 2)
    got = two.preprocess(obs, masks)
    tail = got[:, -want_scalars.shape[1]:]
    assert np.array_equal(tail, want_scalars)
    assert not np.array_equal(got, auto.preprocess(obs, masks))


@pytest.mark.parametrize("bad", [0, 65, True, "2", 2.0])
def test_cardnet_refuses_a_bad_deck_count(bad):
    with pytest.raises(ValueError, match=r"decks=.* is not allowed: use None .* or an int from 1 to 64"):
        build_network("cardnet", num_players=2, decks=bad)


def test_rule_kwargs_follow_the_rules():
    from models.networks import CardNet

    assert CardNet.rule_kwargs(Rules()) == {"aces_high": False, "meld_needs_natural": False, "decks": None}
    assert CardNet.rule_kwargs(Rules(aces="high_or_low", meld_needs_natural=True, decks=2)) == {
        "aces_high": True, "meld_needs_natural": True, "decks": 2}
    # a round subset whose automatic count is below the full game's is named, not left to "auto"
    assert CardNet.rule_kwargs(Rules(num_players=6, rounds=(1, 2)))["decks"] == 1
