"""Make the README pictures: ``docs/table.png`` and ``docs/terminal.png``.

    python docs/make_images.py --overwrite        # replace the committed pictures
    python docs/make_images.py --out /tmp/pics    # or write them elsewhere

``table.png`` is ``render_mode="rgb_array"`` in the middle of a 3-player game of scripted
agents. ``terminal.png`` is a stretch of ``python -m tt_env.ui.play`` (a scripted player who asks
for a hint and makes a typo) drawn from rich's recorded output into a PNG with Pillow, in
DejaVu Sans Mono when it is installed.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from rich.console import Console
from rich.terminal_theme import MONOKAI as THEME
from rich.text import Text

from tt_env import three_thirteen_v0
from tt_env.agents import make_agent
from tt_env.engine import Rules
from tt_env.engine.game import PHASE_DRAW
from tt_env.ui.play import PlaySession
from tt_env.ui.tui import card_label

DOCS = Path(__file__).resolve().parent
MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
MONO_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
BACKGROUND, FOREGROUND = tuple(THEME.background_color), tuple(THEME.foreground_color)


def table_picture(path: Path) -> None:
    """A mid-game position of expert-v0, greedy-v0 and expert-v0, as player_0 sees it."""
    env = three_thirteen_v0.env(num_players=3, render_mode="rgb_array", rounds=(6, 9, 10))
    rules = env.unwrapped.rules
    agents = [make_agent(name, rules) for name in ("expert-v0", "greedy-v0", "expert-v0")]
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    state = env.unwrapped.game_state
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        if state.round_number == 9 and state.turn >= 7 and state.current_player == 0 and state.phase != PHASE_DRAW:
            break
        env.step(agents[int(agent[7:])].act(obs["observation"], obs["action_mask"], rng))
    Image.fromarray(env.render()).save(path, optimize=True)


def terminal_transcript() -> list[Text]:
    """Lines of a scripted terminal game: the last turns of its first round and the scores."""
    console = Console(record=True, width=104, force_terminal=True, color_system="truecolor", file=io.StringIO())
    rules = Rules(num_players=3, rounds=(4, 5))
    helper = make_agent("expert-v0", rules)
    session: PlaySession | None = None
    extra: list[str] = []

    def typed(prompt: str) -> str:
        state = session.env.game_state
        if extra:
            reply = extra.pop(0)
        elif state.game_over or state.current_player != session.seat:
            reply = ""
        else:
            obs = session.env.observe(f"player_{session.seat}")
            action = helper.act(obs["observation"], obs["action_mask"], np.random.default_rng(0))
            if state.phase == PHASE_DRAW and state.turn >= 6 and not getattr(typed, "hinted", False):
                typed.hinted = True
                extra.append("s" if action == 0 else "d")
                reply = "h"
            elif state.phase != PHASE_DRAW and getattr(typed, "hinted", False) and not getattr(typed, "typo", False):
                typed.typo = True
                extra.append(card_label(action - 2).lower())
                reply = "11h"
            else:
                reply = "s" if action == 0 else "d" if action == 1 else card_label(action - 2).lower()
        console.print(reply, style="bold cyan")  # the terminal echoes what is typed
        return reply

    session = PlaySession(["greedy-v0", "expert-v0"], rules=rules, seed=12, input_fn=typed, console=console,
                          pause_between_rounds=False)
    session.run()
    lines = Text.from_ansi(console.export_text(styles=True)).split("\n")
    plain = [line.plain for line in lines]
    end = next(i for i, s in enumerate(plain) if "End of round" in s)
    end = next(i for i in range(end, len(plain)) if plain[i].startswith("└")) + 1
    hint = next(i for i, s in enumerate(plain) if "would" in s)
    start = max(i for i in range(hint) if plain[i].startswith("╭"))
    return lines[start:end]


def draw_terminal(lines: list[Text], path: Path, console_width: int = 104) -> None:
    """Draw rich text lines as a terminal window screenshot."""
    size = 15
    try:
        regular, bold = ImageFont.truetype(MONO, size), ImageFont.truetype(MONO_BOLD, size)
    except OSError:
        regular = bold = ImageFont.load_default()
    cell_w = regular.getlength("M")
    cell_h = size + 5
    pad, bar = 16, 28
    image = Image.new("RGB", (int(console_width * cell_w + 2 * pad), len(lines) * cell_h + 2 * pad + bar), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, image.width, bar], fill=(45, 48, 58))
    for k, color in enumerate([(255, 95, 86), (255, 189, 46), (39, 201, 63)]):
        draw.ellipse([12 + 20 * k, 8, 24 + 20 * k, 20], fill=color)
    draw.text((image.width / 2, bar / 2), "python -m tt_env.ui.play --opponents greedy-v0 expert-v0",
              fill=(170, 170, 180), font=regular, anchor="mm")
    console = Console(width=console_width, color_system="truecolor")
    for row, line in enumerate(lines):
        x, y = pad, bar + pad + row * cell_h
        for segment in line.render(console):
            style = segment.style
            color = FOREGROUND
            if style is not None and style.color is not None:
                color = style.color.get_truecolor(THEME, foreground=True)
                color = (color.red, color.green, color.blue)
            if style is not None and style.dim:
                color = tuple(int(c * 0.6 + b * 0.4) for c, b in zip(color, BACKGROUND, strict=True))
            font = bold if style is not None and style.bold else regular
            draw.text((x, y), segment.text, fill=color, font=font)
            x += cell_w * len(segment.text)
    image.save(path, optimize=True)


if __name__ == "__main__":
    from picture_args import output_folder

    out = output_folder(__doc__, ("table.png", "terminal.png"))
    table_picture(out / "table.png")
    draw_terminal(terminal_transcript(), out / "terminal.png")
    print("wrote", out / "table.png", "and", out / "terminal.png")
