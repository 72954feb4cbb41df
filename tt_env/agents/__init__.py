"""Agents: scripted opponents and the common interface that learned policies share."""

from .base import Agent, RandomAgent, num_players_of
from .registry import list_agents, make_agent, register_agent, register_checkpoint_loader

register_agent("random-v0", RandomAgent)

__all__ = ["Agent", "RandomAgent", "list_agents", "make_agent", "num_players_of", "register_agent",
           "register_checkpoint_loader"]
