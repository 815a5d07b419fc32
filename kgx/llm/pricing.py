"""What a provider call costs, in tokens and dollars, including where the provider does not say.

A reply's usage and price come from the provider and litellm's map. Where they are missing kgx
counts itself, with one count of the prompt (:func:`prompt_tokens`): a server that reports no
usage, the rate limiter's budget, and a request cut at ``llm.timeout_s`` (:func:`timed_out`),
which the provider had received and may have done, and billed, all the same. The count is an
estimate in gpt-3.5-turbo's tokens, with the offline tokenizer the scripted double reports in
(kgx.llm.scripted): litellm's count for a model's own tokenizer may first download it (a Llama's
from Hugging Face), and offline that held each count ~30 s.
"""

from __future__ import annotations

from typing import Any, Optional

import litellm

from kgx.core.config import LLMConfig
from kgx.core.usage import Usage
from kgx.llm.messages import Messages
from kgx.llm.scripted import count_prompt, count_text


def prompt_tokens(messages: Messages) -> int:
    """The prompt's tokens as kgx counts them where the provider does not."""
    return count_prompt(messages)


def reply_usage(cfg: LLMConfig, messages: Messages, response: Any, text: str) -> tuple[int, int, Optional[float]]:
    """(input tokens, output tokens, cost) of a reply whose text is ``text``: as the provider
    reported them, or counted by kgx for a server that reports no usage (litellm gives zeros)."""
    usage = response.usage
    if usage is None or not (usage.prompt_tokens or usage.completion_tokens):
        tokens = prompt_tokens(messages), count_text(text)
        return *tokens, price(cfg, *tokens)
    if cfg.input_cost_per_token is not None and cfg.output_cost_per_token is not None:
        return usage.prompt_tokens, usage.completion_tokens, price(cfg, usage.prompt_tokens, usage.completion_tokens)
    # litellm prices every response it returns (None when its map lacks the model): computing
    # it again cost ~2 ms of CPU per call. kgx's own providers are unpriced.
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    return usage.prompt_tokens, usage.completion_tokens, None if cost is None else float(cost)


def price(cfg: LLMConfig, input_tokens: int, output_tokens: int) -> Optional[float]:
    """The price of a call's tokens: the backbone's own prices, else litellm's map; None when
    neither knows the model (kgx's own providers, most served models)."""
    if cfg.input_cost_per_token is not None and cfg.output_cost_per_token is not None:
        return input_tokens * cfg.input_cost_per_token + output_tokens * cfg.output_cost_per_token
    try:
        return sum(litellm.cost_per_token(model=cfg.model, prompt_tokens=input_tokens, completion_tokens=output_tokens))
    except Exception:  # not in litellm's map
        return None


def timed_out(cfg: LLMConfig, messages: Messages, attempts: int) -> Usage:
    """The bill of ``attempts`` requests of ``messages`` cut at ``llm.timeout_s``: each a billed
    call with the prompt's tokens and none of a reply, priced as the backbone's calls are (an
    unknown price counts as unpriced, as a reply's does)."""
    if not attempts:
        return Usage()
    tokens = prompt_tokens(messages)
    cost = price(cfg, tokens, 0)
    return Usage(
        billed_calls=attempts,
        billed_input_tokens=attempts * tokens,
        cost_usd=0.0 if cost is None else attempts * cost,
        unpriced_calls=attempts if cost is None else 0,
    )
