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

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ulid import ULID

from ebbing.errors import InvalidInput
from ebbing.ingest.pipeline import Draft
from ebbing.jsonl import read as read_jsonl
from ebbing.store.base import ColdReads, Reads

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


@dataclass
class ImportReport:
    imported: int = 0
    skipped: list[str] = field(default_factory=list)  # "line N: field: rule" for each bad line
    present: int = 0  # lines whose record was already there (an earlier run, or the same line twice)

    def to_dict(self) -> dict[str, Any]:
        return {"imported": self.imported, "present": self.present, "skipped": self.skipped}


class ImportStore(Reads, ColdReads, Protocol):
    """Whether a line's record is already stored, live or archived."""


def import_file(path: str | Path, store: ImportStore, tenant: str, tag_key: bytes | None,
                draft: Callable[[Mapping[str, Any]], Draft], write: Callable[[list[Draft]], object], *,
                skip_invalid: bool, on_progress: Callable[[int, int], None] | None) -> ImportReport:
    """`Memory.import_jsonl`: every line checked (`draft`) before anything is written, then written in batches,
    each line's record only if no earlier run stored it."""
    report = ImportReport()
    drafts: list[Draft] = []
    seen: set[str] = set()
    for number, item, problem in read_jsonl(path):
        if item is not None:
            try:
                made = draft(item)
                if made.id is None:  # the line's own identity, so a second run finds it
                    timed = item.get("at", item.get("created_at")) is not None
                    made = dataclasses.replace(made, id=line_id(made, timed, tag_key))
                assert made.id is not None
                if made.id in seen:
                    report.present += 1  # the same line twice in one file
                else:
                    seen.add(made.id)
                    drafts.append(made)
                continue
            except InvalidInput as exc:
                problem = f"line {number}: {exc}"
        report.skipped.append(problem or f"line {number}: invalid")
    if report.skipped and not skip_invalid:
        raise InvalidInput("file", "nothing imported; " + "; ".join(report.skipped[:20]))
    batch = 256
    for start in range(0, len(drafts), batch):
        chunk = drafts[start : start + batch]
        ids = [d.id for d in chunk if d.id is not None]
        # Already stored, live, in the trash or archived: an earlier run (perhaps killed) added it.
        stored = {i for i in ids if store.get(tenant, i) is not None} | set(store.cold(tenant, ids))
        fresh = [d for d in chunk if d.id not in stored]
        report.present += len(chunk) - len(fresh)
        if fresh:
            write(fresh)
        report.imported += len(fresh)
        if on_progress:
            on_progress(report.imported + report.present, len(drafts))
    return report
