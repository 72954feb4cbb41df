"""The Leaderboard page's data: result files read and checked, and small evaluations run in the background.

:func:`results_view` reads the two JSON formats of the training tools, the leaderboard of
``python -m training.leaderboard --json`` (``three-thirteen-leaderboard/1``: one row per agent
and player count against ``expert-v0``) and the report of ``python -m training.evaluate --json``
(``three-thirteen-evaluation/1``: every agent's mean score and win rate, and every pair's
score difference), each value with its 95% interval. It checks every field it shows and names
the first one that is wrong.

:class:`EvaluationRunner` runs an evaluation (:func:`run_evaluation`: the games and the report of
``training.evaluate.evaluate``, the evaluator's Python API) in one background thread with a small
number of deals; one evaluation at a time for the whole server, and its progress (deals done) can
be asked for while it runs. Every agent move first checks whether the evaluation was asked to stop
or has run out of time (:data:`~.config.MAX_EVAL_SECONDS`); :func:`check_work` refuses, before it
starts, one whose search agents would need far longer.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agents import Agent, make_agent
from ..engine.rules import Rules
from .config import MAX_EVAL_SECONDS, MAX_SEARCH_WORK
from .validate import RequestError, is_int, short_repr, short_text
from .work import stop_guard

LEADERBOARD_FORMAT = "three-thirteen-leaderboard/1"
EVALUATION_FORMAT = "three-thirteen-evaluation/1"
MAX_DEALS = 200
"""Most deals a browser may ask the evaluator for (a small evaluation: seconds with scripted agents)."""
KEPT_JOBS = 16
MAX_RESULT_SEED = 2**128 - 1
"""Largest seed a results file may name (the tools take any integer >= 0; this one is shown as is)."""


def results_view(data: Any) -> dict[str, Any]:
    """A leaderboard or evaluation file as the page's tables (400 naming what is wrong)."""
    if not isinstance(data, Mapping):
        raise RequestError("a results file is a JSON object")
    kind = data.get("format")
    if kind == LEADERBOARD_FORMAT:
        return _leaderboard(data)
    if kind == EVALUATION_FORMAT:
        return evaluation_view(data)
    raise RequestError(f"format {short_repr(kind)} is not a results file: open a {LEADERBOARD_FORMAT} file "
                       f"(python -m training.leaderboard --json) or a {EVALUATION_FORMAT} file "
                       f"(python -m training.evaluate --json)")


def _leaderboard(data: Mapping[str, Any]) -> dict[str, Any]:
    rows = _list(data, "rows", "the leaderboard")
    groups: dict[int, list[dict[str, Any]]] = {}
    for i, row in enumerate(rows):
        where = f"rows[{i}]"
        players = _int(row, "players", where, 2)
        groups.setdefault(players, []).append({
            "agent": _str(row, "agent", where), "deals": _int(row, "deals", where, 1),
            "score_diff": _num(row, "score_diff", where), "ci95": _interval(row, "ci95", where),
            "win_rate": _num(row, "win_rate", where), "win_rate_ci95": _interval(row, "win_rate_ci95", where),
            "ms_per_move": _num(row, "ms_per_move", where),
        })
    tables = [{"players": n, "rows": sorted(group, key=lambda r: r["score_diff"])}
              for n, group in sorted(groups.items())]
    return {"kind": "leaderboard", "reference": _str(data, "reference", "the leaderboard"),
            "seed": _seed(data, "the leaderboard"), "tables": tables}


def evaluation_view(data: Mapping[str, Any]) -> dict[str, Any]:
    """An evaluation report (``training.evaluate``'s JSON) as the page's tables."""
    where = "the evaluation"
    agents = []
    for i, a in enumerate(_list(data, "agents", where)):
        at = f"agents[{i}]"
        agents.append({"name": _str(a, "name", at), "mean_score": _num(a, "mean_score", at),
                       "mean_score_ci95": _interval(a, "mean_score_ci95", at), "win_rate": _num(a, "win_rate", at),
                       "win_rate_ci95": _interval(a, "win_rate_ci95", at), "ms_per_move": _num(a, "ms_per_move", at)})
    pairwise = []
    for i, p in enumerate(_list(data, "pairwise", where)):
        at = f"pairwise[{i}]"
        pairwise.append({"a": _str(p, "a", at), "b": _str(p, "b", at),
                         "mean_score_diff": _num(p, "mean_score_diff", at), "ci95": _interval(p, "ci95", at)})
    return {"kind": "evaluation", "games": _int(data, "games", where, 1), "seatings": _int(data, "seatings", where, 1),
            "games_played": _int(data, "games_played", where, 1), "seed": _seed(data, where),
            "rules": _rules(data, where),
            "agents": sorted(agents, key=lambda a: a["mean_score"]), "pairwise": pairwise}


def _seed(data: Mapping[str, Any], where: str) -> int | None:
    """The file's ``seed``: an integer ``0 .. MAX_RESULT_SEED``, or null (shown as is, so checked)."""
    value = data.get("seed")
    if value is not None and (not is_int(value) or not 0 <= value <= MAX_RESULT_SEED):
        raise RequestError(f"{where} has seed={short_repr(value)}: expected an integer >= 0 or null")
    return value


def _rules(data: Mapping[str, Any], where: str) -> dict[str, Any] | None:
    """The file's ``rules`` (``Rules.to_dict()``) read back by :class:`Rules`, or null: only rule
    options the engine knows, with values it allows, are shown."""
    value = data.get("rules")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise RequestError(f"{where} has rules={short_repr(value)}: expected an object of rule options or null")
    try:
        return Rules.from_dict(value).to_dict()
    except (TypeError, ValueError) as exc:
        raise RequestError(f"{where} has bad rules: {short_text(str(exc))}") from None


def _list(data: Mapping[str, Any], key: str, where: str) -> list[Mapping[str, Any]]:
    value = data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, Mapping) for v in value):
        raise RequestError(f"{where} has no {key!r} list of objects")
    return value


def _str(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise RequestError(f"{where} has {key}={short_repr(value)}: expected a string")
    return value


def _int(data: Mapping[str, Any], key: str, where: str, low: int) -> int:
    value = data.get(key)
    if not is_int(value) or value < low:
        raise RequestError(f"{where} has {key}={short_repr(value)}: expected an integer >= {low}")
    return value


def _num(data: Mapping[str, Any], key: str, where: str) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RequestError(f"{where} has {key}={short_repr(value)}: expected a number")
    return float(value)


def _interval(data: Mapping[str, Any], key: str, where: str) -> list[float] | None:
    """``[lo, hi]`` or ``None`` (the files write null for an interval over one deal)."""
    value = data.get(key)
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
            or value[0] > value[1]):
        raise RequestError(f"{where} has {key}={short_repr(value)}: expected [low, high] or null")
    return [float(value[0]), float(value[1])]


# ---------------------------------------------------------------------- background evaluations
@dataclass
class EvaluationJob:
    """One evaluation: its request, its progress and, once done, its report (or its error)."""

    session: str
    specs: list[str]
    deals: int
    seed: int
    rules: Rules
    done: int = 0
    status: str = "running"
    report: dict[str, Any] | None = None
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    seconds: float | None = None
    stop_requested: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "done": self.done, "total": self.deals, "agents": self.specs,
                "seed": self.seed, "rules": self.rules.to_dict(), "error": self.error,
                "seconds": self.seconds if self.seconds is not None else time.monotonic() - self.started,
                "report": self.report, "view": evaluation_view(self.report) if self.report else None}


Evaluate = Callable[..., tuple[dict, list]]
MakeAgent = Callable[[str, Rules], Agent]


class _Stopped(Exception):
    """Raised before an agent's move (or after a deal) to end an evaluation that was asked to stop."""


def check_work(specs: Sequence[str], deals: int, rules: Rules, is_slow: Callable[[str], bool]) -> None:
    """Refuse (400) an evaluation whose search agents would play longer than the server allows: search
    agents x deals x seatings x rounds at most :data:`~.config.MAX_SEARCH_WORK`."""
    from ..evaluation.duplicate import seating_count
    from ..evaluation.evaluator import resolved_seatings

    slow = sum(1 for name in specs if is_slow(name))
    seatings = seating_count(len(specs), resolved_seatings("auto", specs))  # as run_evaluation seats them
    per_deal = slow * seatings * len(rules.rounds)
    if per_deal * deals <= MAX_SEARCH_WORK:
        return
    most = MAX_SEARCH_WORK // per_deal
    advice = (f"ask for at most {most} deal(s), or" if most else "even one deal is too much:") + \
        " use fewer search agents, players or rounds"
    raise RequestError(f"the evaluation is too long for this server: {slow} search agent(s) x {deals} deals x "
                       f"{seatings} seatings x {len(rules.rounds)} rounds = {per_deal * deals:,} units of search "
                       f"(about a second each), more than the {MAX_SEARCH_WORK} allowed: {advice}")


def run_evaluation(specs: Sequence[str], deals: int, seed: int, rules: Rules, *, make: MakeAgent,
                   check: Callable[[], None], on_deal: Callable[[list], None]) -> tuple[dict, list]:
    """The games and the report of ``training.evaluate.evaluate(specs, deals, seed, rules, workers=1,
    batch_size=1)`` (its ``seatings="auto"``), with ``check()`` called before every agent move (it
    raises to stop the evaluation at once: the evaluator itself could only stop between deals)."""
    from ..evaluation.duplicate import run_deals
    from ..evaluation.evaluator import build_report, resolved_seatings

    agents = [stop_guard(make(name, rules), check) for name in specs]
    seatings = resolved_seatings("auto", specs)
    start = time.perf_counter()
    records = run_deals(agents, rules, deals, seed, workers=1, on_deal=on_deal, batch_size=1, seatings=seatings)
    return build_report(records, specs, deals, seed, rules, time.perf_counter() - start, seatings), records


class EvaluationRunner:
    """Runs one evaluation at a time in a background thread; keeps the last :data:`KEPT_JOBS` jobs.

    ``evaluate``: an evaluator to call instead of :func:`run_evaluation` (tests), as
    ``evaluate(specs, deals, seed, rules, workers=1, on_deal=..., batch_size=1)``: it stops between
    deals only. ``make``: builds an agent from its name; ``max_seconds``: the time an evaluation may run.
    """

    def __init__(self, evaluate: Evaluate | None = None, make: MakeAgent | None = None,
                 max_seconds: float = MAX_EVAL_SECONDS) -> None:
        self._evaluate = evaluate
        self._make = make
        self.max_seconds = max_seconds
        self._jobs: OrderedDict[str, EvaluationJob] = OrderedDict()
        self._running: EvaluationJob | None = None
        self._lock = threading.Lock()

    def start(self, session: str, specs: Sequence[str], deals: int, seed: int, rules: Rules) -> str:
        """Start an evaluation; 409 while another one runs. Returns the job's id."""
        job = EvaluationJob(session, list(specs), deals, seed, rules)
        with self._lock:
            if self._running is not None:
                raise RequestError(f"an evaluation is already running ({self._running.done} of "
                                   f"{self._running.deals} deals): one at a time, try again when it is done", 409)
            self._running = job
            key = secrets.token_urlsafe(12)
            self._jobs[key] = job
            while len(self._jobs) > KEPT_JOBS:
                self._jobs.popitem(last=False)
        threading.Thread(target=self._run, args=(job,), name="tt-web-evaluation", daemon=True).start()
        return key

    def get(self, session: str, key: str) -> EvaluationJob:
        """The job ``key`` of ``session`` (404 otherwise)."""
        with self._lock:
            job = self._jobs.get(key)
        if job is None or job.session != session:
            raise RequestError(f"no evaluation {short_repr(key)} in this browser session", 404)
        return job

    def stop(self, session: str, key: str) -> EvaluationJob:
        """Ask job ``key`` of ``session`` to stop at its next move (409 once it has ended)."""
        job = self.get(session, key)
        if job.status != "running":
            raise RequestError(f"evaluation {key!r} has {job.status}: there is nothing to stop", 409)
        job.stop_requested = True
        return job

    def _check(self, job: EvaluationJob) -> None:
        """Raise to end ``job``: :class:`_Stopped` when asked to stop, ``TimeoutError`` past ``max_seconds``."""
        if job.stop_requested:
            raise _Stopped
        if time.monotonic() - job.started > self.max_seconds:
            raise TimeoutError(f"the evaluation ran over {self.max_seconds:g} s and was stopped after {job.done} of "
                               f"{job.deals} deals: choose fewer deals or faster agents")

    def _run(self, job: EvaluationJob) -> None:
        try:
            def advance(_records: list) -> None:
                job.done += 1
                if job.done < job.deals:
                    self._check(job)

            if self._evaluate is None:
                report, _ = run_evaluation(job.specs, job.deals, job.seed, job.rules, make=self._make or make_agent,
                                           check=lambda: self._check(job), on_deal=advance)
            else:
                report, _ = self._evaluate(job.specs, job.deals, job.seed, job.rules, workers=1, on_deal=advance,
                                           batch_size=1)
            job.report = report
            job.status = "done"
        except _Stopped:
            job.status = "stopped"
        except Exception as exc:  # noqa: BLE001 - the page shows what went wrong
            job.error = short_text(str(exc) or type(exc).__name__, 300)
            job.status = "failed"
        finally:
            job.seconds = time.monotonic() - job.started
            with self._lock:
                self._running = None
