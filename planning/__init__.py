"""Planning with the world model: lookahead for agents, and an imagined gymnasium environment."""

from .agents import MiniWoBAgent, recorder_policy
from .env import ImaginedEnv, goal_text_checker
from .lookahead import Agent, Candidate, Lookahead, Ranked, as_agent
from .scorers import GoalTextScorer, ValueScorer, VLMJudgeScorer, parse_judgement

__all__ = [
    "Agent",
    "Candidate",
    "GoalTextScorer",
    "ImaginedEnv",
    "Lookahead",
    "MiniWoBAgent",
    "Ranked",
    "VLMJudgeScorer",
    "ValueScorer",
    "as_agent",
    "goal_text_checker",
    "parse_judgement",
    "recorder_policy",
]
