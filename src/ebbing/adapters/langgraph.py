"""`EbbingStore`: a LangGraph `BaseStore` backed by `Memory`, so LangGraph agents keep their long-term memory in
Ebbing (and it fades, consolidates and stays inspectable like any other memory).

How items map to records:

    item                                   record
    namespace ("memories", "alice")        user_id = namespace[user_at] ("alice"; None if the namespace is shorter)
                                           metadata["langgraph_namespace"] = "memories.alice" (labels never hold ".")
    key                                    metadata["langgraph_key"]
    value {"text": "...", "topic": "x"}    text = value["text"] (or "content", "memory", "data": the first string
                                           one); metadata["langgraph_value"] = the value with that field null (the
                                           text is kept once, screened for secrets like any record's); with
                                           `index=[paths]` (or the store's `fields`) the text is what those paths
                                           hold, and a value without such a field is indexed as its JSON
    put on an existing key                 `Memory.update` (same id, the change in its history)
    delete                                 `Memory.forget`: to the trash, restorable until purged
    search(query=...)                      `Memory.search` in the user's scope (counts as a use, ranks by relevance
                                           weighted by retention; nothing below the relevance floor comes back)
    search() without a query               the namespace's items, newest change first

So what Ebbing does to a record shows through: a forgotten record (trash) is gone from `get` and `search`, a
cold one is still returned by `get`; a value's text field comes back with secrets redacted; an edit made in the
inspector or the REST API is what the agent reads next.

Keys are found through an index of (namespace, key) -> record id, built from one `Memory.export()` on first use
and kept by this store's own writes. Another process writing items to the same file is seen after `refresh()`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from ebbing.errors import InvalidInput, NotFound
from ebbing.memory import Memory
from ebbing.model import MemoryRecord, Tier

NAMESPACE = "langgraph_namespace"
KEY = "langgraph_key"
VALUE = "langgraph_value"
TEXT_FIELD = "langgraph_text_field"
TEXT_FIELDS = ("text", "content", "memory", "data")  # the first one holding a string is the item's text

Namespace = tuple[str, ...]


class EbbingStore(BaseStore):
    """A LangGraph store whose items are Ebbing memories.

    `user_at` is the position of the user id in a namespace (1: `("memories", user_id)`; None: no user).
    `fields` are the value paths whose text Ebbing indexes (default: the first of text, content, memory, data
    holding a string, else the whole value as JSON); `put(..., index=[...])` overrides them per item.
    """

    def __init__(self, memory: Memory, *, user_at: int | None = 1, fields: Sequence[str] | None = None) -> None:
        if user_at is not None and (isinstance(user_at, bool) or not isinstance(user_at, int) or user_at < 0):
            raise InvalidInput("user_at", "must be a namespace position >= 0, or None for no user")
        self.memory = memory
        self.user_at = user_at
        self.fields = list(fields) if fields is not None else None
        self._index: dict[tuple[Namespace, str], str] | None = None
        self._lock = threading.RLock()

    # -- the BaseStore contract --------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        with self._lock:
            return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # The store is synchronous (SQLite); run it off the event loop.
        ops = list(ops)
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)

    def refresh(self) -> None:
        """Forget the key index; the next operation rebuilds it from the store (sees other writers' items)."""
        with self._lock:
            self._index = None

    # -- operations --------------------------------------------------------------------------------------

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            record = self._find(op.namespace, op.key)
            return None if record is None else self._item(record)
        if isinstance(op, PutOp):
            if op.value is None:
                self._delete(op.namespace, op.key)
            else:
                self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise InvalidInput("op", f"unknown operation {type(op).__name__}")

    def _put(self, op: PutOp) -> None:
        value = dict(op.value or {})
        text, text_field = self._text(value, op.index)
        kept = {k: None if k == text_field else v for k, v in value.items()}  # the text is the record's own
        metadata: dict[str, Any] = {NAMESPACE: ".".join(op.namespace), KEY: op.key, VALUE: kept}
        if text_field is not None:
            metadata[TEXT_FIELD] = text_field
        existing = self._find(op.namespace, op.key)
        if existing is not None:
            if existing.tier is Tier.COLD:  # an archived record is restored before it is changed
                existing = self.memory.restore(existing.id)
            if existing.text != text or existing.metadata != metadata:
                self.memory.update(existing.id, text if existing.text != text else None, metadata=metadata)
            return
        # Each key is its own record: no merging of restatements across keys.
        result = self.memory.add(text, user_id=self._user(op.namespace), metadata=metadata, dedupe=False)
        if not result.records:
            raise InvalidInput("value", "its text was dropped as low-information (IngestConfig.drop_low_information)")
        self._keys()[(op.namespace, op.key)] = result.records[0].id

    def _delete(self, namespace: Namespace, key: str) -> None:
        record = self._find(namespace, key)
        if record is not None:
            self.memory.forget(record.id, reason="deleted through the LangGraph store")
        self._keys().pop((namespace, key), None)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit < 0 or op.offset < 0:
            raise InvalidInput("limit" if op.limit < 0 else "offset", "must be >= 0")
        prefix = op.namespace_prefix
        spaces = sorted({ns for ns, _ in self._keys() if ns[: len(prefix)] == prefix})
        found: list[tuple[MemoryRecord, float | None]] = []
        if op.query:
            by_user: dict[str | None, list[str]] = {}
            for ns in spaces:
                by_user.setdefault(self._user(ns), []).append(".".join(ns))
            wanted = min(1000, op.offset + op.limit if not op.filter else 1000)
            for user, names in by_user.items():
                if wanted < 1:
                    break
                hits = self.memory.search(op.query, user_id=user, limit=wanted, filters={NAMESPACE: {"$in": names}})
                found += [(h.record, h.score) for h in hits if self._claims(h.record)]
            found.sort(key=lambda pair: -(pair[1] or 0.0))
        else:
            for (ns, _key), memory_id in list(self._keys().items()):
                if ns[: len(prefix)] == prefix and (record := self._live(memory_id)) is not None:
                    found.append((record, None))
            found.sort(key=lambda pair: pair[0].updated_at, reverse=True)
        items = []
        for record, score in found:
            item = self._item(record)
            if not op.filter or all(_matches(item.value.get(k), v) for k, v in op.filter.items()):
                items.append(SearchItem(item.namespace, item.key, item.value, item.created_at, item.updated_at,
                                        score))
        return items[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[Namespace]:
        spaces = {ns for ns, _ in self._keys()}
        if op.match_conditions:
            spaces = {ns for ns in spaces if all(_namespace_matches(c, ns) for c in op.match_conditions)}
        if op.max_depth is not None:
            spaces = {ns[: op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]

    # -- mapping -----------------------------------------------------------------------------------------

    def _user(self, namespace: Namespace) -> str | None:
        if self.user_at is None or len(namespace) <= self.user_at:
            return None
        return namespace[self.user_at]

    def _text(self, value: dict[str, Any], index: Any) -> tuple[str, str | None]:
        """The text Ebbing indexes for a value, and the top-level field it came from (None: derived)."""
        paths = index if isinstance(index, list) else self.fields
        if paths:
            if len(paths) == 1 and isinstance(value.get(paths[0]), str) and value[paths[0]].strip():
                return value[paths[0]], paths[0]  # one top-level text field: kept once, as the record's text
            texts = [t for path in paths for t in get_text_at_path(value, tokenize_path(path))]
            if any(t.strip() for t in texts):
                return "\n".join(texts), None
        for name in TEXT_FIELDS:
            if isinstance(value.get(name), str) and value[name].strip():
                return value[name], name
        try:
            return json.dumps(value, ensure_ascii=False, sort_keys=True), None
        except (TypeError, ValueError) as exc:
            raise InvalidInput("value", f"must be JSON-serialisable ({exc})") from None

    def _item(self, record: MemoryRecord) -> Item:
        meta = record.metadata
        value = dict(meta.get(VALUE) or {})
        if field := meta.get(TEXT_FIELD):
            value[field] = record.text
        return Item(value=value, key=meta[KEY], namespace=tuple(meta[NAMESPACE].split(".")),
                    created_at=record.created_at, updated_at=record.updated_at)

    # -- the key index -----------------------------------------------------------------------------------

    def _keys(self) -> dict[tuple[Namespace, str], str]:
        if self._index is None:
            index: dict[tuple[Namespace, str], tuple[str, str]] = {}
            for row in self.memory.export():
                meta = row["metadata"]
                if row["tier"] == Tier.TRASH.value or NAMESPACE not in meta or KEY not in meta:
                    continue
                slot = (tuple(str(meta[NAMESPACE]).split(".")), str(meta[KEY]))
                if slot not in index or index[slot][0] < row["updated_at"]:  # two claims: the latest change wins
                    index[slot] = (row["updated_at"], row["id"])
            self._index = {slot: memory_id for slot, (_, memory_id) in index.items()}
        return self._index

    def _claims(self, record: MemoryRecord) -> bool:
        """Whether the record is its key's item: a record another writer added since the index was built is
        learnt; of two records claiming one key (an old one restored from the trash), the indexed one wins."""
        slot = (tuple(str(record.metadata[NAMESPACE]).split(".")), str(record.metadata[KEY]))
        return self._keys().setdefault(slot, record.id) == record.id

    def _live(self, memory_id: str) -> MemoryRecord | None:
        try:
            record = self.memory.get(memory_id)
        except NotFound:
            return None
        return None if record.tier is Tier.TRASH else record

    def _find(self, namespace: Namespace, key: str) -> MemoryRecord | None:
        """The item's record, unless it was forgotten or purged since (then the index drops it)."""
        keys = self._keys()
        memory_id = keys.get((namespace, key))
        if memory_id is None:
            return None
        record = self._live(memory_id)
        if record is None:
            keys.pop((namespace, key), None)
        return record


def _matches(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: equality (nested objects by their keys) or {"$op": operand}."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_compare(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    return bool(value == wanted)


def _compare(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise InvalidInput("filter", f"unknown operator {op!r}; use $eq, $ne, $gt, $gte, $lt or $lte")
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[op]


def _namespace_matches(condition: MatchCondition, namespace: Namespace) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInput("match_type", f"must be prefix or suffix, not {condition.match_type!r}")
    return all(want == "*" or have == want for have, want in pairs)
