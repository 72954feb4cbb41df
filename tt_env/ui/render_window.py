"""The ``render_mode="human"`` window: the table picture in tkinter, or the text view.

A window opens when a display exists (``DISPLAY`` or ``WAYLAND_DISPLAY`` on Linux; always on
Windows and macOS) and tkinter and Pillow import; it is refreshed without blocking the caller
(no event loop to run) and paced to the env's ``render_fps``. Otherwise, or once the user
closes the window, the text view is printed. Nothing here is imported until "human" is asked for.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from ..engine.game import GameState
from .render_text import render_text


def display_available() -> bool:
    """Whether a window can be opened: a display on Linux, always on Windows and macOS."""
    if sys.platform.startswith(("win", "darwin")):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class TableWindow:
    """A tkinter window that shows table pictures; updated without blocking the caller."""

    def __init__(self, title: str = "Three Thirteen", fps: float = 2.0) -> None:
        import tkinter

        from PIL import ImageTk  # noqa: F401  (fails early when Pillow lacks Tk support)

        self._root: Any = tkinter.Tk()
        self._root.title(title)
        self._root.protocol("WM_DELETE_WINDOW", self.close)  # closing the window stops the pictures
        self._label = tkinter.Label(self._root)
        self._label.pack()
        self._photo: Any = None
        self._interval = 1.0 / fps if fps > 0 else 0.0
        self._last = 0.0

    def show(self, image: np.ndarray) -> None:
        """Display ``image``, pacing calls to the window's frame rate."""
        from PIL import Image, ImageTk

        self._photo = ImageTk.PhotoImage(Image.fromarray(image), master=self._root)
        self._label.configure(image=self._photo)
        self._root.update()
        wait = self._interval - (time.monotonic() - self._last)
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()

    @property
    def closed(self) -> bool:
        """Whether the window was closed."""
        return self._root is None

    def close(self) -> None:
        """Destroy the window (safe to call twice)."""
        if self._root is not None:
            try:
                self._root.destroy()
            except Exception:  # noqa: BLE001 - the user may have closed it already
                pass
            self._root = None


def show_human(window: TableWindow | None, state: GameState, seat: int, *, reveal_all: bool = False,
               fps: float = 2.0) -> TableWindow | None:
    """Show the table in ``window`` (opened on first use when a display exists) or print the text view.

    Returns the window to pass next time (``None`` when none could be opened). Once the user
    closes the window, the text view is printed instead.
    """
    if window is None and display_available():
        try:
            window = TableWindow(fps=fps)
        except Exception:  # noqa: BLE001 - no Tk, no Pillow Tk support, or the display refused
            window = None
    if window is not None and not window.closed:
        import tkinter

        from .render_image import render_table

        image = render_table(state, seat, reveal_all=reveal_all)
        try:
            window.show(image)
            return window
        except (tkinter.TclError, RuntimeError):  # the window was destroyed from outside
            window.close()
    print(render_text(state, seat))
    return window
