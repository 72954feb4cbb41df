"""The evaluator's table tells checkpoints apart at 80 columns; ``--workers`` is capped at the work (issue 19)."""

from __future__ import annotations

import io

import pytest

from tt_env.evaluation import duplicate
from training import evaluate
from training.evaluate import print_report, short_labels

README_PAIR = ["runs/ppo_2p_v1/checkpoints/step_40960.pt", "runs/ppo_2p_v1/checkpoints/final.pt"]


def test_labels_are_the_shortest_path_suffixes_that_differ():
    assert short_labels(README_PAIR) == {README_PAIR[0]: "step_40960.pt", README_PAIR[1]: "final.pt"}
    assert short_labels(["runs/a/final.pt", "runs/b/final.pt", "expert-v0"]) == {
        "runs/a/final.pt": "a/final.pt", "runs/b/final.pt": "b/final.pt", "expert-v0": "expert-v0"}
    assert short_labels(["final.pt", "x/final.pt"]) == {"final.pt": "final.pt", "x/final.pt": "x/final.pt"}
    assert short_labels(["runs/x/final.pt", "runs/x/final.pt#2"]) == {"runs/x/final.pt": "final.pt",
                                                                      "runs/x/final.pt#2": "final.pt#2"}


def test_long_labels_are_cut_but_stay_distinct():
    long = ["runs/very_long_run_name_alpha/final.pt", "runs/very_long_run_name_beta/final.pt"]
    labels = short_labels(long)
    assert labels == {long[0]: "…_alpha/final.pt", long[1]: "…e_beta/final.pt"}
    same_tail = ["runs/aaaaaaaaaaaaaaaaaa_1/final.pt", "runs/bbbbbbbbbbbbbbbbaaaaaaaaaaaaaaaaaa_1/final.pt"]
    labels = short_labels(same_tail)
    assert len(set(labels.values())) == 2 and labels[same_tail[1]] == "agent 2"
    assert all(len(v) <= evaluate.MAX_LABEL for v in labels.values())


def _report(names):
    return {"games": 10, "seatings": len(names), "games_played": 10 * len(names), "seed": 0, "games_per_second": 3.2,
            "agents": [{"name": n, "mean_score": 40.0 + i, "win_rate": 0.5, "win_rate_ci95": [0.4, 0.6],
                        "ms_per_move": 0.3} for i, n in enumerate(names)],
            "pairwise": [{"a": a, "b": b, "mean_score_diff": -2.0 if a < b else 2.0, "ci95": [-3.1, -1.0]}
                         for a in names for b in names if a != b]}


def _printed(monkeypatch, names, width=80) -> list[str]:
    import rich.console

    out = io.StringIO()
    real = rich.console.Console
    monkeypatch.setattr(rich.console, "Console", lambda **kw: real(file=out, width=width, **kw))
    print_report(_report(names))
    return out.getvalue().splitlines()


@pytest.mark.parametrize("names", [README_PAIR, README_PAIR + ["expert-v0", "greedy-v0"]])
def test_the_table_tells_two_checkpoints_apart_at_80_columns(monkeypatch, names):
    lines = _printed(monkeypatch, names)
    assert all(len(line) <= 80 for line in lines)
    rows = [line for line in lines if line.startswith("│") and not line.startswith("│  ")]
    first_cells = [row.split("│")[1].strip() for row in rows if row.split("│")[1].strip()]
    assert first_cells[:2] == ["step_40960.pt", "final.pt"], "the agent column must show each label whole"
    assert "  step_40960.pt: runs/ppo_2p_v1/checkpoints/step_40960.pt" in lines
    assert "  final.pt: runs/ppo_2p_v1/checkpoints/final.pt" in lines
    assert not any("…" in line for line in lines if "┃" in line), "a header was cut to an ellipsis"


def test_registry_names_need_no_legend(monkeypatch):
    lines = _printed(monkeypatch, ["expert-v0", "greedy-v0"])
    assert not any(line.startswith("  expert-v0:") for line in lines)


def test_workers_beyond_the_deals_are_capped_with_a_note(monkeypatch, capsys):
    seen = {}

    def fake_evaluate(specs, games, seed, rules, workers, **kwargs):
        seen["workers"] = workers
        raise SystemExit(0)

    monkeypatch.setattr(evaluate, "evaluate", fake_evaluate)
    with pytest.raises(SystemExit):
        evaluate.main(["random-v0", "greedy-v0", "--games", "3", "--workers", "1000", "--quiet"])
    assert seen["workers"] == 3
    err = capsys.readouterr().err
    assert "note: --workers 1000 is more than the 3 deal(s) to play: using 3 worker process(es)" in err


def test_the_pool_never_starts_more_processes_than_blocks_of_deals(monkeypatch):
    started = {}

    class FakePool:
        def __init__(self, processes, initializer, initargs):
            started["processes"] = processes
            initializer(*initargs)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def imap(self, func, blocks):
            return map(func, blocks)

    class FakeContext:
        Pool = FakePool

    monkeypatch.setattr(duplicate.multiprocessing, "get_context", lambda method: FakeContext())
    from tt_env.engine.rules import Rules

    records = duplicate.run_deals(["random-v0", "random-v0"], Rules(rounds=(1,)), 3, 0, workers=1000)
    assert len(records) == 3 and started["processes"] == len(duplicate.deal_blocks(3, 1000, 256, 2)) <= 3
