"""Moved to :mod:`training.rllib.masking`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.rllib import masking as _moved

warnings.warn("training.rllib_masking is deprecated: import training.rllib.masking", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
