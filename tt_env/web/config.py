"""Defaults of the browser app shared by the command line and the app (no third-party imports)."""

DEFAULT_PORT = 8000
DEFAULT_MAX_GAMES = 100
"""Games kept in memory (Play and Watch, all browsers together) before the least recently used is dropped."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
"""The names the app answers to when it listens on this machine only (with the address it listens on,
when that is another loopback address such as 127.0.0.2): names that another site's page cannot be
served under, which stops DNS rebinding. ``[::1]`` is how a browser sends the IPv6 address."""
MAX_GAME_MOVES = 5000
"""Most moves of a game the app replays or plays (a record sent to Watch, a new game's rules): a whole
game of the default rules at 8 seats is at most 4,554. A game of 5,000 moves keeps about 10 MB and
takes about half a second to check."""
DEFAULT_MAX_JOBS = 2
"""Agent games computed at the same time (new Watch games and the agents' opening moves of new Play
games); one more is refused with 503 until one ends."""
MAX_WORK_SECONDS = 300
"""Longest a new Watch game's agents may think in all; the game is then stopped and refused with 503.
Work whose browser has gone (the request closed) is stopped at the next move."""
MAX_EVAL_SECONDS = 600
"""Longest a Leaderboard evaluation may run (it runs in the background, one at a time); it is then
stopped at its next move and reported as failed, with the reason."""
MAX_SEARCH_WORK = 200
"""Most search work an evaluation may ask for, counted as search agents (``ismcts-v0``, ``ismcts-v1``)
x deals x seatings (as ``training.evaluate`` seats them: N rotations, or N! orders) x rounds: each unit
is a search agent's share of one round, about a second at 2 players (more at more seats), so the
work accepted fits :data:`MAX_EVAL_SECONDS`.
Scripted agents and networks are a thousand times faster and are bounded by the deal count alone."""
