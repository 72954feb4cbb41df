"""Defaults of the browser app shared by the command line and the app (no third-party imports)."""

DEFAULT_PORT = 8000
DEFAULT_MAX_GAMES = 100
"""Games kept in memory (Play and Watch, all browsers together) before the least recently used is dropped."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
"""The names the app answers to when it listens on this machine only."""
