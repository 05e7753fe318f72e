"""What Ebbing makes of a sentence before storing it: the `ebbing classify` view of the write path."""

from __future__ import annotations

from typing import Any

from ebbing.ingest.classify import classify
from ebbing.ingest.facts import RuleFacts
from ebbing.ingest.guard import guard


def describe(text: str) -> dict[str, Any]:
    shield = guard(text)
    guess = classify(shield.text)
    return {
        "text": shield.text,  # as it would be stored: secrets replaced by placeholders
        "kind": guess.kind.value,
        "importance": guess.importance,
        "priority": guess.priority.value,
        "pin": guess.pin,
        "security": guess.security or bool(shield.secrets),
        "low_information": shield.low_information,
        "secrets": [{"kind": s.kind, "placeholder": s.placeholder} for s in shield.secrets],
        "facts": [{"subject": f.subject, "attribute": f.attribute, "value": f.value, "reason": f.reason,
                   "change": f.change} for f in RuleFacts().extract(shield.text)],
    }
