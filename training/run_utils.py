"""Moved to :mod:`training.common.run_utils`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.common import run_utils as _moved

warnings.warn("training.run_utils is deprecated: import training.common.run_utils", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
