"""Play Three Thirteen in the terminal against any agents: ``python -m tt_env.ui.play``.

    python -m tt_env.ui.play --opponents greedy-v0 expert-v0 --seed 7 --rounds 1-3

You take a seat (``--seat``, default 0) against the agents named (registry names such as
``expert-v0`` or checkpoint paths). On your turn: ``s`` draws from the stock, ``d`` takes
the top of the discard pile, then type the card to discard (``7h``, ``10H``, ``Td``, ``qs``:
any case). ``h`` asks for a hint, ``?`` for help, ``q`` (or Ctrl-C) to quit, with an offer
to save the game record first (replay it with ``python -m tt_env.ui.replay``). A save that fails
(a folder that cannot be created, no permission, a file of that name already there: it is never
replaced) says why and asks for another file name; Enter gives up. When the input ends (stdin
closed, or Ctrl-D) the game stops with a message, after the same offer to save (``--save FILE``
saves without asking; an existing ``FILE`` is replaced only with ``--overwrite``).

Every argument is checked before the game starts (``--seed`` >= 0, ``--seat`` a seat of the
table, ``--max-turns-per-round`` >= 1, ``--decks``, ``--rounds``, the opponents and the hint
agent, ``--save`` a file that can be written and does not exist, unless ``--overwrite``).
Exit status: 0 the game was played to its end, or you quit (``q``, Ctrl-C); 1 an agent failed;
2 a bad command line; 3 the input ended before the game was over.

:class:`PlaySession` holds the game loop; it reads through an input function and writes to
a rich ``Console``, so tests drive it with scripted input.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..actions import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD
from ..agents import Agent, agent_names, make_agent
from ..cli_checks import (EXISTS, CommandParser, add_rules_arguments, int_at_least, output_file_problem,
                          rounds_arg, rules_from_args, seed_arg)
from ..engine.cards import parse_card
from ..engine.game import PHASE_DRAW, GameState, legal_actions
from ..engine.melds import least_penalty
from ..engine.rules import MAX_PLAYERS, Rules, wild_rank
from ..three_thirteen_v0 import raw_env
from .records import GameRecord, GameRecorder, save_record
from .tui import card_label, card_text, final_view, hand_line, require_rich, round_view, table_view

HELP = ("On your turn: [bold]s[/] draws from the stock, [bold]d[/] takes the top of the discard pile; "
        "then type the card to discard: rank (A 2-9 10 or T J Q K) and suit (C D H S), any case, "
        "such as [bold]7h[/], [bold]10d[/], [bold]qs[/]. Going out happens by itself when your discard "
        "leaves every other card in melds. [bold]h[/] hint, [bold]?[/] help, [bold]q[/] quit (Ctrl-C too).")


EXIT_OK, EXIT_AGENT_FAILED, EXIT_USAGE, EXIT_INPUT_ENDED = 0, 1, 2, 3
"""Exit statuses of ``python -m tt_env.ui.play`` (``EXIT_USAGE`` comes from ``parser.error``)."""


QUIT_WORDS = ("q", "quit", "exit")
"""What a player types to quit, at a move or between rounds."""


class QuitGame(Exception):
    """The game stops before its end (the player quit, or the input ended)."""


class PlaySession:
    """One game between a human at ``seat`` and the ``opponents``, in a terminal.

    ``input_fn(prompt)`` returns one line typed by the player (it may raise
    ``KeyboardInterrupt`` or ``EOFError``); everything shown goes to ``console``. After
    :meth:`run`, ``outcome`` says how the game ended: ``"over"``, ``"quit"`` (``q`` or Ctrl-C),
    ``"input-ended"`` (``EOFError``: stdin closed) or ``"failed"`` (an agent failed; ``run`` raises).
    ``save_path`` replaces an existing file only with ``overwrite`` (``--overwrite``); a file name
    typed in the game never replaces one.
    """

    def __init__(self, opponents: Sequence[str | Agent], *, rules: Rules | None = None, seat: int = 0,
                 seed: int | None = None, input_fn: Callable[[str], str] | None = None, console: Any = None,
                 hint_agent: str = "expert-v0", save_path: str | Path | None = None,
                 pause_between_rounds: bool = True, overwrite: bool = False) -> None:
        require_rich()
        from rich.console import Console

        if not opponents:
            raise ValueError("give at least one opponent (a registry name such as 'greedy-v0' or a checkpoint path)")
        n = len(opponents) + 1
        rules = rules or Rules(num_players=n)
        if rules.num_players != n:
            raise ValueError(f"rules.num_players={rules.num_players} but there are {len(opponents)} opponent(s) "
                             f"and you: num_players must be {n}")
        if not 0 <= seat < n:
            raise ValueError(f"seat={seat!r} is not allowed: use 0..{n - 1}")
        if seed is not None and int(seed) < 0:
            raise ValueError(f"seed={seed} is not allowed: seeds are integers >= 0")
        self.rules, self.seat = rules, seat
        self.console = console or Console(highlight=False)
        self.input_fn = input_fn or input
        self.env = raw_env.from_rules(rules)
        others = iter(opponents)
        self.agents: dict[int, Agent] = {p: make_agent(next(others), rules) for p in range(n) if p != seat}
        self.names = [("human" if p == seat else _agent_name(self.agents[p])) for p in range(n)]
        self.seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 10**6)
        self.agent_rng = np.random.default_rng([self.seed, 1])
        self.hint_agent_name = hint_agent
        self._hint_agent: Agent | None = None
        self.save_path = Path(save_path) if save_path is not None else None
        self.overwrite = overwrite
        self.pause_between_rounds = pause_between_rounds
        self.recorder = GameRecorder(self.env, self.names)
        self.saved_to: Path | None = None
        self.outcome: str | None = None

    # ------------------------------------------------------------------ loop
    def run(self) -> GameRecord:
        """Play until the game ends or the player quits; returns the record of the game so far."""
        self.recorder.reset(self.seed)
        state = self.env.game_state
        self.outcome = None
        self.console.print(f"[bold]Three Thirteen[/]: you are player_{self.seat}, seed {self.seed}. "
                           f"Type [bold]?[/] for help.")
        try:
            while not state.game_over:
                p = state.current_player
                action = self._human_turn() if p == self.seat else self._agent_turn(p)
                self._step(action)
            self.outcome = "over"
            self.console.print(final_view(state, self.names, you=self.seat))
            self._offer_save(at_end=True)
        except QuitGame:
            self.outcome = self.outcome or "quit"
            self.console.print("Game stopped.")
        except KeyboardInterrupt:  # while an agent was thinking
            self.outcome = "quit"
            self.console.print()
            self._offer_save(at_end=False)
            self.console.print("Game stopped.")
        except Exception as exc:  # an agent failed: keep the game so far before reporting it
            self.outcome = "failed"
            self.console.print(f"The game cannot go on: {exc}", style="red", markup=False)
            self._offer_save(at_end=False)
            raise
        return self.recorder.to_record()

    def _step(self, action: int) -> None:
        """Apply one action, narrate it, and show the round summary when a round ends."""
        state = self.env.game_state
        p, top = state.current_player, (state.discard_pile[-1] if state.discard_pile else None)
        rounds_before = len(state.round_results)
        self.recorder.step(action)
        who = "You" if p == self.seat else f"player_{p} ({self.names[p]})"
        round_over = len(state.round_results) > rounds_before
        wild = wild_rank(state.round_results[-1].round_number) if round_over else state.wild_rank
        if action == DRAW_STOCK:
            line = f"{who} drew from the stock"
            if p == self.seat:
                line += f": {card_label(state.hands[p][-1])}"
            self.console.print(line + ".")
        elif action == TAKE_DISCARD:
            self.console.print(f"{who} took ", card_text(top, wild), " from the discard pile.", sep="")
        else:
            out = " and went out!" if state.went_out == p and not round_over else "."
            self.console.print(f"{who} discarded ", card_text(action - DISCARD_BASE, wild), out, sep="")
        if round_over:
            self.console.print(round_view(state.round_results[-1], self.rules, state.scores, self.names,
                                          you=self.seat))
            if not state.game_over and self.pause_between_rounds:
                if self._ask("Press Enter for the next round (q: quit) > ").strip().lower() in QUIT_WORDS:
                    self._quit()

    def _agent_turn(self, p: int) -> int:
        obs = self.env.observe(f"player_{p}")
        action = int(self.agents[p].act(obs["observation"], obs["action_mask"], self.agent_rng))
        if action not in legal_actions(self.env.game_state):
            raise RuntimeError(f"agent {self.names[p]} at seat {p} chose the illegal action {action}")
        return action

    # ------------------------------------------------------------------ the human's turn
    def _human_turn(self) -> int:
        state = self.env.game_state
        if state.phase == PHASE_DRAW:
            self.console.print(table_view(state, self.seat, self.names, you=self.seat))
        else:
            self.console.print(hand_line(state, self.seat, self.names, you=self.seat,
                                         new_card=state.hands[self.seat][-1]))
        while True:
            if state.phase == PHASE_DRAW:
                top = card_label(state.discard_pile[-1]) if state.discard_pile else "empty"
                reply = self._ask(f"Draw: [bold]s[/]tock or [bold]d[/]iscard pile ({top})? (h hint, ? help, q quit) > ")
            else:
                reply = self._ask("Discard which card? (such as 7h; h hint, ? help, q quit) > ")
            action, message = self._parse(reply)
            if action is not None:
                return action
            self.console.print(message)

    def _parse(self, reply: str) -> tuple[int | None, str]:
        """The action a typed reply asks for, or ``None`` and what to tell the player."""
        from rich.markup import escape

        state = self.env.game_state
        word = reply.strip().lower()
        if word in QUIT_WORDS:
            self._quit()
        if word in ("?", "help"):
            return None, HELP
        if word in ("h", "hint"):
            return None, self._hint()
        if word == "":
            return None, "Type a move (? for help)."
        legal = legal_actions(state)
        if state.phase == PHASE_DRAW:
            if word in ("s", "stock"):
                if DRAW_STOCK in legal:
                    return DRAW_STOCK, ""
                return None, "[red]The stock is empty and there is nothing to reshuffle:[/] take the discard (d)."
            if word in ("d", "discard", "pile", "p"):
                if TAKE_DISCARD in legal:
                    return TAKE_DISCARD, ""
                return None, "[red]The discard pile is empty:[/] draw from the stock (s)."
            if _looks_like_card(word):
                return None, "[red]Draw first:[/] s for the stock or d for the discard pile; then discard."
            return None, (f"[red]{escape(repr(reply.strip()))} is not a move here:[/] "
                          f"type s (stock), d (discard pile), h, ? or q.")
        if word in ("s", "stock", "d", "discard", "pile", "p"):
            return None, "[red]You have drawn already:[/] now type the card to discard, such as 7h."
        try:
            card = parse_card(word)
        except ValueError as exc:
            return None, f"[red]{escape(str(exc))}[/]"
        hand = state.hands[self.seat]
        if card not in hand:
            return None, f"[red]You do not hold {card_label(card)}.[/] Your hand is shown above."
        if DISCARD_BASE + card not in legal:
            return None, (f"[red]You took {card_label(card)} from the discard pile this turn:[/] these rules "
                          f"forbid discarding it again now (discard_drawn_discard=false). Discard another card.")
        return DISCARD_BASE + card, ""

    def _hint(self) -> str:
        """What the hint agent would play, and the least penalty after each possible discard."""
        suggestion = None
        try:
            if self._hint_agent is None:
                self._hint_agent = make_agent(self.hint_agent_name, self.rules)
            obs = self.env.observe(f"player_{self.seat}")
            suggestion = int(self._hint_agent.act(obs["observation"], obs["action_mask"],
                                                  np.random.default_rng([self.seed, 2, len(self.recorder.actions)])))
        except (ValueError, ImportError) as exc:
            self.console.print(f"[dim]{self.hint_agent_name} is not available: {exc}[/]")
        return "\n".join(hint_lines(self.env.game_state, self.seat, suggestion, self.hint_agent_name))

    # ------------------------------------------------------------------ input, quitting, saving
    def _ask(self, prompt: str) -> str:
        """One line from the player; Ctrl-C leads to the quit dialogue, the end of input stops the game."""
        self.console.print(prompt, end="")
        try:
            return self.input_fn("")
        except KeyboardInterrupt:
            self.console.print()
            self._quit()
        except EOFError:
            self.console.print()
            self.outcome = "input-ended"
            self.console.print("Input ended: the game stops here.")
            self._quit()
        return ""  # pragma: no cover - _quit always raises

    def _quit(self) -> None:
        self._offer_save(at_end=False)
        raise QuitGame

    def _offer_save(self, *, at_end: bool) -> None:
        """Save the record to ``save_path`` when given, else ask whether and where to save it."""
        if self.save_path is not None:
            self._save(self.save_path, overwrite=self.overwrite)
            return
        from rich.markup import escape

        question = "Save the game record? \\[y/N] > " if at_end else "Save the game before quitting? \\[y/N] > "
        default = Path(f"three_thirteen_seed{self.seed}.json")
        try:
            self.console.print(question, end="")
            if self.input_fn("").strip().lower() not in ("y", "yes"):
                return
            self.console.print(f"File name \\[{escape(str(default))}] > ", end="")
            name = self.input_fn("").strip()
        except (KeyboardInterrupt, EOFError):
            self.console.print("\nNot saved.")
            return
        self._save(Path(name).expanduser() if name else default)

    def _save(self, path: Path, *, overwrite: bool = False) -> None:
        """Save the record to ``path``; when that fails, say why and ask for another file name
        (Enter, Ctrl-C or the end of input gives up), so a game is never dropped without a word.
        An existing file is replaced only with ``overwrite`` (``--save`` with ``--overwrite``), never
        under a name typed here: the player is asked for another one."""
        record = self.recorder.to_record()
        while True:
            problem = output_file_problem(path, overwrite=overwrite)
            if problem == EXISTS:  # in the game the remedy is another name, not a flag
                problem = "a file of that name exists (it is kept)"
            if problem is None:
                try:
                    self.saved_to = save_record(record, path)
                except OSError as exc:
                    problem = exc.strerror or str(exc)
            if problem is None:
                self.console.print(f"Saved the game to {path} (replay: python -m tt_env.ui.replay {path}).",
                                   markup=False)
                return
            self.console.print(f"Could not save to {path}: {problem}.", style="red", markup=False)
            self.console.print("Another file name (Enter: give up, the game is not saved) > ", end="", markup=False)
            try:
                name = self.input_fn("").strip()
            except (KeyboardInterrupt, EOFError):
                self.console.print()
                name = ""
            if not name:
                self.console.print("Not saved.")
                return
            path, overwrite = Path(name).expanduser(), False  # (typed here: no shell expanded "~")


def hint_lines(state: GameState, seat: int, suggestion: int | None, agent_name: str) -> list[str]:
    """The hint: the agent's suggested action and the least penalty after each possible discard."""
    rules, wild, hand = state.rules, state.wild_rank, state.hands[seat]

    def penalty(cards: list[int]) -> int:
        return least_penalty(cards, wild, rules.aces_high, rules.meld_needs_natural)

    def after(cards: list[int], card: int) -> int:
        rest = list(cards)
        rest.remove(card)
        return penalty(rest)

    lines = []
    if suggestion is not None:
        if suggestion == DRAW_STOCK:
            move = "draw from the stock"
        elif suggestion == TAKE_DISCARD:
            move = f"take {card_label(state.discard_pile[-1])} from the discard pile"
        else:
            move = f"discard {card_label(suggestion - DISCARD_BASE)}"
        lines.append(f"[bold]{agent_name}[/] would {move}.")
    if state.phase == PHASE_DRAW:
        lines.append(f"Least penalty of your hand now: {penalty(hand)}.")
        if state.discard_pile:
            top = state.discard_pile[-1]
            grown = hand + [top]
            allowed = [c for c in set(grown) if c != top or rules.discard_drawn_discard or all(x == top for x in grown)]
            best = min(allowed, key=lambda c: (after(grown, c), c))
            value = after(grown, best)
            lines.append(f"Taking {card_label(top)}, the best discard is {card_label(best)}, leaving {value}"
                         + (" (you go out)." if value == 0 else "."))
        return lines
    options = sorted((after(hand, a - DISCARD_BASE), a - DISCARD_BASE) for a in legal_actions(state))
    lines.append("Least penalty after each discard" + (" (0: you go out)" if options[0][0] == 0 else "") + ":")
    cells = [f"{card_label(c):>3} → {v:<3}" for v, c in options]
    lines += ["  " + "   ".join(cells[i:i + 6]) for i in range(0, len(cells), 6)]
    return lines


def _agent_name(agent: Agent) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


def _looks_like_card(word: str) -> bool:
    try:
        parse_card(word)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------- command line
parse_rounds = rounds_arg
"""The ``--rounds`` parser (``tt_env.cli_checks.rounds_arg``, shared by every tool)."""


def opponents_help() -> str:
    """The ``--opponents`` help: the agents the registry has now (scripted and shipped), never a fixed list."""
    return (f"agents to play against: registry names ({', '.join(agent_names())}) or checkpoint paths "
            f"(default expert-v0)")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status (``EXIT_*``; a bad command line exits with 2)."""
    parser = CommandParser(prog="python -m tt_env.ui.play", description="Play Three Thirteen in the terminal.",
                                     epilog="exit status: 0 the game ended or you quit; 1 an agent failed; "
                                            "2 a bad command line; 3 the input ended before the game was over")
    parser.add_argument("--opponents", nargs="+", default=["expert-v0"], help=opponents_help())
    parser.add_argument("--seat", type=int_at_least(0, noun="a seat"), default=0,
                        help="your seat, 0..N-1 (play passes to seat+1)")
    parser.add_argument("--seed", type=seed_arg, default=None,
                        help="seed of the deal, >= 0 (random when omitted; shown)")
    parser.add_argument("--hint-agent", default="expert-v0", help="agent whose move the hint shows")
    parser.add_argument("--save", default=None, metavar="FILE",
                        help="save the game record to FILE at the end (or on quitting) without asking")
    parser.add_argument("--overwrite", action="store_true", help="replace the --save file if it exists")
    add_rules_arguments(parser)
    args = parser.parse_args(argv)
    try:
        require_rich()
    except ValueError as exc:  # MissingDependencyError: rich is not installed
        parser.error(str(exc))
    if args.save and (problem := output_file_problem(args.save, overwrite=args.overwrite)):
        parser.error(f"--save {args.save}: {problem}")
    num_players = len(args.opponents) + 1
    if num_players > MAX_PLAYERS:
        parser.error(f"--opponents: {len(args.opponents)} given, at most {MAX_PLAYERS - 1} (a table seats "
                     f"{MAX_PLAYERS} players, you included)")
    if args.seat >= num_players:
        parser.error(f"--seat {args.seat} is not a seat of this table: use 0..{num_players - 1} "
                     f"({len(args.opponents)} opponent(s) and you)")
    try:
        rules = rules_from_args(args, num_players)
        make_agent(args.hint_agent, rules)  # a bad --hint-agent is found now, not at the first hint
        session = PlaySession(args.opponents, rules=rules, seat=args.seat, seed=args.seed,
                              hint_agent=args.hint_agent, save_path=args.save, overwrite=args.overwrite)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    try:
        session.run()
    except Exception as exc:  # an agent failed; the session has shown it and offered to save the game
        print(f"{parser.prog}: error: the game cannot go on: {exc}", file=sys.stderr)
        return EXIT_AGENT_FAILED
    return EXIT_INPUT_ENDED if session.outcome == "input-ended" else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
