"""LLM calls through litellm: the run's client (cache, retries, rate limits, billing), one question's
metered view of it (``question.QuestionLLM``), and the backbones that are no model: the scripted
double and the oracle that answers from the gold paths.
"""

# The modules a user or a plugin imports (``from kgx.llm import *`` imports them).
__all__ = ["client", "errors", "messages", "meter", "oracle", "pricing", "question", "scripted"]
