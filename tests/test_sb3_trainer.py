"""``training/train_sb3.py`` from the inside: the MaskablePPO it builds follows the config, it saves
``latest.pt`` every ``save_every`` steps, a second run in a folder needs ``overwrite``, and its
environments in worker processes leave the signals to the main process. (Resuming is
``tests/test_resume.py``'s and ``test_signals.py``'s.)"""

from __future__ import annotations

import signal

import pytest
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
from test_resume import sb3_config

from training import train_sb3
from training.common.run_utils import RunExistsError


@pytest.mark.filterwarnings("ignore:rich is experimental")  # SB3's progress bar
def test_the_model_follows_the_config_and_latest_is_saved_every_save_every_steps(tmp_path, monkeypatch) -> None:
    """768 steps in rollouts of 128 with save_every 256: saved at the start (0), at 256 and 512,
    and at the end; and gamma, gae_lambda and the seed are the config's, not SB3's defaults."""
    built: list[MaskablePPO] = []
    bars: list[bool] = []

    class Recorded(MaskablePPO):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            built.append(self)

        def learn(self, *args, **kwargs):
            bars.append(kwargs["progress_bar"])
            return super().learn(*args, **kwargs)

    saved: list[int] = []
    save = train_sb3.RunCallback.save
    monkeypatch.setattr(train_sb3, "MaskablePPO", Recorded)
    monkeypatch.setattr(train_sb3.RunCallback, "save", lambda self, safe: (saved.append(safe["step"]),
                                                                           save(self, safe))[1])
    train_sb3.train(sb3_config(tmp_path, "gamma=0.9", "gae_lambda=0.8", "ent_coef=0.02", "seed=7", "save_every=256",
                               "eval_every=0", "progress=true"))
    (model,) = built
    assert (model.gamma, model.gae_lambda, model.ent_coef, model.seed) == (0.9, 0.8, 0.02, 7)
    assert bars == [True]
    assert saved == [0, 256, 512, 768]


def test_a_second_run_in_a_folder_is_refused_unless_overwrite(tmp_path) -> None:
    """Nothing is lost without --overwrite; with it, the old run's files go."""
    cfg = sb3_config(tmp_path, "total_steps=128", "eval_every=0")
    train_sb3.train(cfg)
    with pytest.raises(RunExistsError, match="already holds a run: add --resume to continue it, or --overwrite"):
        train_sb3.train(cfg)
    marker = tmp_path / "sb3" / "main_job_eval.json"  # a file of the old run that this one does not write
    marker.write_text("[]")
    train_sb3.train(cfg, overwrite=True)
    assert not marker.exists() and (tmp_path / "sb3" / "checkpoints" / "final.pt").exists()


def test_the_vec_env_is_the_one_asked_for(tmp_path) -> None:
    for kind, cls in (("dummy", DummyVecEnv), ("subproc", SubprocVecEnv)):
        vec = train_sb3.make_vec_env(sb3_config(tmp_path, f"vec_env={kind}"), seed=0)
        try:
            assert type(vec) is cls and vec.num_envs == 2
        finally:
            vec.close()


def test_an_env_in_a_worker_process_ignores_the_stop_signals(tmp_path) -> None:
    """Ctrl-C reaches the whole process group: a worker must leave it to the main process, which
    saves and closes the workers."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        train_sb3.make_env(sb3_config(tmp_path), 0, 0, in_subprocess=True)().close()
        assert all(signal.getsignal(s) is signal.SIG_IGN for s in before)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    train_sb3.make_env(sb3_config(tmp_path), 0, 0)().close()
    assert all(signal.getsignal(s) == handler for s, handler in before.items())
