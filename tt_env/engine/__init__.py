"""The Three Thirteen rules engine: cards, rules, the exact meld solver and the game.

Pure Python plus numpy (and an optional C accelerator for the solver); no RL imports.
"""

from .cards import card_str, cards_str, parse_cards
from .melds import MeldResult, best_melds, least_penalty
from .rules import Rules

__all__ = ["MeldResult", "Rules", "best_melds", "card_str", "cards_str", "least_penalty", "parse_cards"]
