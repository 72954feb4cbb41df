"""``scratch-2p-v1`` is what its name says: learned from a random initialisation on the batched
engine (three long runs, each from the last one's network), and its record is the one the docs
quote (issue 23, part 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from models.agent_loader import CHECKPOINT_DIR, SHIPPED  # noqa: E402
from models.checkpoint import read_metadata  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PATH = CHECKPOINT_DIR / SHIPPED["scratch-2p-v1"]
FAIR_OPPONENTS = {"self", "pool", "random-v0", "greedy-v0", "expert-v0"}  # scripted agents only as opponents


@pytest.fixture(scope="module")
def meta() -> dict:
    if not PATH.exists():
        pytest.skip("no shipped checkpoint in this checkout")
    return read_metadata(PATH)


def test_it_reads_no_expert_features(meta):
    kwargs = meta["network"]["kwargs"]
    assert meta["network"]["class"] == "CardNet" and meta["num_players"] == 2
    assert kwargs["expert_features"] is False and kwargs["exact_last_turn"] is False
    assert kwargs["solver_shortcuts"] is False


def test_its_lineage_starts_from_a_random_initialisation(meta):
    """Each run's init_checkpoint is the last run's network (in longruns/), back to a run with
    none; no run imitates anything or seats a scripted agent other than as an opponent."""
    config, steps, runs = meta["extra"]["config"], meta["training_steps"], 1
    while True:
        assert config["network"] == "cardnet" and not any(k in config for k in ("imitate", "imitation", "oracle_data"))
        assert set(config["opponents"]) <= FAIR_OPPONENTS
        if config["init_checkpoint"] is None:
            break
        parent = ROOT / Path(config["init_checkpoint"]).with_suffix(".json")
        if not parent.exists():
            pytest.skip("the long runs' checkpoints are not in this checkout (longruns/)")
        parent_meta = json.loads(parent.read_text())
        config, runs = parent_meta["extra"]["config"], runs + 1
        steps += parent_meta["training_steps"]
    assert runs == 3 and steps > 40_000_000  # the issue asks for at least 20M


def test_its_record_beats_expert_v0_and_the_docs_quote_it(meta):
    from doc_pages import page_with

    by_opponent = {r["opponent"]: r for r in meta["evaluation"]["results"]}
    expert = by_opponent["expert-v0"]
    assert expert["games"] == 2000 and expert["seed"] == 161803
    lo, hi = expert["ci95"]
    assert lo <= expert["score_diff"] <= hi < 0  # the target: the 95% interval below 0
    assert by_opponent["greedy-v0"]["ci95"][1] < 0
    marker = "### Phase 3: `expert-v0` on half the tables"
    text = page_with(marker)
    section = text[text.index(marker):]
    assert f"| 161803 | **{expert['score_diff']:+.2f} [{lo:+.2f}, {hi:+.2f}]** |" in section
