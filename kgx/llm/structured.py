"""Structured output: how a reply's JSON schema reaches each backbone, and checking the reply.

Servers disagree on the request form. OpenAI and vLLM take ``response_format`` ``{"type":
"json_schema", "json_schema": {...}}``; llama-cpp-python's server takes only ``{"type":
"json_object", "schema": {...}}`` (and answers json_schema with an HTTP 500 validation error);
others take neither, and the schema has to go into the prompt. ``llm.structured_output`` names
the form, or ``auto``: then one tiny request per form, strongest first, finds the first one the
server both accepts and enforces, once per backbone and run (``StructuredModes``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
from typing import Any, Callable, Optional

import jsonschema
import jsonschema_rs
import litellm

from kgx.core.config import LLMConfig
from kgx.core.faults import InfraError
from kgx.llm import providers
from kgx.llm.schema_shape import shape_of

JSON_SCHEMA, JSON_OBJECT_SCHEMA, PROMPTED = LLMConfig.STRUCTURED_MODES
AUTO = "auto"
Messages = list[dict[str, str]]

# The probe does not ask for JSON: a server that ignores response_format answers plain "OK",
# which fails the schema, so a form is only chosen where the server enforces it.
PROBE_MESSAGES: Messages = [{"role": "user", "content": "Reply with the word OK."}]
PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reply": {"type": "string", "enum": ["OK"]}},
    "required": ["reply"],
}
PROBE_MAX_TOKENS = 32  # room for the JSON and its whitespace; a cut reply would fail the schema


_DECODER = json.JSONDecoder(strict=False)  # raw line breaks in strings allowed (see parse_json)


def parse_json(text: str, schema: dict[str, Any]) -> Any:
    """The first JSON value in ``text`` (code fences and chatter around it allowed), checked
    against ``schema``. Raw line breaks inside strings are accepted: llama.cpp's JSON grammar
    lets small models write them, and they do not change what the reply says. Raises ValueError
    saying what is wrong."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError(f"no JSON in output: {text[:200]!r}")
    try:
        value, _ = _DECODER.raw_decode(text[min(starts) :])
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg}): {text[:200]!r}") from exc
    shape = shape_of(schema)
    if not _validator(shape.schema_json).is_valid(value) or shape.outside(value):
        raise ValueError(f"output does not match the schema: {_wording(schema, value)}")
    return value


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    """The jsonschema-rs validator of one schema shape (``kgx.llm.schema_shape``: the schema
    without its per-question choices), built once per shape, since building it costs a thousand
    times validating a reply. It reads a schema without ``$schema`` as draft 2020-12, as jsonschema
    does, and checks the schema against its metaschema itself (jsonschema's ``check_schema`` took
    200 times as long: 3 ms a shape, and ToG has a shape per candidate count). A schema that fails
    is kgx's fault, not the reply's: ``SchemaError``, never the ValueError of an invalid reply."""
    try:
        return jsonschema_rs.validator_for(json.loads(schema_json))
    except jsonschema_rs.ValidationError as exc:
        raise jsonschema.SchemaError(f"not a valid JSON schema: {exc.message}") from None


def _wording(schema: dict[str, Any], value: Any) -> str:
    """What is wrong with ``value``, as jsonschema words it (it explains better than it decides:
    70 µs a reply against jsonschema-rs's 0.5), from the whole schema in sorted-key order, as
    kgx always worded it. Only a refused reply pays for it; its shape was checked already."""
    whole = json.loads(json.dumps(schema, sort_keys=True))
    return jsonschema.exceptions.best_match(
        jsonschema.validators.validator_for(whole)(whole).iter_errors(value)
    ).message


def with_schema_instruction(messages: Messages, schema: dict[str, Any]) -> Messages:
    """For the prompted form: the schema goes into the last message."""
    note = "Reply with one JSON object that matches this JSON Schema, and nothing else:\n" + json.dumps(
        schema, ensure_ascii=False
    )
    return [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + "\n\n" + note}]


def response_format(mode: str, schema: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The ``response_format`` of a request in ``mode``; None for the prompted form."""
    if mode == JSON_SCHEMA:
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    if mode == JSON_OBJECT_SCHEMA:
        return {"type": "json_object", "schema": schema}
    return None


def backbone_key(cfg: LLMConfig) -> str:
    """What makes two backbones the same server and model (stage backbones often are)."""
    return json.dumps([cfg.model, cfg.api_base, cfg.api_key_env, dataclasses.asdict(cfg.local)])


def in_process(cfg: LLMConfig) -> bool:
    """kgx's own providers take json_schema and enforce it themselves (the local model through
    llama.cpp's json_object form): nothing to probe."""
    return cfg.model.split("/")[0] in (providers.LOCAL, providers.SCRIPTED, providers.ORACLE)


# send(cfg, mode, messages, schema or None) -> (reply text, requests sent); raises InfraError.
Sender = Callable[[LLMConfig, str, Messages, Optional[dict[str, Any]]], tuple[str, int]]


class StructuredModes:
    """The form each backbone of a run gets; ``auto`` ones are probed once (under a lock, so
    parallel questions that reach an unprobed backbone wait for one probe, not send several)."""

    def __init__(self, send: Sender):
        self._send = send
        self._probed: dict[str, str] = {}
        self._lock = threading.Lock()

    def probed(self) -> dict[str, str]:
        """What the probes found, by backbone key: what a worker process adopts (kgx.run.processes)
        instead of probing every server again."""
        return dict(self._probed)

    def adopt(self, probed: dict[str, str]) -> None:
        self._probed.update(probed)

    def unprobed(self, cfg: LLMConfig) -> bool:
        """Whether ``cfg`` is auto and its server's form is not known yet (pre-flight probes those)."""
        return cfg.structured_output == AUTO and not in_process(cfg) and backbone_key(cfg) not in self._probed

    def of(self, cfg: LLMConfig) -> str:
        """The form for ``cfg``: as configured; for auto what the probe found (probing now if
        pre-flight has not); for null what litellm's model map says about the model."""
        if cfg.structured_output == AUTO and not in_process(cfg):
            if self.unprobed(cfg):
                self.probe(cfg)
            return self._probed[backbone_key(cfg)]
        if cfg.structured_output not in (None, AUTO):
            return cfg.structured_output
        if in_process(cfg):
            return JSON_SCHEMA
        try:
            return JSON_SCHEMA if litellm.supports_response_schema(model=cfg.model) else PROMPTED
        except Exception:  # litellm raises for models missing from its map
            return PROMPTED

    def chosen(self, backbones: list[LLMConfig]) -> dict[str, str]:
        """{backbone name: form} without probing; an auto backbone not yet probed shows ``auto``.
        Backbones that share a name but not a form (a stage's override) show both, comma-joined."""
        forms: dict[str, list[str]] = {}
        for cfg in backbones:
            form = AUTO if self.unprobed(cfg) else self.of(cfg)
            if form not in forms.setdefault(cfg.name, []):
                forms[cfg.name].append(form)
        return {name: ",".join(found) for name, found in forms.items()}

    def probe(self, cfg: LLMConfig) -> int:
        """Find the first form the server accepts and enforces; returns the requests sent (0 if
        already known). A form the server rejects as a bad request (400, 422, a 500 validation
        error) or does not enforce moves on to the next; the prompted form needs nothing from
        the server and ends the search. Any other error (auth, not found, unreachable) raises."""
        with self._lock:
            if not self.unprobed(cfg):
                return 0
            sent = 0
            for mode in (JSON_SCHEMA, JSON_OBJECT_SCHEMA):
                try:
                    text, requests = self._send(cfg, mode, PROBE_MESSAGES, PROBE_SCHEMA)
                except InfraError as exc:
                    if exc.kind != "llm.bad_request":
                        raise
                    sent += 1  # refusals are not retried
                    continue
                sent += requests
                try:
                    parse_json(text, PROBE_SCHEMA)
                except ValueError:
                    continue
                self._probed[backbone_key(cfg)] = mode
                return sent
            _, requests = self._send(cfg, PROMPTED, with_schema_instruction(PROBE_MESSAGES, PROBE_SCHEMA), None)
            self._probed[backbone_key(cfg)] = PROMPTED
            return sent + requests
