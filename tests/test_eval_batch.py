"""Batched network decisions in the evaluator (issue 11): the numbers never depend on the batching."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import torch

from models import build_network
from models import batch_policy as bp
from models.agent_loader import CheckpointAgent, load_agent
from models.checkpoint import save_checkpoint
from models.features import PENALTY_SCALE, solver_features
from tt_env.agents import RandomAgent
from tt_env.engine import game
from tt_env.engine.melds import least_penalty
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION, encode, get_layout
from training import evaluate as ev
from tt_env.evaluation.duplicate import deal_blocks, play_deals, run_deals
from tt_env.evaluation.stats import summarize
from training.common.run_utils import evaluate_agent

SHORT = Rules(rounds=(1, 2, 3))
NETS = [("mlp", {"hidden_sizes": [32, 32]}),
        ("cardnet", {"channels": 8, "hidden": 16, "solver_features": False}),
        ("cardnet", {"channels": 8, "hidden": 16}),
        ("cardnet", {"channels": 8, "hidden": 16, "blocks": 1}),
        ("cardnet", {"channels": 8, "hidden": 16, "expert_features": True})]


def positions(rules: Rules, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the seat to move, from games of random legal play."""
    agent, rng = RandomAgent(rules), np.random.default_rng(seed)
    obs, masks = [], []
    state = game.new_game(rules, rng)
    while len(obs) < count:
        if state.game_over:
            state = game.new_game(rules, rng)
        o, m = encode(state, state.current_player), game.action_mask(state)
        obs.append(o.copy())
        masks.append(m.copy())
        game.apply(state, agent.act(o, m, rng))
    return np.stack(obs), np.stack(masks)


def saved(tmp_path, num_players: int = 2, network: str = "cardnet", name: str = "net", **kwargs):
    """A freshly initialised network saved as a checkpoint: near-ties everywhere, a sharp test."""
    torch.manual_seed(num_players)
    net = build_network(network, num_players=num_players, **kwargs)
    return save_checkpoint(tmp_path / f"{name}.pt", net, obs_version=OBS_VERSION,
                           rules=Rules(num_players=num_players).to_dict(), training_steps=1)


def stable(report: dict) -> dict:
    """A report without its wall-clock numbers."""
    out = {k: v for k, v in report.items() if k not in ("seconds", "games_per_second")}
    out["agents"] = [{k: v for k, v in a.items() if k != "ms_per_move"} for a in report["agents"]]
    return out


def plays(deals) -> list:
    """Everything a list of deals records but the think times."""
    return [(g.deal, g.rotation, g.seats, g.scores, g.win_shares, g.turns, g.moves, g.actions)
            for deal in deals for g in deal]


# ---------------------------------------------------------------- the network's rows
@pytest.mark.parametrize("name,kwargs", NETS)
@pytest.mark.parametrize("num_players", [2, 3])
def test_a_rows_logits_do_not_depend_on_the_batch(name, kwargs, num_players):
    torch.manual_seed(1)
    net = build_network(name, num_players=num_players, **kwargs).eval()
    obs, masks = positions(Rules(num_players=num_players), 160, seed=num_players)
    policy = bp.BatchPolicy(net)
    with torch.inference_mode():
        x = net.as_input(obs, masks)
        whole = policy.logits(x)
        alone = np.concatenate([policy.logits(x[i:i + 1]) for i in range(0, 160, 9)])
        assert np.array_equal(alone, whole[::9])
        rng = np.random.default_rng(0)
        for size in (2, 3, 5, 8, 9, 13, 64, 150):
            for _ in range(2):
                rows = rng.permutation(160)[:size]
                assert np.array_equal(policy.logits(x[torch.as_tensor(rows)]), whole[rows]), f"batch of {size} rows"


def _small_net():
    """A network with a 37-input, 8-output layer, whose rows CPU kernels round by their position."""
    torch.manual_seed(1)
    return build_network("cardnet", num_players=2, channels=8, hidden=16).eval()


def test_default_kernels_round_a_row_by_its_batch_and_position():
    """Why BatchPolicy exists: a row computed alone is not bitwise the row computed in a batch
    (measured with torch 2.13 on this project's CPUs; another CPU library may differ, and this
    test then says the module docstring is out of date)."""
    net = build_network("cardnet", num_players=2).eval()
    obs, masks = positions(Rules(), 64)
    with torch.inference_mode():
        x = net.as_input(obs, masks)
        alone = torch.cat([net.logits_and_value(x[i:i + 1])[0] for i in range(64)])
        assert not torch.equal(alone, net.logits_and_value(x)[0]), "rows alone = rows in a batch here"


@pytest.mark.parametrize("small", [True, False])
def test_agreeing_sizes_tells_the_truth_on_this_machine(small):
    """Whether a row's logits depend on its position in an 8-row pass differs between CPUs
    (the 37-input, 8-output layer of the small net did on the development machines, not on
    every one): whatever this machine's kernels do, ``agreeing_sizes`` reports it."""
    net = _small_net() if small else build_network("cardnet", num_players=2).eval()
    probes = torch.rand((bp.PROBE_ROWS, net.input_size), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode(), bp.fixed_kernels():
        policy = bp.trace_policy(net, probes[:8])
        in_order = bp.in_passes(policy, probes, (8,))
        order = torch.arange(bp.PROBE_ROWS).roll(1)  # every row one position further
        position_dependent = not torch.equal(bp.in_passes(policy, probes[order], (8,)), in_order[order])
        sizes = bp.agreeing_sizes(policy, probes)
        if position_dependent:
            assert sizes == ()
        else:
            assert sizes and sizes[-1] == 8
            for size in sizes:
                assert torch.equal(bp.in_passes(policy, probes, (size,)), in_order)


def test_where_pass_sizes_disagree_rows_are_computed_alone(monkeypatch):
    monkeypatch.setattr(bp, "agreeing_sizes", lambda policy, probes: ())
    net = build_network("cardnet", num_players=2).eval()
    obs, masks = positions(Rules(), 40)
    with torch.inference_mode():
        x = net.as_input(obs, masks)
    policy = bp.BatchPolicy(net)
    whole = policy.logits(x)
    assert policy.pass_rows == (1,)
    with torch.inference_mode(), bp.fixed_kernels():
        expected = torch.cat([net.logits_and_value(x[i:i + 1])[0] for i in range(40)]).double().numpy()
    assert np.array_equal(whole, expected)
    assert np.array_equal(policy.logits(x[5:9]), whole[5:9])


@pytest.mark.parametrize("small", [True, False])
def test_the_pass_sizes_do_not_depend_on_the_first_batch(small):
    """Workers start on different deals: their agents must still choose the same pass sizes."""
    net = _small_net() if small else build_network("cardnet", num_players=2).eval()
    obs, masks = positions(Rules(), 60, seed=9)
    with torch.inference_mode():
        x = net.as_input(obs, masks)
    chosen = set()
    for first in (x[:1], x[10:50], x[50:]):
        policy = bp.BatchPolicy(net)
        policy.logits(first)
        chosen.add(policy.pass_rows)
    assert len(chosen) == 1, chosen


def test_the_check_keeps_only_the_pass_sizes_that_agree():
    probes = torch.rand(bp.PROBE_ROWS, 10)
    assert bp.agreeing_sizes(lambda x: (x * 2.0 + x.sum(1, keepdim=True), x), probes) == bp.PASS_ROWS
    by_size = lambda x: (x + 1e-3 * x.shape[0], x)  # noqa: E731 - rounds by the size of the pass
    assert bp.agreeing_sizes(by_size, probes) == (8,)
    by_position = lambda x: (x + 1e-3 * torch.arange(x.shape[0])[:, None], x)  # noqa: E731
    assert bp.agreeing_sizes(by_position, probes) == ()
    by_others = lambda x: (x + 1e-3 * x.mean(0), x)  # noqa: E731 - depends on the other rows
    assert bp.agreeing_sizes(by_others, probes) == ()


def _order_sensitive(probes, when_sorted: bool):
    """A policy whose passes of 32 or more rows round differently when their rows are (or are not) in the
    probes' given order; 8-row passes are exact in any order."""
    def policy(x):
        out = x * 2.0
        if x.shape[0] >= 32:
            in_order = bool((x[1:, 0] >= x[:-1, 0]).all())
            if in_order == when_sorted:
                out = out + 1e-3
        return out, x

    return policy


@pytest.mark.parametrize("when_sorted", [False, True])
def test_larger_pass_sizes_are_checked_in_the_given_order_and_in_shuffled_ones(when_sorted):
    """A larger pass size that agrees with 8-row passes in one order but not in another is not used."""
    probes = torch.rand(bp.PROBE_ROWS, 10)
    probes = probes[probes[:, 0].argsort()]  # the given order: sorted; the shuffled ones: not
    assert bp.agreeing_sizes(_order_sensitive(probes, when_sorted), probes) == (8,)


def test_passes_cover_a_batch_with_the_sizes_in_use():
    shapes = []

    def policy(x):
        shapes.append(x.shape[0])
        return x * 1.0, x

    out = bp.in_passes(policy, torch.arange(2 * 173.0).reshape(173, 2), (128, 32, 8))
    assert shapes == [128, 32, 8, 8] and torch.equal(out, torch.arange(2 * 173.0).reshape(173, 2))


def test_kernel_settings_are_restored():
    mkldnn, threads = torch.backends.mkldnn.enabled, torch.get_num_threads()
    torch.backends.nnpack.set_flags(True)
    torch.set_num_threads(2)
    try:
        with bp.fixed_kernels():
            assert not torch.backends.mkldnn.enabled and not torch._C._get_nnpack_enabled()
            assert torch.get_num_threads() == 1
        assert torch.backends.mkldnn.enabled == mkldnn and torch._C._get_nnpack_enabled()
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


# ---------------------------------------------------------------- the agent
@pytest.mark.parametrize("greedy", [True, False])
def test_act_is_act_batch_of_one_row(tmp_path, greedy):
    agent = load_agent(saved(tmp_path), Rules(), greedy=greedy)
    obs, masks = positions(Rules(), 40, seed=5)
    batch = agent.act_batch(obs, masks, [np.random.default_rng(i) for i in range(40)])
    single = [agent.act(o, m, np.random.default_rng(i)) for i, (o, m) in enumerate(zip(obs, masks, strict=True))]
    assert batch == single
    assert all(masks[i][a] for i, a in enumerate(batch))
    if not greedy:  # each row samples from its own rng, whatever the rows around it
        again = agent.act_batch(obs[::-1], masks[::-1], [np.random.default_rng(i) for i in reversed(range(40))])
        assert again[::-1] == batch


def test_act_batch_matches_the_network_argmax(tmp_path):
    path = saved(tmp_path, network="mlp", hidden_sizes=[16])
    agent = load_agent(path, Rules())
    obs, masks = positions(Rules(), 30, seed=2)
    with torch.no_grad():
        probs = agent.net(obs, masks)[0].probs.numpy()
    chosen = agent.act_batch(obs, masks, [None] * 30)
    assert all(probs[i, a] >= probs[i].max() * (1 - 1e-5) for i, a in enumerate(chosen))


def test_act_batch_bad_input_names_the_problem(tmp_path):
    agent = load_agent(saved(tmp_path), Rules())
    obs, masks = positions(Rules(), 3)
    with pytest.raises(ValueError, match=r"act_batch takes one 54-entry mask and one rng per observation: got 3 "
                                         r"observations, masks of shape \(3, 54\) and 2 rngs"):
        agent.act_batch(obs, masks, [None, None])
    with pytest.raises(ValueError, match=r"got 3 observations, masks of shape \(2, 54\) and 3 rngs"):
        agent.act_batch(obs, masks[:2], [None] * 3)  # (an IndexError deep inside, before)
    with pytest.raises(ValueError, match=r"observations of length 294 .* got an array of shape \(3, 293\)"):
        agent.act_batch(obs[:, :-1], masks, [None] * 3)
    assert agent.act_batch(obs[:0], masks[:0], []) == []
    bad = masks.copy()
    bad[1] = 0
    with pytest.raises(ValueError, match="row 1: no legal action in the mask"):
        agent.act_batch(obs, bad, [None] * 3)


# ---------------------------------------------------------------- the solver features, batched
def _features_row_by_row(obs, num_players, aces_high=False, natural=False):
    """The solver features computed one row at a time, the plain way (the reference)."""
    lay = get_layout(num_players)
    planes = np.zeros((len(obs), 3, 52), dtype=np.float32)
    scalars = np.zeros((len(obs), 3), dtype=np.float32)
    for i, o in enumerate(obs):
        hand = np.repeat(np.arange(52), np.rint(o[lay.hand:lay.hand + 52]).astype(np.int64)).tolist()
        wild = int(o[lay.wild_rank:lay.wild_rank + 13].argmax()) + 1
        now = least_penalty(hand, wild, aces_high, natural)
        top_block = o[lay.discard_top:lay.discard_top + 52]
        top = int(top_block.argmax()) if o[lay.phase] > 0.5 and top_block.any() else -1
        view = hand + ([top] if top >= 0 else [])
        left = {}
        for c in sorted(set(view) - {top}):
            rest = list(view)
            rest.remove(c)
            left[c] = least_penalty(rest, wild, aces_high, natural)
        best = min(left.values(), default=now)
        for c, p in left.items():
            planes[i, 0, c] = 1.0
            planes[i, 1, c] = p / PENALTY_SCALE
            planes[i, 2, c] = planes[i, 1, c] - best / PENALTY_SCALE
        scalars[i] = (now / PENALTY_SCALE, best / PENALTY_SCALE, (now - best) / PENALTY_SCALE)
    return planes, scalars


@pytest.mark.parametrize("rules", [Rules(), Rules(num_players=3, meld_needs_natural=True),
                                   Rules(num_players=2, aces="high_or_low"), Rules(num_players=5)],
                         ids=["2p", "3p-natural", "2p-aces-high", "5p-two-decks"])
def test_batched_solver_features_are_the_row_by_row_ones(rules):
    obs, _ = positions(rules, 400, seed=3)
    n, ah, nat = rules.num_players, rules.aces_high, rules.meld_needs_natural
    planes, scalars = solver_features(obs, n, ah, nat)
    ref_planes, ref_scalars = _features_row_by_row(obs, n, ah, nat)
    assert planes.dtype == np.float32 and scalars.dtype == np.float32
    assert np.array_equal(planes, ref_planes) and np.array_equal(scalars, ref_scalars)
    one = solver_features(obs[7:8], n, ah, nat)
    assert np.array_equal(one[0], planes[7:8]) and np.array_equal(one[1], scalars[7:8])


# ---------------------------------------------------------------- the runner
@pytest.mark.parametrize("num_players", [2, 3])
def test_records_do_not_depend_on_batch_size_or_workers(tmp_path, num_players):
    rules = Rules(num_players=num_players, rounds=(1, 2, 3))
    specs = [str(saved(tmp_path, num_players))] + ["greedy-v0", "random-v0"][:num_players - 1]
    one_at_a_time = run_deals(specs, rules, 6, seed=2, batch_size=1)
    for batch_size, workers in ((3, 1), (5, 1), (128, 1), (4, 2)):
        assert plays(run_deals(specs, rules, 6, seed=2, batch_size=batch_size, workers=workers)) == \
            plays(one_at_a_time), f"batch_size={batch_size}, workers={workers}"


@pytest.mark.parametrize("num_players", [2, 3])
def test_sampling_agents_give_the_same_games_whatever_the_batching(tmp_path, num_players):
    rules = Rules(num_players=num_players, rounds=(1, 2))
    sampler = load_agent(saved(tmp_path, num_players), rules, greedy=False)
    agents = [sampler] + [RandomAgent(rules) for _ in range(num_players - 1)]
    expected = plays(list(play_deals(agents, rules, 5, range(4), batch_size=1)))
    for batch_size in (2, 7, 64):
        assert plays(list(play_deals(agents, rules, 5, range(4), batch_size=batch_size))) == expected


def test_one_agent_object_in_two_seats_batches_both(tmp_path):
    agent = load_agent(saved(tmp_path), SHORT)
    sizes = []
    real = agent.act_batch
    agent.act_batch = lambda o, m, r: sizes.append(len(o)) or real(o, m, r)
    batched = run_deals([agent, agent], SHORT, 4, seed=1, batch_size=8)
    assert max(sizes) == 8  # 8 games, every one waiting on the same object
    assert plays(batched) == plays(run_deals([agent, agent], SHORT, 4, seed=1, batch_size=1))


@pytest.mark.parametrize("num_deals,workers,batch_size", [(400, 2, 256), (400, 2, 1), (7, 3, 256), (2000, 2, 256),
                                                        (1, 4, 5)])
def test_worker_blocks_cover_every_deal_once_in_order(num_deals, workers, batch_size):
    blocks = deal_blocks(num_deals, workers, batch_size, games_per_deal=2)
    assert [d for b in blocks for d in b] == list(range(num_deals))
    assert len(blocks) >= min(num_deals, 4 * workers) or batch_size == 1
    assert batch_size == 1 or len(blocks) <= 4 * workers + 1  # about four a worker, not one deal each
    assert max(len(b) for b in blocks) <= (8 if batch_size == 1 else 2 * batch_size)


class _CountingBatcher:
    """Plays the first legal action; each ``act_batch`` call takes ``pause`` seconds."""

    name = "counting-batcher"

    def __init__(self, pause: float = 0.0) -> None:
        self.pause, self.calls = pause, []

    def act(self, observation, action_mask, rng):
        raise AssertionError("a batch-capable agent was asked through act")

    def act_batch(self, observations, masks, rngs):
        self.calls.append(len(observations))
        time.sleep(self.pause)
        return [int(np.flatnonzero(m)[0]) for m in masks]


def test_think_time_of_a_batch_is_shared_among_its_decisions():
    agent = _CountingBatcher(pause=0.002)
    deals = run_deals([agent, "random-v0"], Rules(rounds=(1,)), 3, seed=0, batch_size=6)
    moves = sum(g.moves[0] for d in deals for g in d)
    assert 1 < max(agent.calls) <= 6 and sum(agent.calls) == moves
    assert moves > len(agent.calls)  # several decisions per call: ms_per_move below a call's time
    think = sum(g.think_seconds[0] for d in deals for g in d)
    assert 0.002 * len(agent.calls) <= think < 0.002 * len(agent.calls) + 0.5  # each call's time, counted once
    report = summarize(deals, ["counting-batcher", "random-v0"])
    assert report["agents"][0]["ms_per_move"] == pytest.approx(1000 * think / moves)


def test_an_agent_returning_too_few_actions_is_named():
    class Short(_CountingBatcher):
        def act_batch(self, observations, masks, rngs):
            return super().act_batch(observations, masks, rngs)[:-1]

    with pytest.raises(RuntimeError, match=r"'counting-batcher' returned 0 actions from act_batch for 1 observations: "
                                           r"give one per observation"):
        run_deals([Short(), "random-v0"], SHORT, 1, seed=0, batch_size=2)


def test_illegal_batched_actions_are_refused():
    class Illegal(_CountingBatcher):
        def act_batch(self, observations, masks, rngs):
            return [int(np.flatnonzero(m == 0)[0]) for m in masks]

    with pytest.raises(RuntimeError, match="agent 'counting-batcher' chose illegal action"):
        run_deals([Illegal(), "random-v0"], SHORT, 1, seed=0, batch_size=2)


def test_batch_size_must_be_positive():
    with pytest.raises(ValueError, match="batch_size=0 is not allowed: use 1 or more games side by side"):
        run_deals(["greedy-v0", "random-v0"], SHORT, 1, seed=0, batch_size=0)
    with pytest.raises(ValueError, match="--batch-size 0 is not allowed"):
        ev.evaluate(["greedy-v0", "random-v0"], 1, 0, SHORT, batch_size=0)


def test_training_evaluation_batches_and_gives_the_same_results(tmp_path):
    agent = load_agent(saved(tmp_path), SHORT)
    sizes = []
    real = agent.act_batch
    agent.act_batch = lambda o, m, r: sizes.append(len(o)) or real(o, m, r)
    batched = evaluate_agent(agent, ["greedy-v0"], SHORT, deals=5, seed=3)
    assert max(sizes) > 1
    assert [r.to_dict() for r in batched] == \
        [r.to_dict() for r in evaluate_agent(agent, ["greedy-v0"], SHORT, deals=5, seed=3, batch_size=1)]


# ---------------------------------------------------------------- the command line
def test_cli_numbers_are_the_same_with_and_without_batching(tmp_path, capsys):
    path = str(saved(tmp_path))
    reports = []
    for extra in (["--batch-size", "1"], [], ["--batch-size", "3", "--workers", "2"]):
        out = tmp_path / f"report{len(reports)}.json"
        ev.main([path, "greedy-v0", "--games", "4", "--rounds", "1,2", "--quiet", "--json", str(out)] + extra)
        reports.append(stable(json.loads(out.read_text())))
    assert reports[0] == reports[1] == reports[2]


def test_cli_refuses_a_zero_batch_size(capsys):
    with pytest.raises(SystemExit) as exit_info:
        ev.main(["greedy-v0", "random-v0", "--batch-size", "0", "--quiet"])
    assert exit_info.value.code == 2
    assert "argument --batch-size: 0 is not allowed: use an integer >= 1" in capsys.readouterr().err


def test_checkpoint_agent_is_batch_capable():
    assert callable(getattr(CheckpointAgent, "act_batch", None))


def test_run_deals_passes_allow_rule_mismatch_to_the_checkpoints(tmp_path):
    """A checkpoint of other scoring is refused, and plays with ``allow_rule_mismatch``."""
    high = Rules(rounds=(1,), aces="high_or_low")
    path = str(saved(tmp_path))
    with pytest.raises(ValueError, match="rule mismatch"):
        run_deals([path, "greedy-v0"], high, 1, seed=0)
    assert len(run_deals([path, "greedy-v0"], high, 1, seed=0, allow_rule_mismatch=True)[0]) == 2
