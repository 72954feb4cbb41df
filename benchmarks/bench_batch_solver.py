"""The batched meld solver (tt_env.batch.solver): exactness against the scalar C solver, and speed.

Check: random hands (3..14 cards, 1-4 decks, every wild rank, both ace rules, both
``meld_needs_natural``), 16 groups of (decks, aces, meld_needs_natural). The C batch is compared
with the scalar solver on ``--hands`` hands; the tensor program (``--backends``: ``torch``, and
``triton``, its fused kernels) on ``--torch-hands`` per group (in growing chunks, up to
``--torch-seconds`` per group: it is slow on a CPU, the GPU is its home). Any mismatch is
printed and the exit status is 1.

Filter: ``could_meld_completely`` (the go-out check's cheap filter) must keep every hand that
melds completely, on ``--filter-hands`` hands built mostly from melds (with the C batch as judge),
and the go-out check ``melds_completely`` must say exactly which do (on the random hands too).

Speed: hands/s of the scalar C solver called in a Python loop, of the C batch (int64 and the
engine's uint8 counts), of the go-out check and of each tensor backend at each batch size (1 deck,
aces low, the 2-player game), medians over ``--repeats``.

    python benchmarks/bench_batch_solver.py                        # 1,000,000 hands, CPU
    python benchmarks/bench_batch_solver.py --device cuda --torch-hands 20000
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time

import numpy as np
import torch
from _common import device_arg  # the script's folder is first on sys.path

from tt_env.batch import solver_triton
from tt_env.batch.go_out import melds_completely
from tt_env.batch.go_out_filter import could_meld_completely
from tt_env.batch.solver import least_penalty
from tt_env.cli_checks import int_at_least, int_list, positive_float, seed_arg
from tt_env.engine import melds
from tt_env.engine.rules import Rules


def random_counts(rng: np.random.Generator, num: int, decks: int, low: int = 3, high: int = 14) -> np.ndarray:
    """(num, 52) counts of hands of low..high cards dealt from ``decks`` shuffled decks."""
    sizes = rng.integers(low, high + 1, num)
    order = np.argsort(rng.random((num, 52 * decks)), axis=1) % 52     # each row: a shuffled shoe
    take = np.arange(52 * decks)[None, :] < sizes[:, None]
    rows = np.broadcast_to(np.arange(num)[:, None], order.shape)
    counts = np.zeros((num, 52), np.int64)
    np.add.at(counts, (rows[take], order[take]), 1)
    return counts


def melded_counts(rng: np.random.Generator, num: int, decks: int) -> tuple[np.ndarray, np.ndarray]:
    """(num, 52) counts of hands built mostly from melds, and their wild ranks (0..13).

    Each hand takes runs (3 to 6 ranks of a suit, the ace next to the king too) and sets (3 to 5
    of a rank), with a fifth of their cards swapped for a wild, and now and then a stray card,
    up to 3..14 cards (at most ``decks`` copies of a card). Most of them meld completely, many
    nearly: the hands the go-out filter must keep, and the ones it may drop."""
    counts = np.zeros((num, 52), np.int64)
    wilds = rng.integers(0, 14, num)
    for i in range(num):
        c, wild, size = counts[i], int(wilds[i]), int(rng.integers(3, 15))
        while c.sum() < size:
            kind = rng.random()
            if kind < 0.85:
                run = kind < 0.45
                suit, first = int(rng.integers(4)), int(rng.integers(13))
                for k in range(int(rng.integers(3, 7 if run else 6))):
                    if wild and rng.random() < 0.2:
                        c[int(rng.integers(4)) * 13 + wild - 1] += 1
                    else:
                        c[(suit * 13 + (first + k) % 13) if run else (int(rng.integers(4)) * 13 + first)] += 1
            else:
                c[int(rng.integers(52))] += 1
        np.minimum(c, decks, out=c)
        if c.sum() > 14:
            c[:] = np.bincount(rng.choice(np.repeat(np.arange(52), c), 14, replace=False), minlength=52)
    return counts, wilds


def check_filter(hands: int, seed: int) -> int:
    """Hands that meld completely (C solver) but ``could_meld_completely`` drops: it must be none.
    The go-out check (``melds_completely``: the filter, then the solver, one C loop) must say
    exactly which hands meld completely."""
    rng = np.random.default_rng(seed)
    groups = list(itertools.product((1, 2, 3, 4), (False, True), (False, True)))
    per_group = -(-hands // len(groups))
    bad = zero = dropped = wrong = 0
    for decks, aces_high, nn in groups:
        counts, wilds = melded_counts(rng, per_group, decks)
        counts_t, wilds_t = torch.from_numpy(counts), torch.from_numpy(wilds)
        rules = rules_for(decks, aces_high, nn)
        zero_penalty = least_penalty(counts_t, wilds_t, rules, backend="c") == 0
        kept = could_meld_completely(counts_t, wilds_t)
        for i in torch.nonzero(zero_penalty & ~kept).flatten()[:5].tolist():
            print(f"FILTER DROPPED A HAND THAT MELDS: decks={decks} aces_high={aces_high} meld_needs_natural={nn} "
                  f"hand={hands_of(counts[i:i + 1])[0]} wild={wilds[i]}")
        check = melds_completely(counts_t.to(torch.uint8), wilds_t, rules, backend="c")
        for i in torch.nonzero(check != zero_penalty).flatten()[:5].tolist():
            print(f"GO-OUT CHECK MISMATCH: decks={decks} aces_high={aces_high} meld_needs_natural={nn} "
                  f"hand={hands_of(counts[i:i + 1])[0]} wild={wilds[i]}: {bool(check[i])}")
        bad += int((zero_penalty & ~kept).sum())
        wrong += int((check != zero_penalty).sum())
        zero += int(zero_penalty.sum())
        dropped += int((~kept).sum())
    print(f"go-out filter: {len(groups) * per_group:,} hands mostly of melds, {zero:,} meld completely, the filter "
          f"drops {dropped:,}, of them hands that meld: {bad}; go-out check (melds_completely) mismatches: {wrong}",
          flush=True)
    return bad + wrong


def hands_of(counts: np.ndarray) -> list[list[int]]:
    cards = np.arange(52)
    return [np.repeat(cards, row).tolist() for row in counts]


def rules_for(decks: int, aces_high: bool, needs_natural: bool) -> Rules:
    return Rules(num_players=2 if decks == 1 else 4, decks=decks, aces="high_or_low" if aces_high else "low",
                 meld_needs_natural=needs_natural)


def check(args: argparse.Namespace, device: torch.device) -> int:
    """Mismatches of the C batch, the go-out check and the torch program against the scalar solver."""
    rng = np.random.default_rng(args.seed)
    groups = list(itertools.product((1, 2, 3, 4), (False, True), (False, True)))
    per_group = -(-args.hands // len(groups))
    bad = 0
    for decks, aces_high, nn in groups:
        counts = random_counts(rng, per_group, decks)
        wilds = rng.integers(0, 14, per_group)
        rules = rules_for(decks, aces_high, nn)
        want = np.array([melds.least_penalty(h, int(w), aces_high, nn)
                         for h, w in zip(hands_of(counts), wilds, strict=True)])
        c = least_penalty(torch.from_numpy(counts), torch.from_numpy(wilds), rules, backend="c").numpy()
        limit = min(per_group, args.torch_hands)
        zero = melds_completely(torch.from_numpy(counts).to(torch.uint8), torch.from_numpy(wilds), rules,
                                backend="c").numpy()
        results, done = [("c batch", c, want), ("go-out check", zero, want == 0)], []
        for backend in args.backends:
            n_torch, size, torch_s = 0, 16, 0.0
            t = np.zeros(0, np.int64)
            while n_torch < limit and torch_s < args.torch_seconds:   # growing chunks within the time budget
                part = slice(n_torch, min(limit, n_torch + size))
                start = time.perf_counter()
                got = least_penalty(torch.from_numpy(counts[part]).to(device),
                                    torch.from_numpy(wilds[part]).to(device), rules, backend=backend).cpu().numpy()
                torch_s += time.perf_counter() - start
                t = np.concatenate([t, got])
                n_torch, size = part.stop, size * 2
            results.append((backend, t, want[:n_torch]))
            done.append(f"{backend} {n_torch:,} hands ({n_torch / max(torch_s, 1e-9):,.0f} hands/s)")
        for name, got, ref in results:
            for i in np.nonzero(got != ref)[0][:5]:
                print(f"MISMATCH {name}: decks={decks} aces_high={aces_high} meld_needs_natural={nn} "
                      f"hand={hands_of(counts[i:i + 1])[0]} wild={wilds[i]}: {got[i]} vs scalar {ref[i]}")
            bad += int((got != ref).sum())
        print(f"check decks={decks} aces={'high_or_low' if aces_high else 'low':11} natural={nn!s:5}: "
              f"c batch {per_group:,} hands, {', '.join(done)}, mismatches so far {bad}", flush=True)
    return bad


def median_rate(fn, hands: int, repeats: int) -> float:
    """Median hands/s of ``fn()`` (which solves ``hands`` hands) over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return hands / statistics.median(times)


def speed(args: argparse.Namespace, device: torch.device) -> None:
    rng = np.random.default_rng(args.seed + 1)
    rules = rules_for(1, False, False)
    biggest = max(args.batch_sizes + args.torch_batch_sizes)
    counts = random_counts(rng, biggest, 1)
    wilds = rng.integers(3, 14, biggest)
    hands = hands_of(counts)
    n_scalar = min(biggest, 100_000)
    lp = melds.least_penalty
    scalar = median_rate(lambda: [lp(h, int(w), False, False)
                                  for h, w in zip(hands[:n_scalar], wilds[:n_scalar], strict=True)],
                         n_scalar, args.repeats)
    print(f"\nspeed, 1 deck, aces low, hands of 3..14 cards, median of {args.repeats}:")
    print(f"  scalar C solver, Python loop: {scalar:12,.0f} hands/s")
    tc, tw = torch.from_numpy(counts), torch.from_numpy(wilds)
    for b in args.batch_sizes:
        rate = median_rate(lambda: least_penalty(tc[:b], tw[:b], rules, backend="c", check=False), b, args.repeats)
        print(f"  C batch, batch {b:6}:        {rate:12,.0f} hands/s ({rate / scalar:.2f}x scalar)")
    small = tc.to(torch.uint8)   # the engine's counts
    for b in args.batch_sizes:
        rate = median_rate(lambda: least_penalty(small[:b], tw[:b], rules, backend="c", check=False), b,
                           args.repeats)
        print(f"  C batch, uint8, batch {b:6}: {rate:12,.0f} hands/s ({rate / scalar:.2f}x scalar)")
    for b in args.batch_sizes:   # the go-out check: the filter drops most random hands unsolved
        rate = median_rate(lambda: melds_completely(small[:b], tw[:b], rules, backend="c", check=False), b,
                           args.repeats)
        print(f"  go-out check (melds_completely, C), uint8, batch {b:6}: {rate:12,.0f} hands/s "
              f"({rate / scalar:.2f}x scalar)")
    dc, dw = tc.to(device), tw.to(device)
    for backend in args.backends:
        for b in args.torch_batch_sizes:
            def run(b: int = b, backend: str = backend) -> torch.Tensor:
                return least_penalty(dc[:b], dw[:b], rules, backend=backend, check=False)  # the solver alone

            run()                                                    # warm-up (plan, kernels)
            sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
            rate = median_rate(lambda: (run(), sync()), b, args.repeats)
            print(f"  {backend} on {device.type}, batch {b:6}: {rate:12,.0f} hands/s ({rate / scalar:.3f}x scalar)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int_at_least(1), default=1_000_000,
                        help="hands checked (C batch), all groups together")
    parser.add_argument("--torch-hands", type=int_at_least(0), default=None,
                        help="hands per group checked with the torch program (default 20,000 on cuda, 30 on cpu)")
    parser.add_argument("--torch-seconds", type=positive_float(), default=60.0,
                        help="time budget of the torch check per group (it stops after the chunk that passes it)")
    parser.add_argument("--device", type=device_arg, default="cpu",
                        help="device of the torch program: cpu, cuda, cuda:1 ...")
    parser.add_argument("--batch-sizes", type=int_list(1), default=[1024, 16384], help="C batch sizes, comma-separated")
    parser.add_argument("--torch-batch-sizes", type=int_list(1), default=None,
                        help="torch batch sizes (default 1024,16384 on cuda, 256 on cpu)")
    parser.add_argument("--backends", default=None,
                        help="tensor backends checked and timed, comma-separated: torch, triton "
                             "(default torch, and triton too on cuda when it is installed)")
    parser.add_argument("--repeats", type=int_at_least(1), default=3)
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--skip-check", action="store_true")
    parser.add_argument("--filter-hands", type=int_at_least(0), default=200_000,
                        help="hands built from melds on which the go-out filter must keep every hand that melds")
    args = parser.parse_args()
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if melds.solver_backend() != "c":
        parser.error("the scalar C solver is the reference: build it (python setup.py build_ext --inplace)")
    args.torch_hands = args.torch_hands if args.torch_hands is not None else (20_000 if cuda else 30)
    default_backends = "torch,triton" if cuda and solver_triton.available() else "torch"
    args.backends = (args.backends or default_backends).split(",")
    for backend in args.backends:
        if backend not in ("torch", "triton"):
            parser.error(f"--backends: {backend!r} is not allowed: use torch or triton")
        if backend == "triton" and not solver_triton.available():
            parser.error("--backends triton: Triton is not installed (pip install triton)")
    args.torch_batch_sizes = args.torch_batch_sizes or ([1024, 16384] if cuda else [256])
    print(f"torch {torch.__version__}, device {device}"
          + (f" ({torch.cuda.get_device_name(device)})" if cuda else "") + f", torch threads {torch.get_num_threads()}")
    speed(args, device)
    print()
    bad = 0 if args.skip_check else check(args, device) + check_filter(args.filter_hands, args.seed)
    if bad:
        print(f"FAILED: {bad} mismatches")
        return 1
    print("no mismatches" if not args.skip_check else "check skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
