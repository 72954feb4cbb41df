"""Moved to :mod:`training.common.config_files`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from training.common import config_files as _moved

warnings.warn("training.config_files is deprecated: import training.common.config_files",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
