"""Moved to :mod:`training.rllib.env`: this old path warns with ``DeprecationWarning`` and goes in the next release."""

import sys
import warnings

from training.rllib import env as _moved

warnings.warn("training.rllib_env is deprecated: import training.rllib.env", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
