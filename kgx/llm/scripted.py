"""A deterministic stand-in backbone for tests and benchmarks (litellm provider ``kgx-scripted``).

Its replies are derived from the prompt alone: the question is the line after ``Question:``;
enum choices are ranked by word overlap with it, and so are the ``examples`` a list of free strings
gives as a hint (CGPE's clues); free-text fields take the prompt line (outside the question) that
overlaps it most. Token counts are real counts of the text (litellm's
offline tokenizer), not placeholders. ``latency_s`` and ``failure_rate`` simulate a provider,
and so does ``max_tokens``: a longer reply is cut there and finishes with "length".
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from typing import Any, Optional

import litellm
from litellm import CustomLLM, ModelResponse
from litellm.constants import TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS, TOKEN_COUNTER_MAX_EXACT_CHARS
from litellm.llms.custom_llm import CustomLLMError

from kgx.llm.reply import usage as reply_usage

STOPWORDS = frozenset(
    "a an the of in on at to for by with from and or is was are were be been what which who whom "
    "whose where when how did does do that this these those it its as into than then there".split()
)
TOKEN_MODEL = "gpt-3.5-turbo"


SHORT = 256  # texts up to this length (candidates, prompt lines) have their words kept: they recur


def words(text: str) -> frozenset[str]:
    """The content words of ``text``; a short text's are kept, since a method's candidates and
    prompt lines recur call after call (ranking them was a fifth of the scripted backbone's CPU)."""
    return _short_words(text) if len(text) <= SHORT else _words(text)


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


_WORD = re.compile(r"[a-z0-9]+")
_short_words = functools.lru_cache(maxsize=1 << 16)(_words)


def question_of(prompt: str) -> str:
    found = re.findall(r"^\s*(?:Question|Q)\s*:\s*(.+)$", prompt, flags=re.M)
    return found[-1] if found else prompt


def rank(candidates: list[Any], question: str) -> list[Any]:
    """Most overlapping first; ties keep the candidates' order."""
    q = words(question)
    return sorted(candidates, key=lambda c: -len(words(str(c)) & q))


def best_line(prompt: str, question: str) -> str:
    """The prompt line (outside the question) that overlaps the question most, the first of equals."""
    lines = [_BULLET.sub("", line).strip() for line in prompt.splitlines()]
    lines = [line for line in lines if line and question not in line and not line.endswith(":")]
    if not lines:
        return question
    q = words(question)
    return max(lines, key=lambda line: len(words(line) & q))  # rank()'s first, without sorting them all


_BULLET = re.compile(r"^[\s\-*\d.()]+")


def number(schema: dict[str, Any], prompt: str, question: str) -> float | int:
    """The share of the question's words that the rest of the prompt mentions, placed in the
    schema's [minimum, maximum] ([minimum, minimum + 1] for numbers without a maximum; integers
    without one stay at the minimum)."""
    integer = schema.get("type") == "integer"
    low = schema.get("minimum", 0)
    high = schema.get("maximum", low if integer else low + 1)
    asked = words(question)
    share = len(asked & words(prompt.replace(question, ""))) / len(asked) if asked else 0.0
    value = low + share * (high - low)
    return round(value) if integer else round(value, 2)


def scored_choice(items: dict[str, Any]) -> bool:
    """Objects carrying an enum choice and a number: a scored selection (ToG's pruning)."""
    props = items.get("properties", {})
    return (
        items.get("type") == "object"
        and any("enum" in sub for sub in props.values())
        and any(sub.get("type") == "number" for sub in props.values())
    )


def scored_choices(schema: dict[str, Any], prompt: str, question: str) -> list[dict[str, Any]]:
    """The best-overlapping choices, each once, as many as maxItems allows; every number field
    gets the choice's share of 1 + its overlap, in hundredths that add up to exactly 100."""
    items = schema["items"]
    props = items["properties"]
    key = next(k for k, sub in props.items() if "enum" in sub)
    ranked = rank(list(props[key]["enum"]), question)
    chosen = ranked[: max(1, min(len(ranked), schema.get("maxItems", len(ranked))))]
    asked = words(question)
    weights = [1 + len(words(str(c)) & asked) for c in chosen]
    exact = [100 * w / sum(weights) for w in weights]
    cents = [int(x) for x in exact]
    for i in sorted(range(len(exact)), key=lambda i: cents[i] - exact[i])[: 100 - sum(cents)]:
        cents[i] += 1
    shares = [c / 100 for c in cents]
    return [
        {
            k: c if k == key else share if sub.get("type") == "number" else instance(sub, prompt, question, k)
            for k, sub in props.items()
        }
        for c, share in zip(chosen, shares)
    ]


def instance(schema: dict[str, Any], prompt: str, question: str, name: str = "") -> Any:
    """A value of ``schema`` chosen from the prompt."""
    if "enum" in schema:
        return rank(list(schema["enum"]), question)[0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {key: instance(sub, prompt, question, key) for key, sub in props.items()}
    if kind == "array":
        items = schema.get("items", {})
        size = max(1, schema.get("minItems", 1))
        if "enum" in items or "examples" in items:  # a choice, or free strings with a hint
            return rank(list(items.get("enum", items.get("examples", []))), question)[: schema.get("maxItems", size)]
        if scored_choice(items):
            return scored_choices(schema, prompt, question)
        return [instance(items, prompt, question, name)] * size  # each item alike: chosen once
    if kind == "integer" or kind == "number":
        return number(schema, prompt, question)
    if kind == "boolean":
        # "Is this enough to answer?": yes when one prompt line outside the question covers at
        # least half of the question's content words, so a stage that asks it can also stop.
        asked = words(question)
        lines = [line for line in prompt.splitlines() if question not in line]
        return bool(asked) and any(2 * len(words(line) & asked) >= len(asked) for line in lines)
    if name in ("reasoning", "thought", "thoughts"):
        return f"Scripted reasoning about: {question}"
    return best_line(prompt, question)[: schema.get("maxLength")]


def reply(messages: list[dict[str, str]], schema: dict[str, Any] | None) -> str:
    prompt = messages[-1]["content"]
    question = question_of(prompt)
    if schema is None:
        return "{" + best_line(prompt, question) + "}"
    return json.dumps(instance(schema, prompt, question))


@functools.lru_cache(maxsize=1)
def tokenizer() -> dict[str, Any]:
    """litellm's tokenizer for TOKEN_MODEL, chosen once: litellm looks it up on every count
    otherwise, which cost more than the counting (the counts are the same)."""
    return litellm.utils.select_tokenizer(model=TOKEN_MODEL)


@functools.lru_cache(maxsize=1)
def _counting() -> Any:
    """What ``litellm.token_counter`` builds on every call for TOKEN_MODEL (its tokenizer and
    per-message overheads), built once: building it cost three times the counting. A test holds
    the counts equal to ``token_counter``'s."""
    from litellm.litellm_core_utils.token_counter import _MessageCountParams

    return _MessageCountParams(TOKEN_MODEL, tokenizer())


def count_text(text: str) -> int:
    """``litellm.token_counter(model=TOKEN_MODEL, text=text)``, which encodes a text in chunks of
    ``TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS`` and adds up their counts. A text past litellm's exact-count
    limit is extrapolated by litellm, as before."""
    if len(text) > TOKEN_COUNTER_MAX_EXACT_CHARS:
        return _counting().count_function(text)
    step = TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS
    return sum(_count_chunk(text[start : start + step]) for start in range(0, len(text), step))


# A line break before a non-space: the tokenizer's pre-split (cl100k's pattern) never joins text
# across the point after it, so a chunk's count is the sum of its lines' (each with its break).
# Matching the break itself lets the regex engine skip to it (a pattern that starts with a
# lookbehind tries every position: 3x slower).
_BREAK_BEFORE_TEXT = re.compile(r"\n(?=\S)")


@functools.lru_cache(maxsize=8192)
def _count_chunk(chunk: str) -> int:
    """A chunk's count as the sum of its lines' counts, each line's kept: a method's prompts repeat
    their instructions and examples line for line, and only a question's own lines are encoded
    (counting every line anew was 12% of ToG's CPU). A test holds the sums equal to litellm's counts."""
    *lines, last = _BREAK_BEFORE_TEXT.split(chunk)
    return sum(_count_line(line + "\n") for line in lines) + _count_line(last)


@functools.lru_cache(maxsize=1 << 16)
def _count_line(line: str) -> int:
    return _counting().count_function(line)


def count_prompt(messages: list[dict[str, str]]) -> int:
    """``litellm.token_counter(model=TOKEN_MODEL, messages=messages)`` for kgx's plain-text chat
    messages, as litellm counts them: each message's overhead and string fields (a name one
    token more), and the 3 tokens that prime the reply."""
    params = _counting()
    total = 3
    for message in messages:
        total += params.tokens_per_message
        for key, value in message.items():
            if isinstance(value, str):
                total += count_text(value)
                total += params.tokens_per_name if key == "name" else 0
    return total


def cut(text: str, max_tokens: int | None) -> tuple[str, str]:
    """``text`` within ``max_tokens`` tokens and the finish reason a provider would give:
    "length" when it had to be cut, "stop" when it fits (or no limit was sent)."""
    if max_tokens is None or len(text.encode()) <= max_tokens:  # a token is at least a byte: it fits
        return text, "stop"
    tokens = litellm.encode(model=TOKEN_MODEL, text=text, custom_tokenizer=tokenizer())
    if len(tokens) <= max_tokens:
        return text, "stop"
    return litellm.decode(model=TOKEN_MODEL, tokens=tokens[:max_tokens], custom_tokenizer=tokenizer()), "length"


class ScriptedLLM(CustomLLM):
    def prepare(self, options: dict[str, Any]) -> None:
        litellm.token_counter(model=TOKEN_MODEL, text="warm up the tokenizer")

    def completion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict,
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        latency = float(optional_params.get("latency_s", 0.0))
        if latency:
            time.sleep(latency)
        rate = float(optional_params.get("failure_rate", 0.0))
        if rate and self._fails(messages, optional_params, rate):
            raise CustomLLMError(status_code=503, message=f"{self.name} transient failure")
        response_format = optional_params.get("response_format") or {}
        schema = response_format.get("json_schema", {}).get("schema")
        text, finish = cut(self.reply(messages, schema, optional_params), optional_params.get("max_tokens"))
        prompt_tokens = count_prompt(messages)
        completion_tokens = count_text(text)
        model_response.choices[0].message.content = text
        model_response.choices[0].finish_reason = finish
        model_response.usage = reply_usage(model_response, prompt_tokens, completion_tokens)
        model_response.model = model
        return model_response

    name = "scripted"

    def reply(self, messages: list, schema: Optional[dict[str, Any]], params: dict) -> str:
        """The reply text; a subclass (the oracle) decides it otherwise, metered the same way."""
        return reply(messages, schema)

    @staticmethod
    def _fails(messages: list, params: dict, rate: float) -> bool:
        """Deterministic per (prompt, attempt, invocation): the same invocation of a run fails
        the same calls, and its rerun (the next invocation) draws anew, as a provider would."""
        parts = [messages, params.get("temperature"), params.get("seed"), params.get("attempt")]
        if params.get("invocation"):
            parts.append(params["invocation"])
        blob = json.dumps(parts)
        draw = int(hashlib.sha256(blob.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        return draw < rate
