"""Make the README pictures of the browser app: ``docs/web_play.png``, ``docs/web_round_end.png``,
``docs/web_watch.png`` and ``docs/web_leaderboard.png``.

    python docs/make_web_images.py --overwrite        # replace the committed pictures
    python docs/make_web_images.py --out /tmp/pics    # or write them elsewhere

Starts the app (``tt_env.web``) on a free local port and drives Debian's headless chromium
through Playwright (the ``web`` and ``dev`` extras, ``apt-get install chromium``): a game
played by clicking (each move the one the page's "best arrangement" hint gives), a game of
four agents on the Watch page, and the Leaderboard page with a small leaderboard made here by
``python -m training.leaderboard`` (20 deals a cell, seed 0) and a small evaluation started
with its button. Every number in the pictures comes from those runs.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from tt_env.web.app import create_app
from tt_env.web.cli import serve_in_background

DOCS = Path(__file__).resolve().parent
OUT = DOCS
"""Where the pictures go (``--out``)."""
PICTURES = ("web_play.png", "web_round_end.png", "web_watch.png", "web_leaderboard.png")
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1360, "height": 860}


def wait_for_move(page: Page, step: str) -> None:
    page.wait_for_selector(f'body:not([data-step="{step}"])')


def play_by_hints(page: Page, turns: int) -> None:
    """Play ``turns`` of the person's turns (stopping at a round's end): take the discard when the
    hint says it leaves a lower penalty than the hand has now, else draw; then discard the hint's card."""
    for _ in range(turns):
        if page.is_visible("#round-end"):
            return
        page.click("#hint-button")
        page.wait_for_selector("#hint .arrangement")
        now = int(page.get_attribute("#hint .hint-line", "data-penalty"))
        take = page.is_visible("#hint-take") and int(page.get_attribute("#hint-take", "data-penalty")) < now
        step = page.get_attribute("body", "data-step")
        page.click("#discard-pile" if take else "#stock")
        wait_for_move(page, step)
        page.click("#hint-button")
        page.wait_for_selector("#hint-discard")
        card = page.get_attribute("#hint-discard", "data-card")
        step = page.get_attribute("body", "data-step")
        page.locator(f'#hand .card.playable[data-card="{card}"]').first.click()
        wait_for_move(page, step)


def play_pictures(page: Page, base: str) -> None:
    page.goto(base + "/play")
    page.select_option("#num-players", "3")
    page.select_option("#seat-2", "greedy-v0")
    page.fill("#rules-rounds", "5-11")
    page.fill("#seed", "12")
    page.click("#start")
    page.wait_for_selector("#hand")
    for _ in range(2):  # two rounds played to their ends, so that the scores have rows
        play_by_hints(page, 40)
        if not page.is_visible("#round-end"):
            raise RuntimeError("the round did not end in 40 turns")
        if _ == 1:
            page.screenshot(path=str(OUT / "web_round_end.png"))
        page.click("#next-round")
        page.wait_for_selector("#hand")
    play_by_hints(page, 2)
    page.click("#stock")
    page.wait_for_selector("#hand .card.new")
    page.click("#hint-button")
    page.wait_for_selector("#hint .arrangement")
    page.screenshot(path=str(OUT / "web_play.png"), full_page=True)


def watch_picture(page: Page, base: str) -> None:
    page.goto(base + "/watch")
    page.select_option("#num-seats", "4")
    for seat, agent in enumerate(["expert-v0", "ppo-4p-v0", "greedy-v0", "expert-v0"]):
        page.select_option(f"#seat-{seat}", agent)
    page.fill("#rules-rounds", "7-9")
    page.fill("#seed", "5")
    page.click("#watch-new")
    page.wait_for_selector("#slider", timeout=60_000)
    page.fill("#slider", "61")
    page.dispatch_event("#slider", "input")
    page.wait_for_selector('body[data-step="61"]')
    page.screenshot(path=str(OUT / "web_watch.png"))


def leaderboard_picture(page: Page, base: str, board: Path) -> None:
    page.goto(base + "/leaderboard")
    page.fill("#eval-deals", "20")
    page.click("#eval-start")
    page.wait_for_selector("#eval-result", timeout=300_000)
    page.set_input_files("#results-file", str(board))
    page.wait_for_selector('.result[data-kind="leaderboard"]')
    page.screenshot(path=str(OUT / "web_leaderboard.png"), full_page=True)


def small_leaderboard(path: Path) -> None:
    """A leaderboard of 20 deals a cell (the real tool; its table goes nowhere)."""
    from tt_env.evaluation.leaderboard import main

    with contextlib.redirect_stdout(io.StringIO()):
        main(["--agents", "random-v0", "greedy-v0", "ppo-2p-v1", "ppo-3p-v0", "--players", "2", "3",
              "--deals", "20", "--seed", "0", "--json", str(path)])


if __name__ == "__main__":
    from picture_args import output_folder

    OUT = output_folder(__doc__, PICTURES)
    with tempfile.TemporaryDirectory() as tmp:
        board = Path(tmp) / "leaderboard.json"
        small_leaderboard(board)
        with serve_in_background(create_app()) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport=VIEWPORT)
            play_pictures(page, base)
            watch_picture(page, base)
            leaderboard_picture(page, base, board)
            browser.close()
    print("wrote", ", ".join(str(OUT / name) for name in PICTURES))
