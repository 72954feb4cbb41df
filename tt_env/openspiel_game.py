"""Moved to :mod:`tt_env.openspiel.game` (in an earlier release): this old path warns with
``DeprecationWarning`` and goes in the next release."""

import sys
import warnings

from .openspiel import game as _moved

warnings.warn("tt_env.openspiel_game is deprecated: import tt_env.openspiel.game", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
