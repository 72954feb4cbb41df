"""Fit the belief network to positions labelled with the truth (``training/belief_data.py``).

    python -m training.train_belief --data data/belief_2p_train.npz --out runs/belief_2p/belief.pt

The loss is the negative log-likelihood of each opponent's true unknown cards under the hand
model of :mod:`models.belief_math` (Fisher's noncentral hypergeometric distribution with the
network's per-card weights), per hidden card. A share of the games (``--val-share``, whole
games) is held out; the epoch with the best held-out loss is kept, and its held-out
cross-entropy per hidden card (bits) is printed next to the uniform belief's. ``--device``
(auto, cpu, cuda, cuda:K; ``training.common.device``) is where the network trains: the rows are built on
the CPU and each batch is moved there; the belief is saved from the CPU (``docs/devices.md``).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from models.belief import Belief, load_belief, save_belief
from models.checkpoint import CheckpointError
from models.belief_math import expected_counts, log_likelihood
from models.belief_net import BeliefNet, belief_inputs, unseen_and_unknown
from training import belief_data
from training.data.cli import check_data_files
from training.common.device import add_device_arg, parsed_device
from tt_env.cli_checks import CommandParser, int_at_least, output_file_problem, positive_float, seed_arg
from tt_env.engine.rules import Rules


class Rows:
    """The network's inputs and targets of a data file, one row per (position, opponent)."""

    def __init__(self, arrays: dict[str, np.ndarray], rules: Rules, history: bool) -> None:
        n = rules.num_players
        hist = (arrays["passed"], arrays["recent"]) if history and "passed" in arrays else None
        planes, scalars = belief_inputs(arrays["obs"], n, rules.num_decks, hist)
        if not history:
            planes[:, 6:8] = 0.0
            planes[:, 10] = 0.0
            scalars[:, 21] = 0.0
        unseen, unknown = unseen_and_unknown(arrays["obs"], n, rules.num_decks)
        opp = n - 1
        self.planes = torch.from_numpy(planes)
        self.scalars = torch.from_numpy(scalars)
        self.copies = torch.from_numpy(np.repeat(unseen, opp, axis=0))
        self.counts = torch.from_numpy(unknown.reshape(-1))
        self.hands = torch.from_numpy(arrays["label"].reshape(-1, 52).astype(np.int64))
        self.game = np.repeat(arrays["game"], opp)
        self.progress = np.repeat(arrays["turn"], opp)

    def take(self, index: np.ndarray, device: torch.device | None = None) -> tuple[torch.Tensor, ...]:
        """The rows of ``index`` (on ``device`` when given: they are built on the CPU)."""
        i = torch.from_numpy(index)
        batch = self.planes[i], self.scalars[i], self.copies[i], self.counts[i], self.hands[i]
        return batch if device is None else tuple(t.to(device) for t in batch)


def _device(net: torch.nn.Module) -> torch.device:
    return next(net.parameters()).device


def nll_per_card(net: BeliefNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    planes, scalars, copies, counts, hands = batch
    logits = net(planes, scalars)
    keep = counts > 0
    ll = log_likelihood(logits[keep], copies[keep], counts[keep], hands[keep])
    return -ll.sum() / counts[keep].sum().clamp(min=1)


def bits_per_card(probs: np.ndarray, hands: np.ndarray, counts: np.ndarray) -> float:
    """Mean over hidden cards of ``-log2(E[k_c] / n)`` at each true card ``c`` (the module's metric)."""
    keep = counts > 0
    share = probs[keep] / counts[keep, None]
    with np.errstate(divide="ignore"):
        logs = np.where(hands[keep] > 0, np.log2(np.maximum(share, 1e-300)), 0.0)
    return float(-(hands[keep] * logs).sum() / counts[keep].sum())


def predict(net: BeliefNet, rows: Rows, index: np.ndarray, batch: int = 4096) -> np.ndarray:
    out = []
    net.eval()
    with torch.no_grad():
        for s in range(0, len(index), batch):
            planes, scalars, copies, counts, _ = rows.take(index[s:s + batch], _device(net))
            out.append(expected_counts(net(planes, scalars), copies, counts).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 52))


def train(rows: Rows, net: BeliefNet, train_index: np.ndarray, val_index: np.ndarray, *, epochs: int, lr: float,
          batch: int, weight_decay: float, seed: int, log=print) -> tuple[BeliefNet, list[dict]]:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    steps = epochs * max(1, len(train_index) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    history, best, best_state = [], float("inf"), None
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(train_index)
        t0, losses = time.perf_counter(), []
        for s in range(0, max(1, len(order) - batch + 1), batch):  # full batches (one, if fewer rows)
            loss = nll_per_card(net, rows.take(order[s:s + batch], _device(net)))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
        net.eval()
        with torch.no_grad():
            val = [float(nll_per_card(net, rows.take(val_index[s:s + 8192], _device(net))))
                   * len(val_index[s:s + 8192]) for s in range(0, len(val_index), 8192)]
        val_loss = sum(val) / max(1, len(val_index))
        history.append({"epoch": epoch + 1, "train_nll": float(np.mean(losses)), "val_nll": val_loss,
                        "seconds": time.perf_counter() - t0})
        log(f"epoch {epoch + 1}: train nll {np.mean(losses):.4f}  val nll {val_loss:.4f}  "
            f"({time.perf_counter() - t0:.0f} s)")
        if val_loss < best:
            best, best_state = val_loss, {k: v.clone() for k, v in net.state_dict().items()}
    if best_state is not None:
        net.load_state_dict(best_state)
    return net.eval(), history


def main(argv: Sequence[str] | None = None) -> Path:
    parser = CommandParser(prog="python -m training.train_belief", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", action="extend", required=True,
                        help="belief data files (.npz) of one player count (--data may be given more than once)")
    parser.add_argument("--out", required=True, help="the belief checkpoint to write (.pt, with its .json)")
    parser.add_argument("--overwrite", action="store_true", help="replace --out (and its .json) if it exists")
    parser.add_argument("--epochs", type=int_at_least(1), default=8)
    parser.add_argument("--lr", type=positive_float(1.0), default=2e-3)
    parser.add_argument("--batch", type=int_at_least(1), default=1024)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--width", type=int_at_least(1, 512), default=48, help="channels, 1..512 (default 48)")
    parser.add_argument("--blocks", type=int_at_least(1, 512), default=3, help="blocks, 1..512 (default 3)")
    parser.add_argument("--no-history", action="store_true", help="do not read the public history planes")
    parser.add_argument("--init", default=None,
                        help="start from the weights of this belief (any player count: the weights are per opponent)")
    parser.add_argument("--val-share", type=float, default=0.1)
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--threads", type=int_at_least(1, 1024), default=1, help="torch threads, 1..1024 (default 1)")
    add_device_arg(parser, config_key=False)
    args = parser.parse_args(argv)
    check_data_files(parser, args.data)
    device = parsed_device(parser, args)
    problem = output_file_problem(args.out, suffixes=(".pt",), overwrite=True)  # the pair is checked below
    if problem:
        parser.error(f"--out {args.out}: {problem}")
    if not args.overwrite and any(os.path.lexists(p) for p in (args.out, Path(args.out).with_suffix(".json"))):
        parser.error(f"--out {args.out}: a belief is already there: give --overwrite to replace it, or another name")
    if not (math.isfinite(args.weight_decay) and args.weight_decay >= 0.0):
        parser.error(f"--weight-decay {args.weight_decay} is not allowed: use a number >= 0")
    if not 0.0 < args.val_share < 1.0:
        parser.error(f"--val-share {args.val_share} is not allowed: use a share in (0, 1)")
    torch.set_num_threads(args.threads)
    try:
        parts = [belief_data.load(p) for p in args.data]
        rules = Rules.from_dict(parts[0][1]["rules"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.error(f"--data: {exc}")
    for path, (_, meta) in zip(args.data[1:], parts[1:], strict=True):
        if meta["rules"] != parts[0][1]["rules"]:
            parser.error(f"--data {path}: made under other rules than {args.data[0]}: give files of one rule set")
    arrays = {k: np.concatenate([a[k] for a, _ in parts]) for k in belief_data.ARRAYS}
    offset = 0
    games = []
    for a, _ in parts:  # games of different files stay apart
        games.append(a["game"].astype(np.int64) + offset)
        offset = int(games[-1].max()) + 1
    arrays["game"] = np.concatenate(games)
    rows = Rows(arrays, rules, history=not args.no_history)
    ids = np.unique(rows.game)
    val_games = np.random.default_rng(args.seed).choice(ids, size=max(1, int(len(ids) * args.val_share)),
                                                        replace=False)
    is_val = np.isin(rows.game, val_games)
    train_index, val_index = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    if not len(train_index) or not len(val_index):
        parser.error(f"--data holds {len(ids)} game(s): give more, so that some are held out (--val-share) "
                     f"and some are trained on")
    net = BeliefNet(rules.num_players, width=args.width, blocks=args.blocks)
    if args.init:
        try:
            start = load_belief(args.init).net
        except (CheckpointError, OSError) as exc:
            parser.error(f"--init: {exc}")
        if (start.width, start.blocks_count) != (args.width, args.blocks):
            parser.error(f"--init {args.init}: its network is width {start.width}, blocks {start.blocks_count}; "
                         f"give --width {start.width} --blocks {start.blocks_count}")
        net.load_state_dict(start.state_dict())
    net = net.to(device)
    t0 = time.perf_counter()
    net, history = train(rows, net, train_index, val_index, epochs=args.epochs, lr=args.lr, batch=args.batch,
                         weight_decay=args.weight_decay, seed=args.seed)
    seconds = time.perf_counter() - t0
    probs = predict(net, rows, val_index)
    net = net.cpu()  # the belief is kept, saved and used on the CPU
    hands, counts = rows.hands[val_index].numpy(), rows.counts[val_index].numpy()
    copies = rows.copies[val_index].numpy()
    uniform = copies * (counts / np.maximum(copies.sum(axis=1), 1))[:, None]
    model_bits, uniform_bits = bits_per_card(probs, hands, counts), bits_per_card(uniform, hands, counts)
    print(f"held-out cross-entropy per hidden card: model {model_bits:.4f} bits, uniform {uniform_bits:.4f} bits "
          f"(gain {uniform_bits - model_bits:.4f})")
    belief = Belief(net, rules, history=not args.no_history)
    save_belief(args.out, belief, extra={"data": [str(p) for p in args.data], "epochs": history,
                                         "train_seconds": seconds, "val_bits": model_bits,
                                         "val_uniform_bits": uniform_bits,
                                         "args": {k: v for k, v in vars(args).items() if k not in ("data", "out")}})
    print(f"-> {args.out}")
    return Path(args.out)


if __name__ == "__main__":
    main()
