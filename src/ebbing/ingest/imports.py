"""Which record a line of an import file is, so importing the same file twice (or again after a kill) adds
nothing the first run already added.

A line with an `id` is that record. A line without one gets an id derived from what identifies it: the
scope, the text, the metadata and, when the line gives one, its time (two "ok"s of one session with
different metadata stay two records; the same line twice is one). The id stays a ULID: its time part is the line's
time (zero when the line has none, so a re-run at another moment finds the same id), its random part a
keyed hash of the rest. The hash is keyed with the store's own secret because the text may hold a secret
value that a plain hash would let anyone confirm by guessing.
"""

from __future__ import annotations

import hashlib
import hmac
import json

from ulid import ULID

from ebbing.ingest.pipeline import Draft

_DOMAIN = b"ebbing.import.line-id.v1\x00"


def line_id(draft: Draft, timed: bool, key: bytes | None) -> str:
    """The id a line without one gets: the same for the same scope, text and time, in any run."""
    scope = draft.scope
    identity = json.dumps([scope.tenant, scope.user_id, scope.agent_id, scope.session_id, draft.text,
                           draft.created_at if timed else None, draft.metadata], ensure_ascii=False,
                          sort_keys=True).encode("utf-8", "surrogatepass")
    digest = hmac.new(key, identity, "sha256").digest() if key else hashlib.sha256(_DOMAIN + identity).digest()
    millis = round(draft.created_at * 1000) if timed else 0
    if not 0 <= millis < 1 << 48:  # before 1970 or past 10889: outside a ULID's clock
        millis = 0
    return str(ULID.from_bytes(millis.to_bytes(6, "big") + digest[:10]))
