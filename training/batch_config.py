"""Moved to :mod:`training.ppo.batch_config`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.ppo import batch_config as _moved

warnings.warn("training.batch_config is deprecated: import training.ppo.batch_config", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
