"""Moved to :mod:`training.common.resume`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.common import resume as _moved

warnings.warn("training.resume is deprecated: import training.common.resume", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
