"""One question's transcript as MLflow spans, built from its trace (``kgx.track.transcripts`` logs them).

A trace's root span is the question (inputs: its text and topic entities; outputs: the
prediction; status, gold, scores and error kind as attributes), with a span per stage under it
and, under those, a span per LLM call (messages, reply, tokens, latency, cache, retries, parse
failure) and per KG call (operation, arguments, rows, latency). Trace tags make the UI's search
work: ``tags.kgx.status = 'error'``, ``tags.kgx.hits1 = '0'``; a question's trace is named by its
id (``trace.name = 'demo-002'``). A trace records durations, not start times: a question ends
when its trace was written (``end_ns``), starts its latency before that, and its calls are laid
end to end from its start.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Optional

from kgx.results.record import Record

PREFIX = "kgx."
REQUEST_ID, SPAN_TYPE = "mlflow.traceRequestId", "mlflow.spanType"
INPUTS, OUTPUTS = "mlflow.spanInputs", "mlflow.spanOutputs"
TOKEN_USAGE, MODEL, COST = "mlflow.chat.tokenUsage", "mlflow.llm.model", "mlflow.llm.cost"
TRACE_TAG = "mlflow.traceTag."  # a root span attribute the store turns into a trace tag
# Trace tags cost the store a write each, so only what a search needs is one: the headline score
# among the scores; every score is in the root span's kgx.scores.
TAGGED_SCORES = ("hits1",)
OK, ERROR = "STATUS_CODE_OK", "STATUS_CODE_ERROR"
MAX_TRACE_NAME = 4096  # MLflow refuses a longer trace name, and with it the whole batch of traces


def attempt_key(record: Record) -> str:
    """Tells attempts at a question apart: the latency is measured to the nanosecond, so two
    attempts practically never share it, and it survives the round trip through ``predictions.jsonl``."""
    return hashlib.sha256(f"{record.id}\0{record.latency_s!r}".encode()).hexdigest()[:16]


def trace_name(question_id: str) -> str:
    """The question's id, as a trace is named and searched; an id too long for MLflow is cut and
    told apart from other cut ids by a hash of the whole id (predictions.jsonl keeps it whole)."""
    if len(question_id) <= MAX_TRACE_NAME:
        return question_id
    digest = hashlib.sha256(question_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{question_id[: MAX_TRACE_NAME - len(digest) - 1]}~{digest}"


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def dump(value: Any) -> str:
    """An attribute value as MLflow stores it (JSON); text UTF-8 cannot hold stays escaped."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, default=str)
    return text


@dataclass
class Tree:
    """One trace's spans, as MLflow's span dictionaries (the form ``Span.from_dict`` reads)."""

    otel_id: int = field(default_factory=lambda: secrets.randbits(128) or 1)
    spans: list[dict[str, Any]] = field(default_factory=list)

    @property
    def trace_id(self) -> str:
        return f"tr-{self.otel_id:032x}"

    def add(
        self,
        name: str,
        kind: str,
        start: int,
        end: int,
        parent: Optional[int] = None,
        inputs: Any = None,
        outputs: Any = None,
        attributes: Optional[dict[str, Any]] = None,
        error: str = "",
        events: Optional[list[dict[str, Any]]] = None,
    ) -> int:
        """Append a finished span and return its id, for its children's ``parent``."""
        span_id = secrets.randbits(64) or 1
        attrs = {REQUEST_ID: dump(self.trace_id), SPAN_TYPE: dump(kind)}
        for key, value in ((INPUTS, inputs), (OUTPUTS, outputs), *(attributes or {}).items()):
            if value is not None:
                attrs[key] = dump(value)
        self.spans.append(
            {
                "trace_id": _b64(self.otel_id, 16),
                "span_id": _b64(span_id, 8),
                "parent_span_id": _b64(parent, 8) if parent else None,
                "name": name,
                "start_time_unix_nano": start,
                "end_time_unix_nano": end,
                "events": events or [],
                "status": {"code": ERROR if error else OK, "message": error[:1000]},
                "attributes": attrs,
            }
        )
        return span_id


def _b64(value: int, size: int) -> str:
    return base64.b64encode(value.to_bytes(size, "big")).decode()


def stages(events: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The events in runs of one stage. A KG call has no stage of its own: it gathers the input
    of the LLM call after it (ToG's relations before relation_prune), so it joins that stage;
    calls after a question's last LLM call join the stage before them."""
    names: list[Optional[str]] = [e.get("stage") for e in events]
    following: Optional[str] = None
    for i in reversed(range(len(names))):
        following = names[i] = names[i] or following
    previous = "kg"
    for i, name in enumerate(names):
        previous = names[i] = name or previous
    return [(stage, [e for _, e in run]) for stage, run in itertools.groupby(zip(names, events), key=lambda p: p[0])]


def build(record: Record, data: dict[str, Any]) -> Tree:
    """The transcript of one finished question from its trace (kgx.core.trace_store)."""
    events, end = data.get("events", []), data["end_ns"]
    start = end - ns(record.latency_s)
    calls_end = start + sum(ns(e.get("latency_s", 0.0)) for e in events)
    tree = Tree()
    root = tree.add(
        trace_name(record.id),
        "AGENT",
        start,
        max(end, calls_end),
        inputs={"question": record.question, "topic_entities": data.get("topic_entities", {})},
        outputs={"answer": record.prediction.answer, "answers": record.prediction.answers},
        attributes=_root_attributes(record),
        error=record.prediction.reason if record.failed else "",
        events=_exception(record, data.get("error", ""), end),
    )
    cursor = start
    for stage, run in stages(events):
        cursor = _stage(tree, root, stage, run, cursor)
    return tree


def _root_attributes(record: Record) -> dict[str, Any]:
    failure = record.failure
    tags = {
        "mlflow.traceName": trace_name(record.id),
        "attempt": attempt_key(record),
        "status": record.status,
        **({"error": failure.kind} if failure else {}),
        **{name: f"{record.scores[name]:g}" for name in TAGGED_SCORES if name in record.scores},
    }
    return {
        **{TRACE_TAG + (k if k.startswith("mlflow.") else PREFIX + k): v for k, v in tags.items()},
        "kgx.status": record.status,
        "kgx.gold": record.gold,
        "kgx.scores": record.scores,
        "kgx.error": failure.to_dict() if failure else None,
        "kgx.reason": record.prediction.reason or None,
        "kgx.evidence": record.prediction.evidence or None,
        "kgx.stats": record.prediction.stats or None,
        "kgx.latency_s": record.latency_s,
        "kgx.usage": record.usage.to_dict(),
        "kgx.kg": record.kg.to_dict(),
    }


def _exception(record: Record, traceback: str, when: int) -> list[dict[str, Any]]:
    """The method's traceback as an OpenTelemetry exception event on the root span."""
    failure = record.failure
    if failure is None or not traceback:
        return []
    return [
        {
            "name": "exception",
            "time_unix_nano": when,
            "attributes": {
                "exception.type": failure.exception,
                "exception.message": failure.message,
                "exception.stacktrace": traceback,
            },
        }
    ]


def _stage(tree: Tree, root: int, stage: str, run: list[dict[str, Any]], cursor: int) -> int:
    """A stage's span and its calls from ``cursor`` on; returns where the next stage starts.
    A method's notes (a fallback, a discarded choice) become events of the stage span."""
    end = cursor + sum(ns(e.get("latency_s", 0.0)) for e in run)
    notes = [e for e in run if e.get("kind") == "note"]
    parent = tree.add(
        stage,
        "CHAIN",
        cursor,
        end,
        root,
        events=[
            {
                "name": note.get("message", "")[:1000],
                "time_unix_nano": cursor,
                "attributes": {"kgx.stage": stage, "kgx.data": dump(note.get("data", {}))},
            }
            for note in notes
        ],
    )
    for event in run:
        if event.get("kind") in ("llm", "kg"):
            took = ns(event.get("latency_s", 0.0))
            (_llm if event["kind"] == "llm" else _kg)(tree, parent, event, cursor, cursor + took)
            cursor += took
    return end


def _llm(tree: Tree, parent: int, e: dict[str, Any], start: int, end: int) -> None:
    """An LLM call in OpenAI's request and reply form, which the MLflow UI shows as a chat."""
    reply = None
    if e.get("response") or not e.get("error"):
        reply = {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length" if e.get("truncated") else "stop",
                    "message": {"role": "assistant", "content": e.get("response", "")},
                }
            ]
        }
    tokens_in, tokens_out = e.get("input_tokens", 0), e.get("output_tokens", 0)
    attempt = e.get("attempt", 0)
    tree.add(
        "llm" if not attempt else f"llm retry {attempt}",
        "CHAT_MODEL",
        start,
        end,
        parent,
        inputs={
            "model": e.get("model"),
            "messages": e.get("messages", []),
            "temperature": e.get("temperature"),
            "max_tokens": e.get("max_tokens") or None,
        },
        outputs=reply,
        error=e.get("error", ""),
        attributes={
            # kgx's own cost (0 for a cache hit); {} when unknown, which stops the store from
            # pricing the call itself (slow, and a guess where kgx knows no price).
            COST: {} if e.get("cost_usd") is None else {"total_cost": e["cost_usd"]},
            MODEL: e.get("model"),
            TOKEN_USAGE: {
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
            "kgx.stage": e.get("stage"),
            "kgx.input_tokens": tokens_in,
            "kgx.output_tokens": tokens_out,
            "kgx.latency_s": e.get("latency_s", 0.0),
            "kgx.cached": e.get("cached", False),
            "kgx.retries": e.get("retries", 0),
            "kgx.attempt": attempt,
            "kgx.parse_failure": e.get("error") if e.get("error") and reply else None,
            "kgx.truncated": e.get("truncated", False),
            "kgx.cost_usd": e.get("cost_usd"),
        },
    )


def _kg(tree: Tree, parent: int, e: dict[str, Any], start: int, end: int) -> None:
    capped = e.get("capped_from", 0)
    tree.add(
        f"kg.{e.get('operation', '?')}",
        "TOOL",
        start,
        end,
        parent,
        inputs=e.get("arguments", {}),
        outputs={"rows": e.get("rows", 0), **({"capped_from": capped} if capped else {})},
        error=e.get("error", ""),
        attributes={
            "kgx.rows": e.get("rows", 0),
            "kgx.capped_from": capped or None,
            "kgx.latency_s": e.get("latency_s", 0.0),
        },
    )
