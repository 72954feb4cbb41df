"""PPO, as the self-play trainers use it: the rollout buffer and the clipped update (``update``),
the self-play tables and opponent pool (``selfplay_tables``), and the batched engine's collection,
rollout, privileged critic and config (``batch_collect``, ``batch_rollout``, ``batch_critic``,
``batch_config``), and what both commands share around their loop (``loop``).

The commands that run it are ``python -m training.selfplay`` and ``python -m training.batch_ppo``.
``training.ppo`` was a module until issue 24: its names (``Buffer``, ``ppo_update``) are still
importable from here for one release, with a ``DeprecationWarning``; import them from
:mod:`training.ppo.update`.
"""

import warnings

_MOVED = ("Buffer", "ppo_update")


def __getattr__(name: str):
    if name in _MOVED:
        warnings.warn(f"training.ppo.{name} is deprecated: import it from training.ppo.update",
                      DeprecationWarning, stacklevel=2)
        from training.ppo import update

        return getattr(update, name)
    raise AttributeError(f"module 'training.ppo' has no attribute {name!r}")
