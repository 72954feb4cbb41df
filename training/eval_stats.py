"""Moved to :mod:`tt_env.evaluation.stats`: this old path warns with ``DeprecationWarning``
and goes in the next release."""

import sys
import warnings

from tt_env.evaluation import stats as _moved

warnings.warn("training.eval_stats is deprecated: import tt_env.evaluation.stats", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved
