"""Moved to :mod:`tt_env.ui.replay` (in an earlier release): this old path, and ``python -m
tt_env.replay``, warn with ``DeprecationWarning`` and go in the next release."""

import sys
import warnings

warnings.warn("tt_env.replay is deprecated: import tt_env.ui.replay (python -m tt_env.ui.replay)", DeprecationWarning,
              stacklevel=1 if __name__ == "__main__" else 2)  # run as a command: shown by default

if __name__ == "__main__":
    import runpy

    runpy.run_module("tt_env.ui.replay", run_name="__main__", alter_sys=True)
else:
    from .ui import replay as _moved

    sys.modules[__name__] = _moved
