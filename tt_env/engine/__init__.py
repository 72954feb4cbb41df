"""The Three Thirteen rules engine: cards, rules, the exact meld solver and the game.

Pure Python plus numpy (and an optional C accelerator for the solver, see ``solver_backend()``);
no RL imports.
"""

from .cards import card_str, cards_str, parse_cards
from .melds import (MeldResult, after_draw_values, best_melds, discard_penalties, draw_gains, least_penalty,
                    solver_backend)
from .rules import Rules

__all__ = ["MeldResult", "Rules", "after_draw_values", "best_melds", "card_str", "cards_str", "discard_penalties",
           "draw_gains", "least_penalty", "parse_cards", "solver_backend"]
