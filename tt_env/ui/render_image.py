"""A picture of the table: ``render_mode="rgb_array"`` and the ``"human"`` window.

:func:`render_table` draws the table with Pillow as an ``H x W x 3`` uint8 array, seen by one
seat (its hand face up at the bottom, the other hands face down except the cards seen taken
from the discard pile) or all open (``reveal_all=True``). The size depends only on the number
of players, so the frames of a game make a video. Pillow is optional: this module is
imported only when a picture is asked for, and the environment installs and runs without it.

The ``"human"`` mode shows the same picture in a window: :mod:`tt_env.ui.render_window`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ..engine.cards import RANKS, rank_of, suit_of
from ..engine.game import PHASE_DRAW, GameState, RoundRecord, winners
from ..engine.melds import best_melds, least_penalty
from ..engine.rules import Rules
from ..engine.rules import wild_rank as rank_wild
from .render_text import sorted_hand

WIDTH = 1000
MARGIN = 16
HEADER_H = 44
PANEL_H = 100
MIDDLE_H = 150
OWN_H = 136
SMALL = (44, 62)
LARGE = (64, 90)
SMALL_STEP = 27
LARGE_STEP = 67

FELT = (22, 94, 58)
FELT_DARK = (15, 70, 43)
PAPER = (252, 252, 248)
WILD_FACE = (255, 240, 175)
WILD_EDGE = (212, 160, 0)
RED = (200, 30, 40)
BLACK = (25, 25, 30)
BACK = (40, 70, 160)
BACK_EDGE = (230, 230, 240)
TEXT = (240, 240, 235)
MUTED = (170, 205, 185)
ACCENT = (255, 200, 60)
MELD_BAR = (120, 220, 140)


def _pil() -> tuple[Any, Any, Any]:
    """Pillow's Image, ImageDraw and ImageFont modules, with a clear error when Pillow is missing."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("render_mode='rgb_array' needs Pillow: pip install 'three-thirteen[render]'") from exc
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=None)
def _font(size: int) -> Any:
    """Pillow's default font at ``size`` pixels (a fixed bitmap font before Pillow 10.1)."""
    _, _, ImageFont = _pil()
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has only the small bitmap font
        return ImageFont.load_default()


def image_size(num_players: int) -> tuple[int, int]:
    """``(height, width)`` of the picture for ``num_players`` (fixed per player count)."""
    rows = _panel_rows(num_players)
    height = HEADER_H + rows * (PANEL_H + 8) + MIDDLE_H + OWN_H + MARGIN
    return height, WIDTH


def _panel_rows(num_players: int) -> int:
    opponents = num_players - 1
    return 1 if opponents == 1 else (opponents + 1) // 2


class _Drawing:
    """A Pillow image drawn at ``scale`` times its final size, with the table's drawing helpers."""

    def __init__(self, height: int, width: int, scale: int = 1, background: tuple = FELT, mode: str = "RGB") -> None:
        Image, ImageDraw, _ = _pil()
        self.s = scale
        self.size = (width, height)
        self.image = Image.new(mode, (width * scale, height * scale), background)
        self.draw = ImageDraw.Draw(self.image)

    def _xy(self, *values: float) -> list[float]:
        return [v * self.s for v in values]

    def rect(self, x: float, y: float, w: float, h: float, fill: tuple | None, outline: tuple | None = None,
             radius: float = 6, width: float = 1) -> None:
        self.draw.rounded_rectangle(self._xy(x, y, x + w - 1 / self.s, y + h - 1 / self.s), radius=radius * self.s,
                                    fill=fill, outline=outline, width=max(1, round(width * self.s)))

    def text(self, x: float, y: float, text: str, size: int, fill: tuple = TEXT, anchor: str = "la") -> None:
        """Draw ``text``; its rendered glyph mask is cached, as the same labels recur in every frame."""
        mask, (dx, dy) = _text_mask(text, size * self.s, anchor)
        if mask is None:
            return
        left, top = round(x * self.s) + dx, round(y * self.s) + dy
        self.image.paste(fill, (left, top, left + mask.size[0], top + mask.size[1]), mask)

    def suit(self, suit: int, cx: float, cy: float, r: float, fill: tuple) -> None:
        """Suit symbol drawn as shapes (no font needs the glyphs): C D H S = 0 1 2 3."""
        d, s = self.draw, self.s
        cx, cy, r = cx * s, cy * s, r * s

        def circle(x: float, y: float, rad: float) -> None:
            d.ellipse([x - rad, y - rad, x + rad, y + rad], fill=fill)

        if suit == 1:  # diamond
            d.polygon([(cx, cy - r), (cx + 0.75 * r, cy), (cx, cy + r), (cx - 0.75 * r, cy)], fill=fill)
        elif suit == 2:  # heart
            circle(cx - 0.48 * r, cy - 0.35 * r, 0.52 * r)
            circle(cx + 0.48 * r, cy - 0.35 * r, 0.52 * r)
            d.polygon([(cx - 0.98 * r, cy - 0.2 * r), (cx + 0.98 * r, cy - 0.2 * r), (cx, cy + r)], fill=fill)
        elif suit == 3:  # spade
            circle(cx - 0.48 * r, cy + 0.2 * r, 0.5 * r)
            circle(cx + 0.48 * r, cy + 0.2 * r, 0.5 * r)
            d.polygon([(cx - 0.97 * r, cy + 0.1 * r), (cx + 0.97 * r, cy + 0.1 * r), (cx, cy - r)], fill=fill)
            d.polygon([(cx, cy + 0.2 * r), (cx - 0.4 * r, cy + r), (cx + 0.4 * r, cy + r)], fill=fill)
        else:  # club
            circle(cx, cy - 0.45 * r, 0.42 * r)
            circle(cx - 0.47 * r, cy + 0.15 * r, 0.42 * r)
            circle(cx + 0.47 * r, cy + 0.15 * r, 0.42 * r)
            d.polygon([(cx, cy), (cx - 0.35 * r, cy + r), (cx + 0.35 * r, cy + r)], fill=fill)

    def card(self, card: int, x: float, y: float, size: tuple[int, int], wild_rank: int) -> None:
        """Paste a face-up card (a cached sprite); wild cards are gold."""
        sprite = _card_sprite(card, size, rank_of(card) == wild_rank)
        self.image.paste(sprite, (round(x), round(y)), sprite)

    def back(self, x: float, y: float, size: tuple[int, int]) -> None:
        """Paste a face-down card."""
        sprite = _card_sprite(-1, size, False)
        self.image.paste(sprite, (round(x), round(y)), sprite)

    def finish(self) -> np.ndarray:
        image = self.image
        if self.s != 1:
            Image, _, _ = _pil()
            image = image.resize(self.size, Image.LANCZOS)
        return np.asarray(image, dtype=np.uint8).copy()


@lru_cache(maxsize=4096)
def _text_mask(text: str, size: int, anchor: str) -> tuple[Any, tuple[int, int]]:
    """Glyph mask of ``text`` (an ``L`` image, or ``None`` when empty) and its offset from the anchor."""
    Image, ImageDraw, _ = _pil()
    font = _font(size)
    left, top, right, bottom = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), text, font=font, anchor=anchor)
    if right <= left or bottom <= top:
        return None, (0, 0)
    mask = Image.new("L", (right - left, bottom - top), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=font, anchor=anchor)
    return mask, (left, top)


@lru_cache(maxsize=512)
def _card_sprite(card: int, size: tuple[int, int], wild: bool) -> Any:
    """A card (``-1``: its back) as an RGBA image, drawn at 4x and scaled down for smooth edges."""
    w, h = size
    d = _Drawing(h, w, scale=4, background=(0, 0, 0, 0), mode="RGBA")
    if card < 0:
        d.rect(0, 0, w, h, BACK, BACK_EDGE, radius=w * 0.12, width=2)
        d.rect(5, 5, w - 10, h - 10, BACK, (90, 120, 210), radius=w * 0.08, width=1)
    else:
        d.rect(0, 0, w, h, WILD_FACE if wild else PAPER, WILD_EDGE if wild else (120, 120, 120),
               radius=w * 0.12, width=2.5 if wild else 1)
        suit = suit_of(card)
        color = RED if suit in (1, 2) else BLACK
        rank = "10" if rank_of(card) == 10 else RANKS[rank_of(card) - 1]
        big = w >= 60
        rank_size = 20 if big else 15
        d.text(13, 3, rank, rank_size, color, anchor="ma")
        d.suit(suit, 13, rank_size + 12, 6 if big else 5, color)
        d.suit(suit, w * 0.6, h * 0.62, w * 0.2, color)
        if wild:
            d.text(w - 4, h - 4, "W", 11 if big else 9, WILD_EDGE, anchor="rd")
    Image, _, _ = _pil()
    return d.image.resize(size, Image.LANCZOS)


def render_table(state: GameState, seat: int, *, reveal_all: bool = False) -> np.ndarray:
    """The table seen by ``seat`` (or all open) as an ``H x W x 3`` uint8 image.

    ``seat``'s hand lies face up at the bottom; other hands are face down, except the cards
    they were seen taking from the discard pile this round (all face up with ``reveal_all``).
    """
    n = state.rules.num_players
    if not 0 <= seat < n:
        raise ValueError(f"seat={seat!r} is not a seat of this game: allowed 0..{n - 1}")
    height, width = image_size(n)
    cv = _Drawing(height, width)
    _header(cv, state)
    y = HEADER_H
    opponents = [(seat + k) % n for k in range(1, n)]
    cols = 1 if len(opponents) == 1 else 2
    panel_w = (width - 2 * MARGIN - 12 * (cols - 1)) / cols
    for i, p in enumerate(opponents):
        px = MARGIN + (i % cols) * (panel_w + 12)
        py = y + (i // cols) * (PANEL_H + 8)
        _opponent_panel(cv, state, p, px, py, panel_w, reveal_all)
    y += _panel_rows(n) * (PANEL_H + 8)
    _middle(cv, state, seat, y, width)
    _own_hand(cv, state, seat, y + MIDDLE_H, width)
    return cv.finish()


def _header(cv: _Drawing, state: GameState) -> None:
    cv.draw.rectangle(cv._xy(0, 0, WIDTH, HEADER_H - 6), fill=FELT_DARK)
    wild = RANKS[state.wild_rank - 1].replace("T", "10")
    rounds = state.rules.rounds
    left = (f"Round {state.round_number} ({state.round_index + 1} of {len(rounds)})   "
            f"wild: {wild}s   turn {state.turn}")
    cv.text(MARGIN, 10, left, 18)
    if state.game_over:
        won = winners(state)
        status = "Game over: " + ", ".join(f"player_{p}" for p in won) + (" win" if len(won) > 1 else " wins")
        color = ACCENT
    else:
        verb = "draw" if state.phase == PHASE_DRAW else "discard"
        status = f"player_{state.current_player} to {verb}"
        color = TEXT
        if state.went_out is not None:
            status = f"player_{state.went_out} went out: last turns.   " + status
            color = ACCENT
    cv.text(WIDTH - MARGIN, 10, status, 18, color, anchor="ra")


def _opponent_panel(cv: _Drawing, state: GameState, p: int, x: float, y: float, w: float, reveal_all: bool) -> None:
    cv.rect(x, y + 4, w, PANEL_H - 4, FELT_DARK, None, radius=8)
    hand = state.hands[p]
    mover = p == state.current_player and not state.game_over
    title = f"player_{p}   score {state.scores[p]}   {len(hand)} cards"
    if state.went_out == p:
        title += "   went out"
    cv.text(x + 10, y + 10, title, 15, ACCENT if mover else TEXT)
    cx, cy = x + 10, y + 32
    if reveal_all or state.game_over:
        shown, hidden = sorted_hand(hand, state.wild_rank), 0
    else:
        shown = sorted_hand([c for c in state.known_taken[p] if c in hand], state.wild_rank)
        hidden = len(hand) - len(shown)
    for _ in range(hidden):
        cv.back(cx, cy, SMALL)
        cx += SMALL_STEP * 0.6
    if hidden and shown:
        cx += SMALL_STEP * 0.6
    for c in shown:
        cv.card(c, cx, cy, SMALL, state.wild_rank)
        cx += SMALL_STEP
    if not reveal_all and not state.game_over and shown:
        cv.text(x + w - 10, y + 10, "face up: seen taken", 12, MUTED, anchor="ra")


def _middle(cv: _Drawing, state: GameState, seat: int, y: float, width: int) -> None:
    top = y + 22
    cv.text(MARGIN + 10, y + 4, f"Stock: {len(state.stock)}", 15, TEXT)
    if state.stock:
        for k in range(min(3, len(state.stock))):
            cv.back(MARGIN + 10 + 3 * k, top + 3 * k, LARGE)
    else:
        cv.rect(MARGIN + 10, top, *LARGE, FELT, MUTED, radius=8)
    pile = state.discard_pile
    dx = MARGIN + 150
    cv.text(dx, y + 4, f"Discard pile: {len(pile)}", 15, TEXT)
    if not pile:
        cv.rect(dx, top, *LARGE, FELT, MUTED, radius=8)
    for k, c in enumerate(pile[-3:]):  # the top card last, on the right
        cv.card(c, dx + 28 * k, top, LARGE, state.wild_rank)
    _scores(cv, state, seat, y, width)


def _scores(cv: _Drawing, state: GameState, seat: int, y: float, width: int) -> None:
    n = state.rules.num_players
    last = state.round_results[-1] if state.round_results else None
    x0 = width - MARGIN - 360
    cv.rect(x0, y + 2, 360, MIDDLE_H - 12, FELT_DARK, None, radius=8)
    cv.text(x0 + 12, y + 8, "player", 13, MUTED)
    cv.text(x0 + 200, y + 8, "total", 13, MUTED, anchor="ra")
    if last is not None:
        cv.text(x0 + 330, y + 8, f"round {last.round_number}", 13, MUTED, anchor="ra")
    row_h = min(15.0, (MIDDLE_H - 40) / n)
    for p in range(n):
        ry = y + 26 + p * row_h
        color = ACCENT if p == seat else TEXT
        cv.text(x0 + 12, ry, f"player_{p}" + (" (view)" if p == seat else ""), 13, color)
        cv.text(x0 + 200, ry, str(state.scores[p]), 13, color, anchor="ra")
        if last is not None:
            cv.text(x0 + 330, ry, f"+{last.points[p]}", 13, color, anchor="ra")


def _own_hand(cv: _Drawing, state: GameState, seat: int, y: float, width: int) -> None:
    hand = state.hands[seat]
    rules = state.rules
    penalty = least_penalty(hand, state.wild_rank, rules.aces_high, rules.meld_needs_natural)
    title = f"player_{seat}   score {state.scores[seat]}   {len(hand)} cards   penalty now {penalty}"
    if state.went_out == seat:
        title += "   went out"
    mover = seat == state.current_player and not state.game_over
    cv.text(MARGIN, y + 4, title, 16, ACCENT if mover else TEXT)
    cards = sorted_hand(hand, state.wild_rank)
    step = min(LARGE_STEP, (width - 2 * MARGIN - LARGE[0]) / max(1, len(cards) - 1))
    for i, c in enumerate(cards):
        cv.card(c, MARGIN + i * step, y + 28, LARGE, state.wild_rank)


def render_round_end(record: RoundRecord, rules: Rules, scores: Sequence[int]) -> np.ndarray:
    """Every hand of a finished round laid out in the solver's melds (a green bar under each),
    then its unmelded cards, with the points and totals.

    Same size as :func:`render_table` for the player count, so it can sit among its frames.
    """
    n = rules.num_players
    height, width = image_size(n)
    cv = _Drawing(height, width)
    wild = rank_wild(record.round_number)
    cv.draw.rectangle(cv._xy(0, 0, WIDTH, HEADER_H - 6), fill=FELT_DARK)
    label = RANKS[wild - 1].replace("T", "10")
    cv.text(MARGIN, 10, f"End of round {record.round_number}   wild: {label}s   {record.turns} turns", 18)
    ending = f"player_{record.went_out} went out" if record.went_out is not None else "nobody went out"
    cv.text(WIDTH - MARGIN, 10, ending, 18, ACCENT, anchor="ra")
    row_h = (height - HEADER_H - MARGIN) / n
    size, step = (LARGE, 40) if row_h >= LARGE[1] + 26 else (SMALL, SMALL_STEP)
    for p, hand in enumerate(record.hands):
        y = HEADER_H + p * row_h
        out = "   went out" if record.went_out == p else ""
        cv.text(MARGIN, y + 2, f"player_{p}   +{record.points[p]} points   total {scores[p]}{out}", 15,
                ACCENT if record.went_out == p else TEXT)
        solved = best_melds(hand, wild, aces_high=rules.aces_high, meld_needs_natural=rules.meld_needs_natural)
        x = MARGIN
        for k, group in enumerate([*solved.melds, sorted_hand(list(solved.unmelded), wild)]):
            if group and k < len(solved.melds):  # a green bar under each meld; none under unmelded cards
                width = (len(group) - 1) * step + size[0]
                cv.draw.rectangle([x + 2, y + 24 + size[1], x + width - 2, y + 26 + size[1]], fill=MELD_BAR)
            for c in group:
                cv.card(c, x, y + 22, size, wild)
                x += step
            x += size[0] - step + 18
    return cv.finish()


def color_sample() -> np.ndarray:
    """A picture holding every colour the table pictures use (cards, wilds, backs, text), from
    which one palette serves all the frames of a GIF."""
    cv = _Drawing(2 * LARGE[1] + 2 * SMALL[1] + 60, 27 * LARGE[0] + 20)
    for row, (size, wild) in enumerate([(LARGE, False), (LARGE, True), (SMALL, False), (SMALL, True)]):
        y = sum(s[1] for s, _ in [(LARGE, 0), (LARGE, 0), (SMALL, 0)][:row])
        for k, card in enumerate([0, 13, 26, 39, 9, 22, 35, 48, 12, 25, 38, 51]):
            cv.card(card, k * (size[0] + 2), y, size, rank_of(card) if wild else 0)
        cv.back(12 * (size[0] + 2), y, size)
    y = 2 * LARGE[1] + 2 * SMALL[1]
    cv.rect(0, y, cv.size[0], 60, FELT_DARK, None, radius=8)
    for k, color in enumerate((TEXT, MUTED, ACCENT)):
        cv.text(10 + 300 * k, y + 6, "Player 0 score 10", 16, color)
        cv.draw.rectangle([300 * k, y + 32, 300 * k + 290, y + 60], fill=FELT)
        cv.text(10 + 300 * k, y + 34, "Player 0 score 10", 16, color)
    return cv.finish()
