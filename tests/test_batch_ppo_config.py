"""``training/batch_ppo.py``'s config: each error names the key, the value and what is allowed; the
bounds themselves pass; the learning-rate window; what the saved config holds."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_batch_ppo import config

from training import batch_ppo
from training.common.config import ConfigError, load_config
from training.ppo.batch_config import BatchPPOConfig


@pytest.mark.parametrize("override,message", [
    ("num_table=8", r"^(?!.*'num_envs').*unknown config key.*allowed are .*'num_tables'"),
    ("device=gpu", "device='gpu' is not allowed: use auto, cpu, cuda or cuda:K"),
    ("opponents={self: 0.5, greedy-v0: 0.4}", "opponents=.* fractions that sum to 1"),
    ("opponents={selfplay: 1.0}", r"opponents=.*mapping from \['self', 'pool', 'greedy-v0', 'random-v0', 'expert-v0'\]"),
    ("num_tables=0", "num_tables=0 is not allowed: use an int from 1"),
    ("num_envs=4", "num_envs=4 is not allowed: .*set num_tables instead"),
    ("privileged_critic=maybe", "privileged_critic='maybe' has the wrong type"),
    ("anneal_start_step=-1", "anneal_start_step=-1 is not allowed: use an int >= 0"),
    ("anneal_end_step=300", "anneal_end_step=300 .*decay window must not be empty"),
    ("total_steps=300", "total_steps=300 .*decay window must not be empty"),
    ("anneal_end_step=1.5", "anneal_end_step=1.5 has the wrong type"),
    ("anneal_end_step=500", r"^total_steps=600 is not allowed: use an int up to anneal_end_step \(500\) with "
                               r"anneal_lr: the learning rate is 0 from there"),
    ("opponents={self: 1.5, greedy-v0: -0.5}", r"^opponents\.self=1\.5 is not allowed: use a fraction in \[0, 1\]$"),
    ("critic_hidden_sizes=[]",
     r"^critic_hidden_sizes=\[\] is not allowed: use a non-empty list of at most 64 ints from 1 to 4096$"),
    ("critic_hidden_sizes=[4096, 4096, 4096, 4096]",
     r"^critic_hidden_sizes: the privileged critic would have 52,637,697 parameters, over the 50,000,000 allowed: "
     r"use fewer or smaller layers$"),
    (f"critic_hidden_sizes={[1] * 65}",
     r"^critic_hidden_sizes=\[1, 1, 1, 1, 1, 1, 1, 1, \.\.\.\] is not allowed: use a non-empty list of at most 64 "),
    ("init_checkpoint=''",
     r"^init_checkpoint='' is not allowed: use a checkpoint file's path$"),
    ("network=resnet", r"^network='resnet' is not allowed: use one of \['cardnet', "),
    ("snapshot_every=0", r"^snapshot_every=0 is not allowed: use an int >= 1$"),
    ("network_kwargs={channels: 100000, hidden: 16}", r"^network_kwargs: network option channels=100000 is out of"),
])
def test_bad_config_is_a_clear_error(tmp_path, override, message):
    with pytest.raises(ConfigError, match=message):
        config(tmp_path, "bad", "anneal_start_step=400" if "anneal_start" not in override else "seed=0", override)


def test_the_config_s_bounds_themselves_are_allowed_and_one_past_them_is_not(tmp_path):
    """The largest rollout (2**20 moves, as selfplay's: 32,768 steps of 32 tables) and the fractions 0 and 1
    pass; the largest critic (two layers of 4096) too."""
    cfg = config(tmp_path, "edge", "num_tables=32", "rollout_steps=131072", "opponents={self: 1, pool: 0}")
    assert cfg.rollout_steps * cfg.num_tables == 1 << 22 and cfg.table_counts()["self"] == cfg.num_tables
    for sizes in ([4096, 4096], [1] * 64):
        assert config(tmp_path, "edge", f"critic_hidden_sizes={sizes}").critic_hidden_sizes == sizes
    with pytest.raises(ConfigError, match=r"^rollout_steps=131073 is not allowed: use an int with rollout_steps \* "
                                          r"num_tables \(moves per rollout\) from num_minibatches \(2\) to 4194304: "
                                          r"each move takes several kB of memory$"):
        config(tmp_path, "edge", "num_tables=32", "rollout_steps=131073")
    with pytest.raises(ConfigError, match=r"^rollout_steps=8 is not allowed: .* to 4194304"):
        config(tmp_path, "edge", f"num_tables={1 << 20}", "rollout_steps=8")


def test_the_saved_config_has_no_selfplay_key(tmp_path):
    """``num_envs`` is selfplay's key (this trainer has ``num_tables``): the run's config.yaml leaves it
    out, so that the saved config loads back as it was."""
    cfg = config(tmp_path, "keys")
    assert "num_envs" not in cfg.to_dict() and cfg.to_dict()["num_tables"] == 8


def test_the_default_config_file_is_the_defaults():
    root = Path(__file__).resolve().parents[1]
    assert load_config(BatchPPOConfig, root / "configs" / "batch_ppo_default.yaml") == BatchPPOConfig()


def test_the_learning_rate_decays_over_its_window():
    whole = BatchPPOConfig(total_steps=1000, learning_rate=0.1)
    assert [whole.learning_rate_at(s) for s in (0, 250, 1000, 1200)] == pytest.approx([0.1, 0.075, 0.0, 0.0])
    window = BatchPPOConfig(total_steps=300, learning_rate=0.1, anneal_start_step=200, anneal_end_step=600)
    assert [window.learning_rate_at(s) for s in (0, 199, 200, 300, 500, 600, 700)] == pytest.approx(
        [0.1, 0.1, 0.1, 0.075, 0.025, 0.0, 0.0])
    assert BatchPPOConfig(anneal_lr=False, learning_rate=0.1).learning_rate_at(10 ** 9) == 0.1


def test_cli_refuses_a_bad_key_and_a_missing_cuda(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        batch_ppo.main(["--set", "num_table=8"])
    assert exc.value.code == 2 and "unknown config key" in capsys.readouterr().err
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit):
            batch_ppo.main(["--set", f"run_dir={tmp_path}", "--device", "cuda"])
        assert "not available here" in capsys.readouterr().err


def test_cuda_graphs_need_a_cuda_device(tmp_path):
    with pytest.raises(ConfigError, match=r"cuda_graphs=true is not allowed on device='cpu' \(here cpu\): CUDA "
                                          r"graphs need a CUDA device; use cuda_graphs=false"):
        batch_ppo.train(config(tmp_path, "graphs", "cuda_graphs=true"))
    assert not (tmp_path / "graphs").exists()
