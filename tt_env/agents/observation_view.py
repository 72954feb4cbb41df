"""Moved to :mod:`tt_env.observation.decode`: this old path warns with DeprecationWarning
and goes in the next release."""

import sys
import warnings

from ..observation import decode as _moved

warnings.warn("tt_env.agents.observation_view is deprecated: import tt_env.observation.decode",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
