"""The learned agents' pipeline: oracle targets, the fit to them, the leaderboard."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from training import imitate, leaderboard, oracle_data
from tt_env.agents.expert import ExpertAgent
from tt_env.agents.ismcts import expert_scores
from tt_env.engine import Rules, game
from tt_env.observation import encode

SHORT = Rules(rounds=(3, 9))


def test_candidate_values_use_common_rollouts_and_see_the_round_out():
    """Two identical candidates get identical values (same reshuffles); a move that goes out is worth more."""
    rules = Rules(rounds=(4,))
    experts = [ExpertAgent(rules), ExpertAgent(rules)]
    state = game.new_game(rules, np.random.default_rng(3))
    game.apply(state, game.DRAW_STOCK)
    action = game.legal_actions(state)[0]
    values = oracle_data.candidate_values(state, [action, action], experts, 3, np.random.default_rng(0))
    assert values[0] == values[1]
    assert state.phase == game.PHASE_DISCARD  # the true state is untouched


def test_oracle_data_is_reproducible_and_independent_of_workers(tmp_path):
    rows = oracle_data.collect(SHORT, 2, seed=5, candidates=3, rollouts=1, keep=0.3)
    again = oracle_data.collect(SHORT, 2, seed=5, candidates=3, rollouts=1, keep=0.3, workers=2)
    a, b = oracle_data.to_arrays(rows, 3), oracle_data.to_arrays(again, 3)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert len(rows) > 5
    expert = ExpertAgent(SHORT)
    for obs, mask, cands, q, _, _ in rows:
        assert [c for c, _ in expert_scores(expert, obs, mask)[:3]] == cands and len(q) == len(cands) >= 2


def test_oracle_data_cli_writes_arrays_without_pickles(tmp_path):
    out = tmp_path / "o.npz"
    oracle_data.main(["--games", "1", "--rollouts", "1", "--keep", "0.2", "--out", str(out)])
    data = imitate.load_oracle(out)
    assert data["meta"]["format"] == "three-thirteen-oracle/1"
    assert data["obs"].shape[1] == 294 and data["mask"].shape[1] == 54 and data["cands"].shape[1] == 3
    with pytest.raises(SystemExit):
        oracle_data.main(["--games", "1", "--keep", "0", "--out", str(out)])


def _synthetic(n: int = 300, seed: int = 0) -> dict:
    """Positions of expert self-play whose targets favour expert-v0's *second* candidate by 20 points."""
    rules = Rules(rounds=(7,))
    expert = ExpertAgent(rules)
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < n:
        state = game.new_game(rules, rng)
        while not state.game_over and len(rows) < n:
            obs, mask = encode(state, state.current_player), game.action_mask(state)
            prior = expert_scores(expert, obs, mask)
            if len(prior) > 1:
                cands = [a for a, _ in prior[:2]]
                rows.append((obs, mask.copy(), cands, np.array([0.0, 20.0]), 7, state.phase))
            game.apply(state, prior[0][0])
    arrays = oracle_data.to_arrays(rows, 2)
    arrays["meta"] = {"rules": rules.to_dict()}
    return arrays


def test_fit_learns_what_the_targets_say_and_reports_the_held_out_gain():
    data = _synthetic()
    net, report = imitate.fit(data, net_kwargs={"channels": 8, "hidden": 16, "expert_features": True,
                                                "solver_features": True},
                              epochs=8, batch=64, lr=5e-3, temperature=2.0, validation=0.2, seed=0, log=lambda *_: None)
    assert report["history"][0]["val_deviation"] < 0.1  # untrained: expert-v0's own choices, but for near-ties
    assert report["history"][report["best_epoch"]]["val_gain"] > 8.0  # it learned to prefer the second
    x = torch.as_tensor(net.preprocess(data["obs"][:5], data["mask"][:5]))
    logits = imitate.candidate_logits(net, x, torch.as_tensor(data["cands"][:5].astype(np.int64)))
    assert (logits[:, 1] > logits[:, 0]).float().mean() > 0.5


def test_leaderboard_table_and_player_counts(tmp_path, capsys):
    assert leaderboard.players_of("greedy-v0") is None
    assert leaderboard.players_of("ppo-2p-v0") == 2
    with pytest.raises(ValueError, match="unknown agent"):
        leaderboard.players_of("nobody-v9")
    out = tmp_path / "lb.json"
    rows = leaderboard.main(["--agents", "greedy-v0", "ppo-2p-v0", "--players", "2", "3", "--deals", "2",
                             "--json", str(out)])
    assert [(r["agent"], r["players"]) for r in rows] == [("greedy-v0", 2), ("ppo-2p-v0", 2), ("greedy-v0", 3)]
    table = capsys.readouterr().out
    assert "| expert-v0 (reference) | 0 | 0.500 | 0 | 0.333 |" in table and "| ppo-2p-v0 |" in table
    saved = json.loads(out.read_text())
    assert saved["format"] == "three-thirteen-leaderboard/1" and len(saved["rows"]) == 3


def test_leaderboard_default_agents_exist():
    """The default list names only agents that load: the scripted ones and the shipped checkpoints."""
    from models.agent_loader import SHIPPED

    agents = leaderboard.default_agents()
    assert {"random-v0", "greedy-v0", "ismcts-v0"} <= set(agents) and set(SHIPPED) <= set(agents)
    for a in agents:
        leaderboard.players_of(a)  # raises for an agent that does not exist


def test_anchor_keeps_the_expert_where_the_values_do_not_outweigh_it():
    """A target that puts 0.9 on expert-v0's choice outweighs a 20-point preference at temperature 2
    (0.9 + 0.1 * 0 against 0.1 * 1): the anchored fit keeps the expert, the free fit leaves it."""
    data = _synthetic()
    common = dict(net_kwargs={"channels": 8, "hidden": 16, "expert_features": True, "solver_features": True},
                  epochs=4, batch=64, lr=5e-3, temperature=2.0, validation=0.2, seed=0, log=lambda *_: None)
    _, anchored = imitate.fit(data, anchor=0.9, **common)
    assert all(h["val_deviation"] < 0.1 for h in anchored["history"])
    _, free = imitate.fit(data, **common)
    assert max(h["val_deviation"] for h in free["history"]) > 0.3
    with pytest.raises(ValueError, match="anchor"):
        imitate.fit(data, anchor=1.0, **common)


def test_an_existing_oracle_file_is_kept_without_overwrite(tmp_path, capsys, monkeypatch):
    """--out that exists: refused by name before any game; with --overwrite, replaced."""
    out = tmp_path / "o.npz"
    out.write_bytes(b"kept")
    argv = ["--games", "1", "--candidates", "2", "--rollouts", "1", "--keep", "0.2", "--quiet", "--out", str(out)]
    with monkeypatch.context() as patched:
        patched.setattr(oracle_data, "collect", lambda *a, **k: pytest.fail("a game was played before the check"))
        with pytest.raises(SystemExit) as info:
            oracle_data.main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert err.strip() == (f"python -m training.oracle_data: error: --out {out}: the file exists: "
                           f"give --overwrite to replace it, or another name")
    assert out.read_bytes() == b"kept"
    oracle_data.main([*argv, "--overwrite"])
    assert imitate.load_oracle(out)["meta"]["games"] == 1
