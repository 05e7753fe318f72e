"""The LLM extension point: one method that turns a system and a user message into text."""

from __future__ import annotations

import json
import re
from typing import Any, Protocol, runtime_checkable

from ebbing.errors import EbbingError

JSON_REMINDER = "Answer with JSON only: one JSON value, no prose and no code fences."

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@runtime_checkable
class LLM(Protocol):
    """A chat model. `name` identifies it in logs and stored provenance.

    `json_mode=True` asks the model for a JSON answer (servers that support it constrain the output);
    callers still parse defensively, see `complete_json`.
    """

    name: str

    def complete(self, system: str, user: str, *, json_mode: bool = False, max_tokens: int = 512) -> str: ...


def complete_json(llm: LLM, system: str, user: str, *, max_tokens: int = 512) -> Any:
    """Asks for JSON and parses it; asks once more with a reminder before giving up with an EbbingError."""
    answer = llm.complete(system, user, json_mode=True, max_tokens=max_tokens)
    try:
        return parse_json(answer)
    except ValueError:
        pass
    # Small local models often wrap or forget the format once and comply when told again.
    answer = llm.complete(system, f"{user}\n\n{JSON_REMINDER}", json_mode=True, max_tokens=max_tokens)
    try:
        return parse_json(answer)
    except ValueError:
        raise EbbingError(f"the LLM did not answer with JSON: {answer.strip()[:80]}") from None


def parse_json(text: str) -> Any:
    """The JSON in a model's answer: the whole text, a fenced block, or the first value after leading prose.

    Raises ValueError when there is none.
    """
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block)
        except ValueError:
            continue
    # raw_decode stops at the end of the first complete value, so trailing prose ("hope this helps") is fine.
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        return value
    raise ValueError("no JSON value in the answer")
