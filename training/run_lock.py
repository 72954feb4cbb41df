"""Moved to :mod:`training.common.run_lock`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.common import run_lock as _moved

warnings.warn("training.run_lock is deprecated: import training.common.run_lock", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
