"""Every agent against expert-v0 at 2, 3 and 4 players: ``python -m training.leaderboard`` (also
``three-thirteen leaderboard``).

The command's entry point. The code lives in :mod:`tt_env.evaluation.leaderboard` (evaluation needs no
training code); importing ``training.leaderboard`` gives that module, so its names stay importable here.
"""

import sys

from tt_env.evaluation import leaderboard as _impl

if __name__ == "__main__":
    _impl.main()
else:
    sys.modules[__name__] = _impl
