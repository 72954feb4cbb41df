"""Moved to :mod:`tt_env.evaluation.duplicate`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from tt_env.evaluation import duplicate as _moved

warnings.warn("training.duplicate is deprecated: import tt_env.evaluation.duplicate", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
