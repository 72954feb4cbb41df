"""Moved to :mod:`training.common.config`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.common import config as _moved

warnings.warn("training.config is deprecated: import training.common.config", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
