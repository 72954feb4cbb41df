"""Moved to :mod:`tt_env.observation.state`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from .observation import state as _moved

warnings.warn("tt_env.state is deprecated: import tt_env.observation.state", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
