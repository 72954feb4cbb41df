"""Rich views of the table for the terminal game and replays (``tt_env.ui.play``, ``tt_env.ui.replay``).

Only public information is shown for other seats (hand sizes, the cards they were seen
taking from the discard pile, their discards this round) unless ``reveal_all`` is asked
for, as a replay does. Rich is an optional dependency: :func:`require_rich` gives the
install hint when it is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine.cards import RANKS, SUITS, rank_of, suit_of
from ..engine.game import PHASE_DRAW, GameState, RoundRecord, winners
from ..engine.melds import best_melds, least_penalty
from ..engine.rules import Rules
from ..engine.rules import wild_rank as round_wild_rank
from ..optional import require
from .render_text import sorted_hand


def require_rich() -> None:
    """Raise :class:`~tt_env.optional.MissingDependencyError` (a ``ValueError``) with the install hint
    when rich is missing; the command lines turn it into their one-line refusal."""
    require(["rich"], "playing or replaying in the terminal", extra="render")


def rank_label(rank: int) -> str:
    """Rank as written on a card: ``A``, ``2`` .. ``10``, ``J``, ``Q``, ``K``."""
    return "10" if rank == 10 else RANKS[rank - 1]


def card_label(card: int) -> str:
    """Readable card name as typed back (``10H``, ``QS``, ``AC``)."""
    return rank_label(rank_of(card)) + SUITS[suit_of(card)]


def card_text(card: int, wild_rank: int, *, new: bool = False) -> Any:
    """A card as rich ``Text``: hearts and diamonds red, wilds bold with a yellow ``*``."""
    from rich.text import Text

    wild = rank_of(card) == wild_rank
    style = ("red" if suit_of(card) in (1, 2) else "") + (" bold" if wild else "")
    text = Text(card_label(card), style=style.strip() or "default")
    if wild:
        text.append("*", style="bold yellow")
    if new:
        text.stylize("underline")
    return text


def cards_text(cards: Sequence[int], wild_rank: int, *, sort: bool = True) -> Any:
    """Cards separated by spaces (sorted by suit then rank, wilds last, when ``sort``)."""
    from rich.text import Text

    out = Text()
    for i, c in enumerate(sorted_hand(list(cards), wild_rank) if sort else cards):
        if i:
            out.append(" ")
        out.append(card_text(c, wild_rank))
    return out if len(out) else Text("-", style="dim")


def hand_text(cards: Sequence[int], wild_rank: int, *, new_card: int | None = None) -> Any:
    """A hand grouped by suit (``│`` between suits), wilds last; ``new_card`` underlined."""
    from rich.text import Text

    groups: list[list[int]] = [[] for _ in range(5)]
    for c in sorted_hand(list(cards), wild_rank):
        groups[4 if rank_of(c) == wild_rank else suit_of(c)].append(c)
    out = Text()
    underlined = False
    for group in (g for g in groups if g):
        if len(out):
            out.append("  │  ", style="dim")
        for i, c in enumerate(group):
            if i:
                out.append(" ")
            is_new = c == new_card and not underlined
            underlined = underlined or is_new
            out.append(card_text(c, wild_rank, new=is_new))
    return out if len(out) else Text("(empty)", style="dim")


def printable_name(name: str) -> str:
    """``name`` safe to print on a terminal: control and format characters (escape sequences that clear the
    screen or set the window title, bidirectional overrides) written as ``\\x1b``-style escapes."""
    return "".join(c if c.isprintable() or c == " " else _escaped(c) for c in name)


def _escaped(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def seat_label(seat: int, names: Sequence[str], you: int | None) -> str:
    """``You`` for the human seat, else ``player_i (agent name)``."""
    return "You" if seat == you else f"player_{seat} ({names[seat]})"


def table_view(state: GameState, seat: int, names: Sequence[str], *, you: int | None = None,
               reveal_all: bool = False, new_card: int | None = None) -> Any:
    """A rich ``Panel`` of the table seen by ``seat`` (all hands shown with ``reveal_all``)."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    n = state.rules.num_players
    wild = rank_label(state.wild_rank)
    top = state.discard_pile[-1] if state.discard_pile else None
    head = Text.assemble(
        (f"Round {state.round_number} ({state.round_index + 1} of {len(state.rules.rounds)})", "bold"),
        "   wild: ", (f"{wild}s", "bold yellow"), f"   turn {state.turn}",
        f"   dealer: {seat_label(state.dealer, names, you)}\n",
        "Discard pile: ", card_text(top, state.wild_rank) if top is not None else ("empty", "dim"),
        (f" ({max(0, len(state.discard_pile) - 1)} below)", "dim"), f"   Stock: {len(state.stock)} cards\n",
        "Scores: " + ", ".join(f"{'you' if p == you else f'player_{p}'} {state.scores[p]}" for p in range(n)),
    )
    seats = Table(box=None, padding=(0, 2), show_edge=False, expand=False)
    for column in ("player", "cards", "hand" if reveal_all else "took (still holds)", "discarded this round"):
        seats.add_column(column, style="dim" if column == "cards" else None, no_wrap=column != "hand")
    for k in range(1, n + 1):
        p = (seat + k) % n
        if p == seat and not reveal_all:
            continue
        mark = "▶ " if p == state.current_player and not state.game_over else "  "
        label = Text(mark + seat_label(p, names, you), style="bold" if p == state.current_player else "")
        if state.went_out == p:
            label.append(" went out", style="bold magenta")
        shown = (hand_text(state.hands[p], state.wild_rank) if reveal_all
                 else cards_text([c for c in state.known_taken[p] if c in state.hands[p]], state.wild_rank))
        discarded = cards_text(state.discards[p], state.wild_rank, sort=False)
        seats.add_row(label, str(len(state.hands[p])), shown, discarded)
    body = Table.grid()
    body.add_row(head)
    body.add_row(Text(""))
    body.add_row(seats)
    if not reveal_all:
        body.add_row(Text(""))
        body.add_row(hand_line(state, seat, names, you=you, new_card=new_card))
    if state.went_out is not None and not state.game_over:
        who = "You have" if state.went_out == you else f"player_{state.went_out} has"
        note = " this is your last turn!" if seat == you and state.went_out != you else " last turns."
        body.add_row(Text(f"{who} gone out:{note}", style="bold magenta"))
    status = "game over" if state.game_over else (
        f"{seat_label(state.current_player, names, you)} to {'draw' if state.phase == PHASE_DRAW else 'discard'}")
    return Panel(body, title="Three Thirteen", subtitle=Text(status), expand=False)  # Text: a name is no markup


def hand_line(state: GameState, seat: int, names: Sequence[str], *, you: int | None = None,
              new_card: int | None = None) -> Any:
    """``seat``'s hand grouped by suit and its least penalty now (``new_card`` underlined)."""
    from rich.text import Text

    rules = state.rules
    penalty = least_penalty(state.hands[seat], state.wild_rank, rules.aces_high, rules.meld_needs_natural)
    return Text.assemble((f"{seat_label(seat, names, you)}: ", "bold"),
                         hand_text(state.hands[seat], state.wild_rank, new_card=new_card),
                         (f"    penalty now {penalty}", "dim"))


def melds_text(hand: Sequence[int], rules: Rules, wild: int) -> Any:
    """A hand laid out in the melds the solver found, then the unmelded cards."""
    from rich.text import Text

    result = best_melds(list(hand), wild, aces_high=rules.aces_high, meld_needs_natural=rules.meld_needs_natural)
    out = Text()
    for meld in result.melds:
        out.append("[", style="green")
        out.append(cards_text(meld, wild, sort=False))
        out.append("] ", style="green")
    if result.unmelded:
        out.append("unmelded: ", style="dim")
        out.append(cards_text(result.unmelded, wild))
    return out


def round_view(record: RoundRecord, rules: Rules, scores: Sequence[int], names: Sequence[str],
               you: int | None = None) -> Any:
    """Every hand of a finished round in its melds, the points each scored and the totals."""
    from rich.table import Table
    from rich.text import Text

    wild = rank_label(round_wild_rank(record.round_number))
    table = Table(title=f"End of round {record.round_number} (wild {wild}s, {record.turns} turns)",
                  title_style="bold", show_lines=False)
    table.add_column("player")
    table.add_column("hand in melds")
    table.add_column("points", justify="right")
    table.add_column("total", justify="right")
    for p, hand in enumerate(record.hands):
        label = seat_label(p, names, you) + (" (went out)" if record.went_out == p else "")
        laid_out = melds_text(hand, rules, round_wild_rank(record.round_number))
        table.add_row(Text(label), laid_out, str(record.points[p]), str(scores[p]))  # Text: a name is no markup
    if record.went_out is None:
        table.caption = f"nobody went out: the round stopped after {record.turns} turns"
    return table


def final_view(state: GameState, names: Sequence[str], you: int | None = None) -> Any:
    """The totals after the last round, lowest first, and the winner(s)."""
    from rich.table import Table
    from rich.text import Text

    won = winners(state)
    table = Table(title="Game over", title_style="bold")
    table.add_column("player")
    for rec in state.round_results:
        table.add_column(f"r{rec.round_number}", justify="right")
    table.add_column("total", justify="right", style="bold")
    for p in sorted(range(state.rules.num_players), key=lambda q: state.scores[q]):
        row: list[Any] = [Text(seat_label(p, names, you) + (" ★" if p in won else ""))]  # Text: a name is no markup
        row += [str(rec.points[p]) for rec in state.round_results] + [str(state.scores[p])]
        table.add_row(*row)
    if you is not None and you in won:
        table.caption = "You win!" if len(won) == 1 else "You share the win."
    else:
        table.caption = Text(" and ".join(seat_label(p, names, you) for p in won) + (" win." if len(won) > 1 else
                                                                                    " wins."))
    return table
