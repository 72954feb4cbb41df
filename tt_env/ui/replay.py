"""Replay a saved game: ``python -m tt_env.ui.replay GAME.json``.

    python -m tt_env.ui.replay GAME.json                 # every move, and each round's hands in melds
    python -m tt_env.ui.replay GAME.json --step          # the open table before each move; Enter steps
    python -m tt_env.ui.replay GAME.json --gif game.gif  # the pictures of the table, as an animation
    python -m tt_env.ui.replay GAME.json --frames DIR    # ... or as numbered PNG files

The whole record is checked before anything is shown or written: a record from another
format version, a malformed one, one whose action is illegal at its point, one with actions
after the game's end, or one whose final scores differ from the replay's is refused with a
one-line error naming the step or the scores. Pictures show every hand (seat ``--seat`` at
the bottom) unless ``--private`` hides what that seat could not see; each round ends with a
picture of the hands laid out in melds. ``--gif`` needs a ``.gif`` file name (an existing one
is replaced only with ``--overwrite``), ``--frames`` a folder (created if missing), ``--fps`` a
number in (0, 100].

Exit status: 0 the game was replayed (or written); 1 the record is malformed or does not
replay; 2 a bad command line (a record file that cannot be read, a flag value out of range,
an output path that cannot be written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..actions import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD
from ..jsonio import replaced_atomically
from ..cli_checks import CommandParser, command_name, output_dir_problem, output_file_problem, positive_float
from ..optional import require
from .records import GameRecord, load_record, replay, replay_final
from .tui import card_label, final_view, printable_name, require_rich, round_view, table_view


def describe_action(seat: int, top: int | None, action: int, state_after: Any, names: Sequence[str]) -> str:
    """One line for a move by ``seat`` (``top``: the discard pile's top before it), all cards open."""
    who = f"player_{seat} ({names[seat]})"
    if action == DRAW_STOCK:
        return f"{who} drew {card_label(state_after.hands[seat][-1])} from the stock"
    if action == TAKE_DISCARD:
        return f"{who} took {card_label(top)} from the discard pile"
    went_out = state_after.went_out == seat and state_after.current_player != seat
    return f"{who} discarded {card_label(action - DISCARD_BASE)}" + (" and went out" if went_out else "")


def frames(record: GameRecord, *, seat: int = 0, private: bool = False) -> Iterator[tuple[np.ndarray, bool]]:
    """Pictures of the replayed game: one per position, plus one per finished round (flagged ``True``).

    The record is checked to its end (``ValueError`` from :func:`tt_env.ui.records.replay` for
    actions after the game's end or final scores that differ).
    """
    from .render_image import render_round_end, render_table

    rounds_seen = 0
    for _, env in replay(record):
        state = env.game_state
        if len(state.round_results) > rounds_seen:
            rounds_seen = len(state.round_results)
            totals = [sum(r.points[p] for r in state.round_results) for p in range(record.rules.num_players)]
            yield render_round_end(state.round_results[-1], record.rules, totals), True
            if state.game_over:
                continue  # no table after the last round; replay() still checks what the record holds after it
        yield render_table(state, seat, reveal_all=not private), False


MAX_GIF_BYTES = 1 << 30
"""Most memory the frames of one GIF may take (Pillow holds every frame until it writes the file)."""


def gif_problem(record: GameRecord, seat: int = 0, private: bool = False) -> str | None:
    """Why the GIF of ``record`` would take more than :data:`MAX_GIF_BYTES` of frames (None if it fits):
    one byte a pixel a frame, and at most a frame per action plus one per round's end."""
    first, _ = next(frames(record, seat=seat, private=private))
    count = len(record.actions) + len(record.rules.rounds) + 1
    need = count * first.shape[0] * first.shape[1]
    if need <= MAX_GIF_BYTES:
        return None
    return (f"a GIF of this game holds up to {count:,} frames of {first.shape[1]}x{first.shape[0]} pixels in memory "
            f"({need / 2**30:.1f} GiB, over the {MAX_GIF_BYTES / 2**30:.0f} GiB allowed): use --frames DIR, which "
            f"writes one picture at a time")


GIF_FRAME_TIMES = " (GIF frame times are whole hundredths of a second, 1 to 65,535)"
MIN_FPS, MAX_FPS = 0.002, 100.0
"""``--fps``'s range: a frame shows for 500 s at most and 1/100 s at least (the GIF format's)."""


def save_gif(record: GameRecord, path: str | Path, *, seat: int = 0, private: bool = False,
             fps: float = 4.0, round_end_seconds: float = 3.0) -> int:
    """Write the replay as an animated GIF; returns the number of frames. ``ValueError`` for a game
    whose frames would take more than :data:`MAX_GIF_BYTES` (:func:`gif_problem`)."""
    from PIL import Image

    from .render_image import color_sample

    if not MIN_FPS <= fps <= MAX_FPS:
        raise ValueError(f"fps={fps!r} is not allowed: use {MIN_FPS:g} to {MAX_FPS:g}{GIF_FRAME_TIMES}")
    problem = gif_problem(record, seat, private)
    if problem:
        raise ValueError(problem)
    palette = Image.fromarray(color_sample()).quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    images, durations = [], []
    for image, round_end in frames(record, seat=seat, private=private):
        images.append(Image.fromarray(image).quantize(palette=palette, dither=Image.Dither.NONE))
        durations.append(int(1000 * (round_end_seconds if round_end else 1.0 / fps)))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with replaced_atomically(path) as tmp:  # (a failed write leaves the old GIF as it was)
        images[0].save(tmp, format="GIF", save_all=True, append_images=images[1:], duration=durations, loop=0,
                       optimize=False)
    return len(images)


FRAME_GLOB = "frame_*.png"
"""The files ``--frames`` writes (``frame_00000.png``, ...)."""


def frames_problem(directory: str | Path, overwrite: bool) -> str | None:
    """Why ``--frames directory`` would replace earlier frames (``None`` when it would not, or may)."""
    held = sorted(Path(directory).glob(FRAME_GLOB)) if Path(directory).is_dir() else []
    if held and not overwrite:
        return (f"it already holds {len(held)} {FRAME_GLOB} file(s) (such as {held[0].name}): give --overwrite to "
                f"replace them, or another folder")
    return None


def save_frames(record: GameRecord, directory: str | Path, *, seat: int = 0, private: bool = False) -> int:
    """Write the replay as ``frame_00000.png``, ... in ``directory``; returns the number of frames.

    The record is replayed once before the first file is written, so a bad record leaves no frames.
    Frames already in ``directory`` are removed first, so that none of a longer game is left among them.
    """
    from PIL import Image

    replay_final(record)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(FRAME_GLOB):
        old.unlink()
    count = 0
    for count, (image, _) in enumerate(frames(record, seat=seat, private=private), start=1):
        Image.fromarray(image).save(out / f"frame_{count - 1:05d}.png", optimize=False)
    return count


def print_replay(record: GameRecord, console: Any, *, step: bool = False,
                 input_fn: Callable[[str], str] = input) -> None:
    """Print every move and each round's end; with ``step``, show the table and wait for Enter."""
    names = [printable_name(n) for n in record.seats]  # a record's names reach the terminal escaped
    console.print(f"Game of {record.rules.num_players} players, seed {record.seed}, rounds "
                  f"{list(record.rules.rounds)}: " + ", ".join(f"player_{p} {n}" for p, n in enumerate(names)),
                  markup=False)
    before: tuple[int, int | None] = (0, None)
    rounds_seen = 0
    game_over = False
    for i, env in replay(record):  # replay() raises ValueError on what follows a bad step, also after the end
        state = env.game_state
        if i > 0:
            line = describe_action(*before, record.actions[i - 1], state, names)
            console.print(f"{i:5d}  {line}", markup=False)
        if len(state.round_results) > rounds_seen:
            rounds_seen = len(state.round_results)
            totals = [sum(r.points[p] for r in state.round_results) for p in range(len(names))]
            console.print(round_view(state.round_results[-1], record.rules, totals, names))
        if state.game_over:
            console.print(final_view(state, names))
            game_over = True
            continue
        if step and i < len(record.actions):
            console.print(table_view(state, state.current_player, names, reveal_all=True))
            console.print("Enter: next move, q: stop > ", end="", markup=False)
            try:
                if input_fn("").strip().lower() in ("q", "quit"):
                    return
            except (KeyboardInterrupt, EOFError):
                console.print()
                return
        before = (state.current_player, state.discard_pile[-1] if state.discard_pile else None)
    if not game_over:
        console.print(f"The record ends after {len(record.actions)} actions, before the game is over.",
                      markup=False)


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="python -m tt_env.ui.replay", description="Replay a saved Three Thirteen game.",
                                     epilog="exit status: 0 replayed; 1 the record is malformed or does not replay; "
                                            "2 a bad command line")
    parser.add_argument("record", help="a game record (JSON) saved by tt_env.ui.play or the evaluator")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--gif", metavar="OUT.gif", help="render the game to an animated GIF (a .gif file)")
    out.add_argument("--frames", metavar="DIR", help="render the game to numbered PNG files in the folder DIR")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the --gif file, or the --frames folder's frame_*.png files, if they exist")
    parser.add_argument("--step", action="store_true", help="show the table before each move and wait for Enter")
    parser.add_argument("--seat", type=int, default=0, help="seat at the bottom of the pictures (default 0)")
    parser.add_argument("--private", action="store_true", help="pictures show only what --seat could see")
    parser.add_argument("--fps", type=positive_float(MAX_FPS, low=MIN_FPS, why=GIF_FRAME_TIMES), default=4.0,
                        help=f"moves per second in the GIF, {MIN_FPS:g} to {MAX_FPS:g} (default 4)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status (argument errors exit with status 2 via ``parser.error``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.gif and (problem := output_file_problem(args.gif, (".gif",), overwrite=args.overwrite)):
        parser.error(f"--gif {args.gif}: {problem}")
    if args.frames and (problem := output_dir_problem(args.frames) or frames_problem(args.frames, args.overwrite)):
        parser.error(f"--frames {args.frames}: {problem}")
    try:  # what the output needs, before the record is read
        if args.gif or args.frames:
            require(["PIL"], "--gif and --frames", extra="render")
        else:
            require_rich()
    except ValueError as exc:  # MissingDependencyError
        parser.error(str(exc))
    try:
        record = load_record(args.record)
    except ValueError as exc:  # the file's content: not JSON, not a record
        return _bad_record(exc)
    except OSError as exc:  # missing, a folder, no permission to read
        parser.error(str(exc) if isinstance(exc, FileNotFoundError) else f"cannot read {args.record}: {exc}")
    if not 0 <= args.seat < record.rules.num_players:
        parser.error(f"--seat {args.seat} is not a seat of this game: use 0..{record.rules.num_players - 1}")
    try:
        replay_final(record)  # every step, what follows the end and the final scores, before any output
    except ValueError as exc:
        return _bad_record(exc, args.record)
    if args.gif and (problem := gif_problem(record, args.seat, args.private)):
        parser.error(f"--gif {args.gif}: {problem}")
    if args.gif or args.frames:
        try:
            if args.gif:
                count = save_gif(record, args.gif, seat=args.seat, private=args.private, fps=args.fps)
            else:
                count = save_frames(record, args.frames, seat=args.seat, private=args.private)
        except OSError as exc:  # checked above; only a change on disk since then gets here
            print(f"{parser.prog}: error: cannot write {args.gif or args.frames}: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {count} frames to {args.gif or args.frames}")
        return 0
    from rich.console import Console

    print_replay(record, Console(highlight=False), step=args.step)
    return 0


def _bad_record(exc: Exception, path: str | None = None) -> int:
    """Report a record that cannot be replayed in one line; exit status 1."""
    where = f"game record {path!r}: " if path else ""
    print(f"{command_name('python -m tt_env.ui.replay')}: error: {where}{exc}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
