"""Moved to :mod:`training.ppo.selfplay_tables`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.ppo import selfplay_tables as _moved

warnings.warn("training.selfplay_tables is deprecated: import training.ppo.selfplay_tables",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
