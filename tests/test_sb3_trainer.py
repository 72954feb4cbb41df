"""``training/train_sb3.py`` from the inside: the MaskablePPO it builds follows the config, it saves
``latest.pt`` every ``save_every`` steps, and its environments in worker processes leave the
signals to the main process. (Resuming is ``tests/test_resume.py``'s and ``test_signals.py``'s.)"""

from __future__ import annotations

import signal

from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
from test_resume import sb3_config

from training import train_sb3


def test_the_model_follows_the_config_and_latest_is_saved_every_save_every_steps(tmp_path, monkeypatch) -> None:
    """768 steps in rollouts of 128 with save_every 256: saved at the start (0), at 256 and 512,
    and at the end; and gamma, gae_lambda and the seed are the config's, not SB3's defaults."""
    built: list[MaskablePPO] = []

    class Recorded(MaskablePPO):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            built.append(self)

    saved: list[int] = []
    save = train_sb3.RunCallback.save
    monkeypatch.setattr(train_sb3, "MaskablePPO", Recorded)
    monkeypatch.setattr(train_sb3.RunCallback, "save", lambda self, safe: (saved.append(safe["step"]),
                                                                           save(self, safe))[1])
    train_sb3.train(sb3_config(tmp_path, "gamma=0.9", "gae_lambda=0.8", "seed=7", "save_every=256",
                               "eval_every=0"))
    (model,) = built
    assert (model.gamma, model.gae_lambda, model.seed) == (0.9, 0.8, 7)
    assert saved == [0, 256, 512, 768]


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
