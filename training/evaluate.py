"""Evaluate agents against each other in duplicate games: ``python -m training.evaluate`` (also
``three-thirteen evaluate``).

The command's entry point. The code lives in :mod:`tt_env.evaluation.evaluator` (evaluation needs no
training code); importing ``training.evaluate`` gives that module, so its names stay importable here.
"""

import sys

from tt_env.evaluation import evaluator as _impl

if __name__ == "__main__":
    _impl.main()
else:
    sys.modules[__name__] = _impl
