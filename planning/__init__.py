"""Planning with the world model: lookahead for agents, and an imagined gymnasium environment."""

from .agents import MiniWoBAgent, recorder_policy
from .env import ImaginedEnv, goal_text_checker
from .lookahead import Agent, Candidate, Lookahead, Ranked, as_agent
from .progress import ProgressScorer, TaskState
from .reward import LearnedReward
from .scorers import GoalTextScorer, ValueScorer, VLMJudgeScorer, WeightedScorer, parse_judgement

__all__ = [
    "Agent",
    "Candidate",
    "GoalTextScorer",
    "ImaginedEnv",
    "LearnedReward",
    "Lookahead",
    "MiniWoBAgent",
    "ProgressScorer",
    "Ranked",
    "TaskState",
    "VLMJudgeScorer",
    "ValueScorer",
    "WeightedScorer",
    "as_agent",
    "goal_text_checker",
    "parse_judgement",
    "recorder_policy",
]
