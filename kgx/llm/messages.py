"""The shapes methods hand the LLM layer: chat messages and a reply validator. Kept free of
litellm so that importing a method (to compose a config, to print help) loads no LLM client."""

from __future__ import annotations

from typing import Any, Callable

Messages = list[dict[str, str]]
Validator = Callable[[Any], Any]  # returns the checked value or raises ValueError with the reason
