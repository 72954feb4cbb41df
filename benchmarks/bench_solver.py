"""Meld-solver throughput on random 14-card hands: ours against OpenSpiel's gin rummy utils.

Run from the repository root (after ``pip install -e ".[bench]"``)::

    python benchmarks/bench_solver.py                     # defaults: 5 repetitions, >= 1 s each
    python benchmarks/bench_solver.py --repeats 7 --seconds 2 --hands 5000

What is measured: hands solved per second. The hands are generated before any timing (the
same pool for every solver of a kind); a repetition solves the whole pool, in whole passes,
until at least ``--seconds`` have elapsed, and only that loop is timed.

Hand pools (cards are ints 0..51, ``suit * 13 + rank_index``; OpenSpiel uses the same
layout, only the suit letters differ, and suits are symmetric):

* ``double``: 14 cards drawn without replacement from two shuffled decks (104 cards), so a
  card can appear twice, as in Three Thirteen with two decks.
* ``single``: 14 distinct cards from one deck.

Solvers:

* ``least_penalty(hand, 13, False, False)``: ours, kings wild (the last round).
* ``least_penalty(hand, w, False, False)`` with a random wild rank w in 3..13 per hand
  (drawn up front).
* ``least_penalty(hand, 0, False, False)``: ours, no wilds: the same problem gin rummy's
  deadwood count solves (A=1, 2..9 face value, T J Q K = 10, sets of 3-4, runs).
* ``best_melds(hand, 13)``: ours, the full solve (penalty plus one best arrangement).
* ``discard_penalties(hand, w)`` (random wild rank per hand): ours, the least penalty left by
  each distinct discard of the 14-card hand in one call, next to the same answers from a
  Python loop of ``least_penalty`` calls (copy the hand, remove the card, solve); a "hand"
  there is every discard of one hand.
* OpenSpiel ``pyspiel.gin_rummy.GinRummyUtils(13, 4, 13).min_deadwood(hand)``: C++ through
  pybind11; its signature is ``min_deadwood(hand: list[int], card: int | None = None)``.
  It enumerates every meld group depth-first. It treats a card int as one physical card:
  with duplicates it erases every copy of a melded card from the deadwood and lets the two
  copies never share a meld group, so it gives wrong (too low) answers on two-deck hands.
  It is therefore timed on ``single`` hands only, next to ours on the same single hands.
  With ``hand_size=13`` a 14-card hand counts as "just drew a card", so it also drops the
  highest-ranked deadwood card before summing (a sort and a pop: negligible cost). The
  script checks, untimed, that ``GinRummyUtils(13, 4, 10)`` (no such drop) gives exactly our
  ``least_penalty(hand, 0)`` on every single-deck hand of the pool.

The fair head-to-head ratio is ours without wilds on single-deck hands / OpenSpiel on the
same hands; the other rows show what wilds and duplicates cost us. The script also prints
the ratio of issue 10 on its own line: ours on two-deck hands with a random wild rank (the
game's hardest case) / OpenSpiel on one-deck hands without wilds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fmt_rate, print_header, print_table, summarize  # noqa: E402

from tt_env.engine.melds import best_melds, discard_penalties, least_penalty  # noqa: E402


def make_hands(rng: np.random.Generator, n: int, decks: int, size: int = 14) -> list[list[int]]:
    return [(rng.permutation(52 * decks)[:size] % 52).tolist() for _ in range(n)]


def time_passes(solve_all: Callable[[], None], n: int, seconds: float) -> tuple[float, float]:
    """(hands per wall second, hands per CPU second): whole passes over the pool until
    ``seconds`` of wall time have elapsed (at least one pass)."""
    passes = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    while True:
        solve_all()
        passes += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            cpu = max(time.process_time() - c0, 1e-9)
            return passes * n / elapsed, passes * n / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="repetitions per solver (default 5)")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="minimum timed seconds per solver per repetition (default 1.0)")
    parser.add_argument("--hands", type=int, default=3000, help="hands per pool (default 3000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-openspiel", action="store_true", help="skip OpenSpiel")
    args = parser.parse_args()

    print_header("Meld solver: hands/s on uniform random 14-card hands", vars(args))

    rng = np.random.default_rng(args.seed)
    double = make_hands(rng, args.hands, decks=2)
    single = make_hands(rng, args.hands, decks=1)
    wilds = rng.integers(3, 14, size=args.hands).tolist()
    n = args.hands
    dup_share = sum(len(set(h)) < len(h) for h in double) / n
    print(f"pools: {n} hands each; {dup_share:.0%} of the two-deck hands hold a duplicate card\n")

    def lp_fixed(hands, w):
        def solve_all():
            for h in hands:
                least_penalty(h, w, False, False)
        return solve_all

    def lp_random(hands):
        def solve_all():
            for h, w in zip(hands, wilds, strict=True):
                least_penalty(h, w, False, False)
        return solve_all

    def bm_fixed(hands, w):
        def solve_all():
            for h in hands:
                best_melds(h, w)
        return solve_all

    def dp_batch(hands):
        def solve_all():
            for h, w in zip(hands, wilds, strict=True):
                discard_penalties(h, w, False, False)
        return solve_all

    def dp_loop(hands):
        def solve_all():
            for h, w in zip(hands, wilds, strict=True):
                for c in sorted(set(h)):
                    rest = list(h)
                    rest.remove(c)
                    least_penalty(rest, w, False, False)
        return solve_all

    check = [(h, w) for h, w in zip(double, wilds, strict=True)][:500]
    assert all(discard_penalties(h, w) == [(c, least_penalty([x for j, x in enumerate(h) if j != h.index(c)], w))
                                           for c in sorted(set(h))] for h, w in check)

    solvers: list[tuple[str, str, Callable[[], None]]] = [
        ("ours least_penalty, kings wild", "double", lp_fixed(double, 13)),
        ("ours least_penalty, random wild 3..13", "double", lp_random(double)),
        ("ours least_penalty, no wilds", "double", lp_fixed(double, 0)),
        ("ours best_melds, kings wild", "double", bm_fixed(double, 13)),
        ("ours least_penalty, kings wild", "single", lp_fixed(single, 13)),
        ("ours least_penalty, no wilds", "single", lp_fixed(single, 0)),
        ("ours best_melds, no wilds", "single", bm_fixed(single, 0)),
        ("ours discard_penalties, random wild 3..13", "double", dp_batch(double)),
        ("ours least_penalty loop per discard, random wild", "double", dp_loop(double)),
    ]

    if not args.no_openspiel:
        try:
            import pyspiel
        except ImportError:
            print("OpenSpiel not installed: skipping it (pip install -e '.[bench]').\n")
        else:
            utils13 = pyspiel.gin_rummy.GinRummyUtils(13, 4, 13)
            utils10 = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
            bad = sum(utils10.min_deadwood(h) != least_penalty(h, 0, False, False) for h in single)
            bad2 = sum(utils10.min_deadwood(h) != least_penalty(h, 0, False, False) for h in double)
            print(f"check: OpenSpiel min_deadwood (hand_size 10) == ours (no wilds) on "
                  f"{n - bad}/{n} single-deck hands; on two-deck hands it differs on {bad2}/{n} "
                  "(it mishandles duplicates), so OpenSpiel is timed on single-deck hands only.\n")
            if bad:
                print("WARNING: OpenSpiel disagrees with ours on single-deck hands: check encodings!\n")
            md = utils13.min_deadwood

            def os_all():
                for h in single:
                    md(h)
            solvers.append(("openspiel GinRummyUtils(13,4,13).min_deadwood", "single", os_all))

    for _, _, f in solvers:  # warm-up, untimed
        f()
    rates: dict[tuple[str, str], list[float]] = {(name, pool): [] for name, pool, _ in solvers}
    cpu_rates: dict[tuple[str, str], list[float]] = {k: [] for k in rates}
    for rep in range(args.repeats):
        for name, pool, f in solvers:  # round-robin against machine-load drift
            wall, cpu = time_passes(f, n, args.seconds)
            rates[(name, pool)].append(wall)
            cpu_rates[(name, pool)].append(cpu)
        print(f"  repetition {rep + 1}/{args.repeats} done", flush=True)
    print()

    med = {k: summarize(v) for k, v in rates.items()}
    cpu_med = {k: summarize(v)[0] for k, v in cpu_rates.items()}
    rows = [[name, pool, fmt_rate(med[(name, pool)][0]), fmt_rate(med[(name, pool)][1]),
             fmt_rate(med[(name, pool)][2]), f"{1e6 / med[(name, pool)][0]:.2f}",
             fmt_rate(cpu_med[(name, pool)])]
            for name, pool, _ in solvers]
    print_table(["solver", "hands", "median hands/s", "min", "max", "us/hand", "hands/CPU-s"],
                rows)
    print("(hands/s and us/hand: wall clock, time.perf_counter; hands/CPU-s: over this "
          "process's CPU time,\n time.process_time, less sensitive to other jobs on a shared "
          "machine)")
    print()

    batch, loop = ("ours discard_penalties, random wild 3..13", "double"), \
        ("ours least_penalty loop per discard, random wild", "double")
    print(f"ratio discard_penalties / least_penalty loop (every discard of a two-deck hand, random "
          f"wild): {med[batch][0] / med[loop][0]:.2f}x wall, {cpu_med[batch] / cpu_med[loop]:.2f}x CPU")
    os_key = next((k for k in med if k[0].startswith("openspiel")), None)
    if os_key:
        os_rate, os_cpu = med[os_key][0], cpu_med[os_key]
        issue = ("ours least_penalty, random wild 3..13", "double")
        print(f"least_penalty two-deck random wild / OpenSpiel min_deadwood one-deck: "
              f"{med[issue][0] / os_rate:.2f}x wall, {cpu_med[issue] / os_cpu:.2f}x CPU")
        print()
        for key in [("ours least_penalty, no wilds", "single"),
                    ("ours least_penalty, kings wild", "single"),
                    ("ours best_melds, no wilds", "single"),
                    ("ours least_penalty, kings wild", "double"),
                    ("ours least_penalty, random wild 3..13", "double"),
                    ("ours best_melds, kings wild", "double")]:
            label = f"ratio {key[0]} ({key[1]}) / OpenSpiel:"
            print(f"{label:<66} {med[key][0] / os_rate:5.2f}x wall, "
                  f"{cpu_med[key] / os_cpu:5.2f}x CPU")
        print("(the first of these is the like-for-like comparison: same hands, same problem)")


if __name__ == "__main__":
    main()
