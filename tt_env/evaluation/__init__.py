"""Evaluation: duplicate games between agents, their statistics, the evaluator and the leaderboard.

Below training and needing no torch (a checkpoint agent loads torch only when one is named):

- :mod:`.loop`: :func:`play_game`, the one game loop (agents in turn, a hook per decision), which
  the duplicate games, the data tools and the benchmarks call, and its step
  :func:`agent_decision` (one agent's move), which the web app's Play page calls;
- :mod:`.duplicate`: the deals, every seating of each (``play_game``, ``run_deals``), batched for
  network agents, over worker processes;
- :mod:`.stats`: means, intervals, win rates and the JSON report's tables;
- :mod:`.evaluator`: :func:`evaluate`, the Python API behind ``python -m training.evaluate``;
- :mod:`.leaderboard`: every agent against ``expert-v0``, behind ``python -m training.leaderboard``.

The commands stay ``python -m training.evaluate`` and ``python -m training.leaderboard`` (and
``three-thirteen evaluate|leaderboard``), with the same flags.
"""

from .duplicate import GameRecord, build_agent, play_deal, play_deals, run_deals
from .evaluator import evaluate
from .loop import agent_decision, can_batch, play_game
from .stats import interval_text, mean_ci, score_lists, summarize, win_rate_ci

__all__ = ["GameRecord", "agent_decision", "build_agent", "can_batch", "evaluate", "interval_text", "mean_ci",
           "play_deal", "play_deals", "play_game", "run_deals", "score_lists", "summarize", "win_rate_ci"]
