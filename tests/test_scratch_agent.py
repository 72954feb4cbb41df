"""``scratch-2p-v0`` is what its name says: learned from scratch, its record honest (issue 17)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from models.agent_loader import CHECKPOINT_DIR, SHIPPED  # noqa: E402
from models.checkpoint import read_metadata  # noqa: E402

PATH = CHECKPOINT_DIR / SHIPPED["scratch-2p-v0"]


@pytest.fixture(scope="module")
def meta() -> dict:
    if not PATH.exists():
        pytest.skip("no shipped checkpoint in this checkout")
    return read_metadata(PATH)


def test_it_reads_no_expert_features_and_starts_from_nothing(meta):
    kwargs = meta["network"]["kwargs"]
    assert meta["network"]["class"] == "CardNet" and meta["num_players"] == 2
    assert kwargs["expert_features"] is False and kwargs["exact_last_turn"] is False
    assert kwargs["solver_shortcuts"] is False  # the greedy shortcuts start at 0: no soft-greedy start
    config = meta["extra"]["config"]
    assert config["init_checkpoint"] is None
    assert not any(key in config for key in ("imitate", "imitation", "oracle_data"))
    assert set(config["opponents"]) <= {"random-v0", "greedy-v0", "expert-v0"}  # scripted opponents are fair


def test_its_record_says_how_it_was_trained_and_how_it_scored(meta):
    extra = meta["extra"]
    assert extra["trainer"] == "training/selfplay.py"
    assert "from random initialisation" in extra["algorithm"] and "no expert features" in extra["inputs"]
    assert meta["training_steps"] > 1_000_000
    by_opponent = {r["opponent"]: r for r in meta["evaluation"]["results"]}
    expert = by_opponent["expert-v0"]
    assert expert["games"] == 2000 and expert["seed"] == 1
    assert expert["ci95"][0] <= expert["score_diff"] <= expert["ci95"][1]
    assert expert["score_diff"] > 0  # docs/training.md says plainly that it loses to expert-v0; so does the record
    assert by_opponent["greedy-v0"]["score_diff"] < 0


def test_the_readme_quotes_its_recorded_evaluation(meta):
    from doc_pages import page_with

    marker = "## Learning from scratch: `scratch-2p-v0`"  # docs/training.md (the README's until issue 24)
    text = page_with(marker)
    section = text[text.index(marker):]
    for result in meta["evaluation"]["results"]:
        lo, hi = result["ci95"]
        cell = f"| {result['opponent']} | {result['games']} ({result['games_played']}) | {result['score_diff']:+.2f} [{lo:+.2f}, {hi:+.2f}] |"
        assert cell in section, cell
