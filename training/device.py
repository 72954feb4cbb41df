"""Moved to :mod:`training.common.device`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.common import device as _moved

warnings.warn("training.device is deprecated: import training.common.device", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
