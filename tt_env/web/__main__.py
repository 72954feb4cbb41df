"""``python -m tt_env.web``: the browser app (see :mod:`tt_env.web`)."""

from .cli import main

raise SystemExit(main())
