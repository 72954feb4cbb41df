"""Agents: scripted opponents and the common interface that learned policies share."""

from .base import Agent, RandomAgent, num_players_of
from .expert import ExpertAgent
from .greedy import GreedyAgent
from .ismcts import ISMCTSAgent
from .registry import agent_names, list_agents, make_agent, register_agent, register_checkpoint_loader

register_agent("random-v0", RandomAgent)
register_agent("greedy-v0", GreedyAgent)
register_agent("expert-v0", ExpertAgent)
register_agent("ismcts-v0", ISMCTSAgent)

__all__ = ["Agent", "ExpertAgent", "GreedyAgent", "ISMCTSAgent", "RandomAgent", "agent_names", "list_agents",
           "make_agent", "num_players_of", "register_agent", "register_checkpoint_loader"]
