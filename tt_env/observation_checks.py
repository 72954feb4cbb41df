"""Moved to :mod:`tt_env.observation.checks`: this old path warns with DeprecationWarning
and goes in the next release."""

import sys
import warnings

from .observation import checks as _moved

warnings.warn("tt_env.observation_checks is deprecated: import tt_env.observation.checks",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
