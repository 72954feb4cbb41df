"""Moved to :mod:`tt_env.jsonio` (the one strict JSON reader and writer): this old path warns with
``DeprecationWarning`` and goes in the next release."""

import sys
import warnings

from . import jsonio as _moved

warnings.warn("tt_env.json_input is deprecated: import tt_env.jsonio", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
