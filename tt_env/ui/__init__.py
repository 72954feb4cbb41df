"""The people-facing side of the package: play, watch and picture games.

- :mod:`.play` (``python -m tt_env.ui.play``) and :mod:`.tui`: the game in a terminal;
- :mod:`.records` and :mod:`.replay` (``python -m tt_env.ui.replay``): saved games that replay;
- :mod:`.render_text`, :mod:`.render_image`, :mod:`.render_window`: the table as text, a
  picture and a window (the environments' ``render_mode``\\ s).

Nothing here is imported by ``import tt_env``; rich and Pillow (the ``render`` extra) are
imported only where a view needs them. The browser app is :mod:`tt_env.web`, next to it.
"""
