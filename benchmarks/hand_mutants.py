"""Mutants written by hand for the code mutmut cannot change: the Triton kernels and the C loops.

    python benchmarks/hand_mutants.py                      # every mutant below (about 25 minutes)
    python benchmarks/hand_mutants.py --files tt_env/batch/_kernels_moves.c   # one file's
    python benchmarks/hand_mutants.py --list               # what they are, without running them

mutmut (``benchmarks/mutation.py``) leaves decorated functions alone, and every Triton kernel is
defined inside a ``functools.lru_cache``d builder; the CPU step's C loops are C. So these
mutants are listed here, one change each (a text replaced once in one file), with the tests
that check that code: the Triton kernels interpreted on a CPU against the tensor code, the C
loops against the tensor code and the scalar engine. Each runs in a scratch copy of the checkout
(``--work``; the C extensions rebuilt there after a change to a ``.c`` file), so the checkout
is never changed. A mutant is *killed* when a test fails; the ones marked ``equivalent`` are
expected to survive (the reason is given). ``docs/MUTATION.md`` has the results.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mutation import copy_checkout

TRITON_TESTS = ("tests/test_batch_triton_kernels.py",)
SOLVER_TESTS = ("tests/test_batch_solver_triton.py",)
C_TESTS = ("tests/test_batch_engine.py", "tests/test_batch_moves.py", "tests/test_batch_observe.py",
           "tests/test_batch_api.py", "tests/test_batch_state.py")


@dataclass(frozen=True)
class HandMutant:
    """``old`` replaced by ``new`` (``old`` occurs exactly once in ``file``), run against ``tests``."""

    file: str
    old: str
    new: str
    equivalent: str = ""
    """Why the mutant cannot change a game (empty for a mutant that a test must kill)."""

    @property
    def tests(self) -> tuple[str, ...]:
        if self.file.endswith(".c"):
            return C_TESTS
        return SOLVER_TESTS if self.file == SOLVER_T else TRITON_TESTS


OBSERVE_T, MOVES_T, DEAL_T, FILTER_T, SOLVER_T = (f"tt_env/batch/{name}_triton.py" for name in
                                                  ("observe", "moves", "deal", "go_out_filter", "solver"))
MOVES_C, OBSERVE_C, DEAL_C = (f"tt_env/batch/_kernels_{name}.c" for name in ("moves", "observe", "deal"))


def _in(file: str, *changes: tuple[str, ...]) -> list[HandMutant]:
    """The mutants of one file: ``(old, new)`` or ``(old, new, why it is equivalent)`` each."""
    return [HandMutant(file, *change) for change in changes]


NO_EMPTY_PILE = "a stock draw always sees a top discard: the pile holds the turned-up card or the card " \
                "discarded after a take, and a refill keeps the top"
MUTANTS: list[HandMutant] = [
    *_in(OBSERVE_T,
        ("(h == (r + 12)[:, None])", "(h == (r + 13)[:, None])"),
        ("(26 + (wo - s + N) % N)", "(26 + (wo + N) % N)"),
        ("tl.where(j <= N, j, j - N - 1)", "tl.where(j < N, j, j - N - 1)",
         "the seat at the stock's column is read by no piece (only hand sizes and scores read seats)"),
        ("(draw & ((stock > 0) | (plen > 1)))", "(draw & ((stock > 0) | (plen > 0)))"),
        ("holding = ((p == 1) & ~over)[:, None]", "holding = (p == 1)[:, None]"),
        ("((tk >= 0) & others)[:, None]", "(others)[:, None]",
         "a taken card of -1 matches no card column"),
        ("mask=cards, other=0.0) - top_hot", "mask=cards, other=0.0)"),
        ("tl.store(out + 156 + (N + k - 2) * 52,", "tl.store(out + 156 + (N + k - 1) * 52,"),
    ),
    *_in(MOVES_T,
        ("mask=stock_draw & (top >= 0))", "mask=stock_draw)", NO_EMPTY_PILE),
        ("tl.store(known_at, held - 1.0, mask=discard & (held > 0.0))",
         "tl.store(known_at, held - 1.0, mask=discard)"),
        ("tl.store(known_at, tl.load(known_at, mask=take, other=0.0) + 1.0, mask=take)", "pass"),
        ("((gone < 0) & (tl.load(turn + rows, mask=ok, other=0) >= max_turns))",
         "((tl.load(turn + rows, mask=ok, other=0) >= max_turns))"),
        ("(tl.load(turn + rows, mask=ok, other=0) >= max_turns)",
         "(tl.load(turn + rows, mask=ok, other=0) > max_turns)"),
        ("tl.store(turn + rows, tl.load(turn + rows, mask=discard, other=0) + 1, mask=discard)",
         "pass"),
        ("tl.store(taken + rows, tl.full(rows.shape, -1, tl.int64), mask=discard)", "pass"),
        ("live = live & (tl.load(active + rows, mask=ok, other=0) != 0)", "pass"),
    ),
    *_in(DEAL_T,
        ("seat_of = (deal_by[:, None] + 1 + from_end % N) % N",
         "seat_of = (deal_by[:, None] + from_end % N) % N"),
        ("+ 1, num_rounds - 1)", "+ 1, num_rounds)",
         "the next round is dealt only while the game goes on, so its index is below the last"),
        ("tl.store(scores + rows * N + seat, tl.full(rows.shape, 0, tl.int64), mask=do & new)",
         "tl.store(scores + rows * N + seat, tl.full(rows.shape, 0, tl.int64), mask=do)"),
        ("tl.store(passed + at, tl.full(at.shape, 0, tl.float32), mask=cards)", "pass"),
        ("under = tl.maximum(tl.load(pile_len + rows, mask=do, other=1) - 1, 0)",
         "under = tl.maximum(tl.load(pile_len + rows, mask=do, other=1), 0)"),
        ("rank += (q_key[:, None] < keys).to(tl.int32)",
         "rank += (q_key[:, None] <= keys).to(tl.int32)"),
        ("ctr += new.to(tl.int64)", "pass"),
    ),
    *_in(FILTER_T,
        ("return ((x << k) | (x >> (13 - k))) & 0x1FFF", "return ((x << k) | (x >> (12 - k))) & 0x1FFF"),
        ("return (x & 0xFF) + (x >> 8)", "return x & 0xFF"),
        ("is_wild = wild == r + 1", "is_wild = wild == r"),
        ("held |= tl.where((c > 0) & ~is_wild[:, None], 1 << r, 0)", "held |= tl.where(c > 0, 1 << r, 0)"),
        ("same_rank |= tl.where(naturals >= 2, 1 << r, 0)", "same_rank |= tl.where(naturals >= 3, 1 << r, 0)"),
        ("tripled |= tl.where(naturals >= 3, 1 << r, 0)", "tripled |= tl.where(naturals >= 2, 1 << r, 0)"),
        ("_rotate13(held, 1) | _rotate13(held, 2) | _rotate13(held, 11)",
         "_rotate13(held, 1) | _rotate13(held, 11)"),
        ("isolated = held & ~near & ~same_rank[:, None]", "isolated = held & ~near"),
        ("needed = _total(2 * ((_bit_count13(isolated) + 1) // 2))",
         "needed = _total(2 * (_bit_count13(isolated) // 2))"),
        ("in_run = in_three | _rotate13(in_three, 1) | _rotate13(in_three, 2)",
         "in_run = in_three | _rotate13(in_three, 1)"),
        ("costly = held & ~(in_run | tripled[:, None])", "costly = held & ~in_run"),
        ("melds = tl.where((suits >= 2) & (ranks >= 2), 2,", "melds = tl.where((suits >= 2) | (ranks >= 2), 2,"),
        ("(wilds >= tl.maximum(needed, melds))", "(wilds > tl.maximum(needed, melds))"),
    ),
    *_in(SOLVER_T,
        ("count = tl.minimum(tl.load(count_ptr), b)\n        mu", "count = b\n        mu",
         "hands past the count are computed as well: the same values in front, only slower"),
        ("m_src = m - take", "m_src = m + take"),
        ("ok_mu = in_mu & (m_src == 0) & (u_src >= 0)", "ok_mu = in_mu & (u_src >= 0)"),
        ("ok = ok_mu[:, None] & (in_b & (naturals >= take))[None, :]", "ok = ok_mu[:, None] & in_b[None, :]"),
        ("row = src * (M * U) + m_src * U + u_src", "row = src * (M * U) + m_src + u_src * M"),
        ("pool = (total - j)[None, :]", "pool = (total - j - 1)[None, :]"),
        ("cand = tl.where(pool == 0, x0, INF)", "cand = x0"),
        ("tl.where(pool == 2, 2 * value, 0)", "tl.where(pool == 2, value, 0)"),
        ("as_set = tl.where(pool == 1, x2, tl.where(pool == 2, x1, INF))",
         "as_set = tl.where(pool == 1, x1, tl.where(pool == 2, x2, INF))"),
        ("mask=(in_u & (u >= 2))[:, None] & ok", "mask=(in_u & (u >= 1))[:, None] & ok"),
        ("FIRST=s == 0", "FIRST=s == 1"),
    ),
    *_in(MOVES_C,
        ("if (top >= 0) passed[seat_row + top] += 1.0f;", "passed[seat_row + top0] += 1.0f;",
         NO_EMPTY_PILE),
        ("stock_len[i] = sl - 1;", "stock_len[i] = sl;"),
        ("known[seat_row + top0] += 1.0f;", "known[seat_row + top0] += 2.0f;"),
        ("if (known[seat_row + card] > 0.0f) known[seat_row + card] -= 1.0f;",
         "known[seat_row + card] -= 1.0f;"),
        ("            taken[i] = -1;", "            ;"),
        ("            turn[i] += 1;", "            ;"),
        ("(went_out[i] < 0 && turn[i] >= max_turns)", "(turn[i] >= max_turns)"),
        ("turn[i] >= max_turns)", "turn[i] > max_turns)"),
        (': p < 0 || p > 1 ? "phase"', ': p < 0 || p > 2 ? "phase"'),
        ('if (drawn < 0 || drawn >= CARDS) bad = "stock";', ";"),
        ("pile[i * shoe + (pl < shoe - 1 ? pl : shoe - 1)] = card;",
         "pile[i * shoe + (pl < shoe - 1 ? pl : shoe - 1)] = a;"),
        ("int64_t s = current[i], next = (s + 1) % n;",
         "int64_t s = current[i], next = (s + n - 1) % n;"),
    ),
    *_in(OBSERVE_C,
        ("if (top >= 0) below[top] -= 1.0f;", ";"),
        ("hot[13 + r - 1] = 1.0f;", "hot[13 + r] = 1.0f;"),
        ("if (wo >= 0) hot[26 + (wo - s + n) % n] = 1.0f;", "if (wo >= 0) hot[26 + wo] = 1.0f;"),
        ("int holding = p == 1 && !game_over[i];", "int holding = p == 1;"),
        ("scaled[n] = (float)((double)stock_len[i] / num_cards);",
         "scaled[n] = (float)((double)stock_len[i] / hand_scale);"),
        ("m[0] = draw && (stock_len[i] > 0 || plen > 1);",
         "m[0] = draw && (stock_len[i] > 0 || plen > 0);"),
        ("if (total - hand[tk] > 0.0f) m[2 + tk] = 0;", "m[2 + tk] = 0;"),
        (': tk < -1 || tk >= CARDS ? "taken"', ': tk < -1 || tk > CARDS ? "taken"'),
        ("bad |= (k > 255u) | (shifted - 8388608.0f != hand[c]);", "bad |= (k > 255u);"),
        ("Py_ssize_t row = (i * n + (s + k) % n) * CARDS;",
         "Py_ssize_t row = (i * n + (s + n - k) % n) * CARDS;"),
    ),
    *_in(DEAL_C,
        ("hand[((deal_by + 1 + from_end % n) % n) * CARDS + cards[p]] += 1.0f;",
         "hand[((deal_by + from_end % n) % n) * CARDS + cards[p]] += 1.0f;"),
        ("            for (int s = 0; s < n; s++) scores[i * n + s] = 0;", "            ;"),
        ("        memset(passed + i * n * CARDS, 0, (size_t)n * CARDS * sizeof(float));", "        ;"),
        ("        taken[i] = -1;\n        counter[i] = ctr + 1;", "        counter[i] = ctr + 1;"),
        ("            ctr += 1;\n            for", "            for"),
        ("        counter[i] += 1;", "        ;"),
        ("int64_t i = rows[j], under = pile_len[i] > 0 ? pile_len[i] - 1 : 0;",
         "int64_t i = rows[j], under = pile_len[i];"),
        (': dealer[i] < 0 || dealer[i] >= n ? "dealer" : NULL;', ": NULL;"),
        ("        int64_t up = cards[shoe - 1 - dealt];", "        int64_t up = cards[shoe - dealt];"),
    ),
]
"""The hand mutants, by file."""


def _build(dest: Path) -> bool:
    """Rebuild the C extensions in ``dest``; whether it compiled."""
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=dest,
                          capture_output=True, text=True)
    return done.returncode == 0


def run_mutant(mutant: HandMutant, dest: Path, timeout: float) -> str:
    """Apply ``mutant`` in the scratch copy ``dest``, run its tests (stopping at the first failure),
    restore the file; returns ``killed``, ``survived``, ``timeout`` or ``build failed``."""
    path = dest / mutant.file
    original = path.read_text()
    if original.count(mutant.old) != 1:
        raise ValueError(f"{mutant.file}: {mutant.old!r} occurs {original.count(mutant.old)} times, not once")
    path.write_text(original.replace(mutant.old, mutant.new))
    try:
        if mutant.file.endswith(".c") and not _build(dest):
            return "build failed"
        env = {**os.environ, "PYTHONPATH": str(dest), "OMP_NUM_THREADS": "1"}
        try:
            done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                                   *mutant.tests], cwd=dest, env=env, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout"
        return "survived" if done.returncode == 0 else "killed"
    finally:
        path.write_text(original)  # newer than the mutant's build: the next build compiles it again
        if mutant.file.endswith(".c"):
            _build(dest)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    files = sorted({m.file for m in MUTANTS})
    parser.add_argument("--files", nargs="+", default=files, metavar="FILE", help=f"of {files} (default: all)")
    parser.add_argument("--work", default="/tmp/tt-hand-mutants", help="scratch folder (default /tmp/tt-hand-mutants)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a mutant's tests may take (default 600)")
    parser.add_argument("--list", action="store_true", help="print the mutants and stop")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.files) - set(files))
    if unknown:
        parser.error(f"--files {unknown}: not files with hand mutants; use some of {files}")
    chosen = [m for m in MUTANTS if m.file in args.files]
    if args.list:
        for m in chosen:
            print(f"{m.file}: {m.old!r} -> {m.new!r}" + (f"  (equivalent: {m.equivalent})" if m.equivalent else ""))
        return
    dest = Path(args.work)
    copy_checkout(dest)
    if not _build(dest):
        sys.exit(f"error: the C extensions do not build in {dest}")
    unexpected = 0
    for m in chosen:
        status = run_mutant(m, dest, args.timeout)
        expected = "survived" if m.equivalent else "killed"
        unexpected += status != expected
        print(f"{status:8}{'' if status == expected else ' (UNEXPECTED)'}  {m.file}: {m.old.strip()!r} -> "
              f"{m.new.strip()!r}", flush=True)
    print(f"{len(chosen)} mutants: {unexpected} not as expected")
    sys.exit(1 if unexpected else 0)


if __name__ == "__main__":
    main()
