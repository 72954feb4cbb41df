"""Fit a policy network to oracle targets (``training/oracle_data.py``): the warm start of learned agents.

    python -m training.imitate --data data/oracle_2p.npz --out runs/imitate_2p/warm.pt

The network is ``CardNet`` with solver and expert features (``models.networks``), which before
training plays exactly as expert-v0. At each recorded position the targets say what expert-v0's
candidate moves are worth when every card is seen; the loss is the cross-entropy between the
network's policy over those candidates and ``softmax(value / temperature)``, so the network keeps
the expert's order where the values do not tell the candidates apart and leaves it where they do,
as far as the observation predicts. Positions are split by their order in the file (whole games:
the data script writes game after game): the last ``--validation`` share is held out, and after
each epoch the held-out *oracle gain* is printed, the mean value of the network's most probable
candidate minus that of expert-v0's own choice. Its rollouts are independent of the network, so it
is an unbiased estimate of what the network gains per decision over expert-v0 (one step, with
expert-v0 playing on). The epoch with the best held-out gain is saved in the checkpoint format of
``models.checkpoint``; the value head is left as it is (PPO's critic warm-up trains it).
``--device`` (auto, cpu, cuda, cuda:K; ``training.common.device``) is where the network trains: the
features are computed on the CPU and moved there; the checkpoint is saved from the CPU.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from models.checkpoint import save_checkpoint, sidecar_path
from models.networks import CardNet, PolicyValueNet, build_network
from training.common.config import ConfigError, check_network_size
from training.data.cli import check_data_files
from training.common.device import add_device_arg, parsed_device, resolve_device
from tt_env import jsonio
from tt_env.cli_checks import CommandParser, int_at_least, output_file_problem, positive_float, seed_arg
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION

DEFAULT_NET = {"channels": 32, "blocks": 1, "hidden": 64, "solver_features": True, "expert_features": True}


def load_oracle(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of an oracle ``.npz`` (no pickles), with ``meta`` parsed."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    missing = sorted({"meta", "obs", "mask", "cands", "q", "round", "phase"} - set(arrays))
    if missing:
        raise ValueError(f"{path} lacks the array(s) {missing}: not a file of python -m training.oracle_data")
    arrays["meta"] = jsonio.loads(str(arrays["meta"]), f"the meta of {path}")
    if not isinstance(arrays["meta"], dict) or not isinstance(arrays["meta"].get("rules"), dict):
        raise ValueError(f"the meta of {path} holds no rules: not a file of python -m training.oracle_data")
    return arrays


def candidate_logits(net: PolicyValueNet, x: torch.Tensor, cands: torch.Tensor) -> torch.Tensor:
    """Logits ``(B, k)`` of the candidate actions (``-inf`` where ``cands`` is -1)."""
    logits, _ = net.logits_and_value(x)
    picked = logits.gather(1, cands.clamp(min=0).long())
    return picked.masked_fill(cands < 0, -math.inf)


def oracle_gain(net: PolicyValueNet, x: torch.Tensor, cands: torch.Tensor,
                q: torch.Tensor) -> tuple[float, float, float]:
    """(mean gain of the network's top candidate over the first, its 95% half-width, deviation rate)."""
    with torch.no_grad():
        choice = candidate_logits(net, x, cands).argmax(dim=1)
    gain = (q.gather(1, choice[:, None])[:, 0] - q[:, 0]).cpu().numpy().astype(np.float64)
    half = 1.96 * gain.std(ddof=1) / math.sqrt(len(gain)) if len(gain) > 1 else float("nan")
    return float(gain.mean()), float(half), float((choice != 0).float().mean())


def validation_split(n: int, validation: float) -> int:
    """How many of ``n`` positions (the first) are trained on; the last ``n - split`` are held out."""
    return int(round(n * (1.0 - validation)))


def fit(data: dict[str, np.ndarray], *, net_kwargs: dict, epochs: int, batch: int, lr: float, temperature: float,
        validation: float, seed: int, anchor: float = 0.0, log=print, device: str | torch.device = "cpu"
        ) -> tuple[PolicyValueNet, dict]:
    """Train a fresh network on ``data``; returns it (best held-out epoch, on the CPU) and the training history.

    ``device``: where the network trains (``training.common.device``: auto, cpu, cuda, cuda:K); the
    features are computed on the CPU and moved there.

    ``anchor`` moves that share of each target onto expert-v0's own choice: with noisy values,
    the network then leaves the expert only where the values favour another move consistently.
    """
    if not 0.0 <= anchor < 1.0:
        raise ValueError(f"anchor={anchor!r} is not allowed: use a share in [0, 1)")
    n = len(data["obs"])
    split = validation_split(n, validation)
    if not 0 < split < n:
        raise ValueError(f"validation={validation} leaves {split} of {n} positions to train on and {n - split} "
                         f"held out: each needs at least one")
    device = device if isinstance(device, torch.device) else resolve_device(device)
    torch.manual_seed(seed)
    rules = Rules.from_dict(data["meta"]["rules"])
    net = build_network("cardnet", num_players=rules.num_players, **{**CardNet.rule_kwargs(rules), **net_kwargs})
    t0 = time.perf_counter()
    x = torch.as_tensor(net.preprocess(data["obs"], data["mask"]), device=device)
    log(f"features of {len(x)} positions in {time.perf_counter() - t0:.0f} s")
    net = net.to(device)
    cands = torch.as_tensor(data["cands"].astype(np.int64), device=device)
    q = torch.as_tensor(data["q"], device=device)
    valid = cands >= 0
    target = torch.softmax((q / temperature).masked_fill(~valid, -math.inf), dim=1) * (1.0 - anchor)
    target[:, 0] += anchor
    train_idx, val_idx = torch.arange(split), torch.arange(split, n, device=device)
    gen = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    history = []
    gain, half, dev = oracle_gain(net, x[val_idx], cands[val_idx], q[val_idx])
    history.append({"epoch": 0, "val_gain": gain, "val_gain_ci95": half, "val_deviation": dev})
    log(f"epoch 0 (expert-v0 as it starts): held-out gain {gain:+.4f} ± {half:.4f}, deviations {dev:.1%}")
    best = (gain, {k: v.clone() for k, v in net.state_dict().items()}, 0)
    for epoch in range(1, epochs + 1):
        net.train()
        order = train_idx[torch.randperm(len(train_idx), generator=gen)].to(device)  # drawn on the CPU generator
        losses = []
        for start in range(0, len(order), batch):
            idx = order[start:start + batch]
            logp = torch.log_softmax(candidate_logits(net, x[idx], cands[idx]), dim=1)
            loss = -(target[idx] * logp.masked_fill(~valid[idx], 0.0)).sum(dim=1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
        net.eval()
        gain, half, dev = oracle_gain(net, x[val_idx], cands[val_idx], q[val_idx])
        history.append({"epoch": epoch, "train_loss": float(np.mean(losses)), "val_gain": gain,
                        "val_gain_ci95": half, "val_deviation": dev})
        log(f"epoch {epoch}: loss {np.mean(losses):.4f}, held-out gain {gain:+.4f} ± {half:.4f}, "
            f"deviations {dev:.1%}")
        if gain > best[0]:
            best = (gain, {k: v.clone() for k, v in net.state_dict().items()}, epoch)
    net.load_state_dict(best[1])
    log(f"kept epoch {best[2]} (held-out gain {best[0]:+.4f})")
    report = {"history": history, "best_epoch": best[2], "positions": n, "validation_positions": n - split}
    return net.cpu().eval(), report


def main(argv: Sequence[str] | None = None) -> Path:
    parser = CommandParser(prog="python -m training.imitate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", action="extend", required=True,
                        help="oracle .npz files (same rules; --data may be given more than once)")
    parser.add_argument("--out", required=True, help="checkpoint to write (.pt, with its .json sidecar)")
    parser.add_argument("--overwrite", action="store_true", help="replace --out (and its .json) if it exists")
    parser.add_argument("--epochs", type=int_at_least(1), default=10, help="passes over the data (default 10)")
    parser.add_argument("--batch", type=int_at_least(1), default=256, help="minibatch size (default 256)")
    parser.add_argument("--lr", type=positive_float(), default=1e-3, help="Adam learning rate (default 1e-3)")
    parser.add_argument("--temperature", type=positive_float(), default=2.0,
                        help="points per unit of the target's logits (default 2)")
    parser.add_argument("--anchor", type=float, default=0.0,
                        help="share of each target put on expert-v0's own choice, in [0, 1) (default 0)")
    parser.add_argument("--validation", type=positive_float(0.9), default=0.1,
                        help="share of positions held out, from the end (default 0.1)")
    parser.add_argument("--channels", type=int_at_least(1), default=DEFAULT_NET["channels"])
    parser.add_argument("--blocks", type=int_at_least(0), default=DEFAULT_NET["blocks"])
    parser.add_argument("--hidden", type=int_at_least(1), default=DEFAULT_NET["hidden"])
    parser.add_argument("--seed", type=seed_arg, default=0)
    add_device_arg(parser, config_key=False)
    args = parser.parse_args(argv)
    check_data_files(parser, args.data)
    device = parsed_device(parser, args)
    if not 0.0 <= args.anchor < 1.0:
        parser.error(f"--anchor {args.anchor} is not allowed: use a share in [0, 1)")
    problem = output_file_problem(args.out, suffixes=(".pt",), overwrite=args.overwrite)
    sidecar = sidecar_path(args.out)
    if not problem and (sidecar_problem := output_file_problem(sidecar, overwrite=args.overwrite)):
        problem = f"its sidecar {sidecar.name}: {sidecar_problem}"
    if problem:
        parser.error(f"--out {args.out}: {problem}")
    try:
        parts = [load_oracle(p) for p in args.data]
    except (OSError, ValueError, KeyError) as exc:
        parser.error(f"cannot read the oracle data: {exc}")
    rules = {json.dumps(p["meta"]["rules"], sort_keys=True) for p in parts}
    if len(rules) > 1:
        parser.error(f"the oracle files were made under different rules: {sorted(rules)}")
    data = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "mask", "cands", "q", "round", "phase")}
    data["meta"] = parts[0]["meta"]
    torch.set_num_threads(1)
    net_kwargs = dict(DEFAULT_NET, channels=args.channels, blocks=args.blocks, hidden=args.hidden)
    try:  # bounded before anything is allocated, as in the training configs
        check_network_size("cardnet", {"num_players": int(data["meta"]["rules"].get("num_players", 2)), **net_kwargs},
                           "--channels/--blocks/--hidden")
    except (ConfigError, TypeError, ValueError) as exc:
        parser.error(str(exc))
    n = len(data["obs"])
    split = validation_split(n, args.validation)
    if not 0 < split < n:
        parser.error(f"--data holds {n} position(s): --validation {args.validation} would train on {split} and "
                     f"hold out {n - split}; give more data or another --validation, so that some are held out "
                     f"and some are trained on")
    net, report = fit(data, net_kwargs=net_kwargs, epochs=args.epochs, batch=args.batch, lr=args.lr,
                      temperature=args.temperature, validation=args.validation, seed=args.seed,
                      anchor=args.anchor, device=device)
    meta_rules = data["meta"]["rules"]
    out = save_checkpoint(args.out, net, obs_version=OBS_VERSION, rules=meta_rules, training_steps=0,
                          evaluation=None, extra={"trainer": "training/imitate.py", "data": list(args.data),
                                                  "args": {k: v for k, v in vars(args).items() if k != "data"},
                                                  **report})
    print(f"checkpoint: {out}")
    return out


if __name__ == "__main__":
    main()
