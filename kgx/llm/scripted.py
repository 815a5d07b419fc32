"""A deterministic stand-in backbone for tests and benchmarks (litellm provider ``kgx-scripted``).

Its replies are derived from the prompt alone: the question is the line after ``Question:``;
enum choices are ranked by word overlap with it; free-text fields take the prompt line (outside
the question) that overlaps it most. Token counts are real counts of the text (litellm's
offline tokenizer), not placeholders. ``latency_s`` and ``failure_rate`` simulate a provider.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

import litellm
from litellm import CustomLLM, ModelResponse, Usage
from litellm.llms.custom_llm import CustomLLMError

STOPWORDS = frozenset(
    "a an the of in on at to for by with from and or is was are were be been what which who whom "
    "whose where when how did does do that this these those it its as into than then there".split()
)
TOKEN_MODEL = "gpt-3.5-turbo"


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def question_of(prompt: str) -> str:
    found = re.findall(r"^\s*(?:Question|Q)\s*:\s*(.+)$", prompt, flags=re.M)
    return found[-1] if found else prompt


def rank(candidates: list[Any], question: str) -> list[Any]:
    """Most overlapping first; ties keep the candidates' order."""
    q = words(question)
    return sorted(candidates, key=lambda c: -len(words(str(c)) & q))


def best_line(prompt: str, question: str) -> str:
    lines = [re.sub(r"^[\s\-*\d.()]+", "", line).strip() for line in prompt.splitlines()]
    lines = [line for line in lines if line and question not in line and not line.endswith(":")]
    if not lines:
        return question
    return rank(lines, question)[0]


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
        if "enum" in items:
            return rank(list(items["enum"]), question)[: schema.get("maxItems", size)]
        return [instance(items, prompt, question, name) for _ in range(size)]
    if kind == "integer" or kind == "number":
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if name in ("reasoning", "thought", "thoughts"):
        return f"Scripted reasoning about: {question}"
    return best_line(prompt, question)


def reply(messages: list[dict[str, str]], schema: dict[str, Any] | None) -> str:
    prompt = messages[-1]["content"]
    question = question_of(prompt)
    if schema is None:
        return "{" + best_line(prompt, question) + "}"
    return json.dumps(instance(schema, prompt, question))


class ScriptedLLM(CustomLLM):
    def prepare(self) -> None:
        litellm.token_counter(model=TOKEN_MODEL, text="warm up the tokenizer")

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                   model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
                   logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> ModelResponse:
        latency = float(optional_params.get("latency_s", 0.0))
        if latency:
            time.sleep(latency)
        rate = float(optional_params.get("failure_rate", 0.0))
        if rate and self._fails(messages, optional_params, rate):
            raise CustomLLMError(status_code=503, message="scripted transient failure")
        response_format = optional_params.get("response_format") or {}
        schema = response_format.get("json_schema", {}).get("schema")
        text = reply(messages, schema)
        prompt_tokens = litellm.token_counter(model=TOKEN_MODEL, messages=messages)
        completion_tokens = litellm.token_counter(model=TOKEN_MODEL, text=text, count_response_tokens=True)
        model_response.choices[0].message.content = text
        model_response.usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                     total_tokens=prompt_tokens + completion_tokens)
        model_response.model = model
        return model_response

    @staticmethod
    def _fails(messages: list, params: dict, rate: float) -> bool:
        """Deterministic per (prompt, attempt): the same run fails the same calls."""
        blob = json.dumps([messages, params.get("temperature"), params.get("seed"), params.get("attempt")])
        draw = int(hashlib.sha256(blob.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        return draw < rate
