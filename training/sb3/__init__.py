"""What ``training/train_sb3.py`` uses besides Stable-Baselines3 itself: :mod:`.batched_vec_env`,
the batched engine as an SB3 ``VecEnv``."""
