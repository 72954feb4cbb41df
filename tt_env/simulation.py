"""Moved to :mod:`tt_env.search.simulation`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from .search import simulation as _moved

warnings.warn("tt_env.simulation is deprecated: import tt_env.search.simulation", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
