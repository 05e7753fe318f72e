"""The cold tier: records moved out of the live store into Parquet files.

Layout: `<archive>/tenant=<tenant>/month=<YYYY-MM>/<name>.parquet`, the month being the month the
record was created. Each file is written whole to a temporary name, fsynced, renamed into place and
its folder fsynced, so a file either exists complete or not at all. Files are never edited: dropping
a record (restore, purge) writes a replacement file. Which file holds which record is the store's
business (its archive index); this module only reads and writes files.

The archive may also live in any S3-compatible object store: `Archive("s3://bucket/prefix")`, through
pyarrow's S3 filesystem (credentials from the usual AWS variables; options in the URI's query, e.g.
`?endpoint_override=http://minio:9000&scheme=http&region=us-east-1`). There an object is written straight
to its name: an upload (a multipart one for large files) becomes visible only once complete, so a killed
upload leaves nothing, and the store's intent log removes what a killed sweep wrote but did not index, as it
does on disk. No folder, rename or fsync is involved.

Schema (one row a record): id, tenant, user_id, agent_id, session_id, text, kind, importance,
priority, pinned, held, security, created_at, updated_at, last_accessed_at (timestamps in UTC),
access_count, update_count, metadata (JSON text), source_ids (list of strings), content_hash,
embedding (list of float32), seq (the record's key in the live store), archived_at.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ebbing.model import Kind, MemoryRecord, Priority, Tier
from ebbing.store import files

_TS = pa.timestamp("us", tz="UTC")
SCHEMA = pa.schema([
    ("id", pa.string()), ("tenant", pa.string()), ("user_id", pa.string()), ("agent_id", pa.string()),
    ("session_id", pa.string()), ("text", pa.string()), ("kind", pa.string()), ("importance", pa.float64()),
    ("priority", pa.string()), ("pinned", pa.bool_()), ("held", pa.bool_()), ("security", pa.bool_()),
    ("created_at", _TS), ("updated_at", _TS), ("last_accessed_at", _TS), ("access_count", pa.int64()),
    ("update_count", pa.int64()), ("metadata", pa.string()), ("source_ids", pa.list_(pa.string())),
    ("content_hash", pa.string()), ("embedding", pa.list_(pa.float32())), ("seq", pa.int64()),
    ("archived_at", _TS),
    ("expires_at", _TS),  # added later: files written before it have no such column, read as None
    ("source", pa.string()),  # added later: read as "user" from older files
])


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _safe(part: str) -> str:
    """A tenant name as a folder name: readable when it is plain, hex when it is not."""
    return part if part.replace("-", "").replace("_", "").isalnum() else "x" + part.encode().hex()


def is_remote(location: object) -> bool:
    return isinstance(location, str) and location.startswith("s3://")


class Archive:
    def __init__(self, root: str | Path) -> None:
        """`root`: a folder, or an `s3://bucket/prefix` URI (see the module docstring)."""
        self.remote: tuple[pafs.FileSystem, str] | None = None
        if is_remote(root):
            filesystem, base = pafs.FileSystem.from_uri(str(root))
            self.remote = (filesystem, base.rstrip("/"))
            self.root = Path("/")  # unused for an object store: every path goes through `_object`
        else:
            self.root = Path(root)

    def _object(self, relative: Path) -> str:
        assert self.remote is not None
        return f"{self.remote[1]}/{relative.as_posix()}"

    def _exists(self, relative: Path) -> bool:
        if self.remote is None:
            return (self.root / relative).exists()
        return bool(self.remote[0].get_file_info(self._object(relative)).type == pafs.FileType.File)

    def _read_table(self, relative: Path) -> pa.Table:
        if self.remote is None:
            return pq.read_table(self.root / relative)
        return pq.read_table(self._object(relative), filesystem=self.remote[0])

    def new_path(self, tenant: str, month: str) -> Path:
        """Where a new file for this tenant and month goes (relative to the root)."""
        return Path(f"tenant={_safe(tenant)}") / f"month={month}" / f"part-{uuid.uuid4().hex}.parquet"

    @staticmethod
    def month_of(record: MemoryRecord) -> str:
        return record.created_at.strftime("%Y-%m")

    def write(self, relative: Path, records: Sequence[tuple[MemoryRecord, int]], at: float) -> None:
        """Write (record, seq) pairs to one file, durably."""
        self._durably(relative, pa.Table.from_pylist([_row(r, seq, at) for r, seq in records], schema=SCHEMA))

    def _durably(self, relative: Path, table: pa.Table) -> None:
        """Write to a temporary name, fsync, rename into place, fsync the folder: whole or absent. In an object
        store, one upload: visible whole once complete, never in part."""
        if self.remote is not None:
            pq.write_table(table, self._object(relative), filesystem=self.remote[0], compression="zstd")
            return
        target = self.root / relative
        files.private_folder(target.parent)
        temporary = target.with_suffix(".tmp")
        pq.write_table(table, temporary, compression="zstd")
        files.make_private(temporary)  # pyarrow creates it under the umask
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, target)
        _fsync_dir(target.parent)

    def read(self, relative: Path, ids: Iterable[str] | None = None) -> list[tuple[MemoryRecord, int]]:
        """(record, seq) pairs of a file, all of them or those with the given ids; tier is cold."""
        if not self._exists(relative):
            return []
        table = self._read_table(relative)
        if ids is not None:
            wanted = pa.array(list(ids), type=pa.string())
            table = table.filter(pc.is_in(table["id"], value_set=wanted))
        return [(_record(row), int(row["seq"])) for row in table.to_pylist()]

    def rewrite_only(self, relative: Path, ids: Iterable[str], replacement: Path) -> int:
        """Write `replacement` holding only the rows of `relative` with these `ids`; return how many it kept
        (0: the file is missing or holds none of them, and no replacement was written)."""
        if not self._exists(relative):
            return 0
        table = self._read_table(relative)
        kept = table.filter(pc.is_in(table["id"], value_set=pa.array(list(ids), type=pa.string())))
        if kept.num_rows == 0:
            return 0
        self._durably(replacement, kept)
        return int(kept.num_rows)

    def remove(self, relative: Path) -> None:
        if self.remote is not None:
            if self._exists(relative):
                self.remote[0].delete_file(self._object(relative))
            return
        path = self.root / relative
        path.with_suffix(".tmp").unlink(missing_ok=True)
        if path.exists():
            path.unlink()
            _fsync_dir(path.parent)

    def files(self) -> list[Path]:
        if self.remote is not None:
            filesystem, base = self.remote
            found = filesystem.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
            return sorted(Path(info.path[len(base) + 1:]) for info in found
                          if info.type == pafs.FileType.File and info.path.endswith(".parquet"))
        if not self.root.exists():
            return []
        return sorted(p.relative_to(self.root) for p in self.root.rglob("*.parquet"))




def _row(record: MemoryRecord, seq: int, at: float) -> dict[str, Any]:
    return {
        "id": record.id, "tenant": record.tenant, "user_id": record.user_id, "agent_id": record.agent_id,
        "session_id": record.session_id, "text": record.text, "kind": record.kind.value,
        "importance": record.importance, "priority": record.priority.value, "pinned": record.pinned,
        "held": record.held, "security": record.security, "created_at": record.created_at,
        "updated_at": record.updated_at, "last_accessed_at": record.last_accessed_at,
        "access_count": record.access_count, "update_count": record.update_count,
        "metadata": json.dumps(record.metadata, ensure_ascii=False), "source_ids": record.source_ids,
        "content_hash": record.content_hash,
        "embedding": None if record.embedding is None else np.asarray(record.embedding, dtype=np.float32).tolist(),
        "seq": seq, "archived_at": datetime.fromtimestamp(at, tz=UTC), "expires_at": record.expires_at,
        "source": record.source,
    }


def _record(row: dict[str, Any]) -> MemoryRecord:
    embedding = row["embedding"]
    return MemoryRecord(
        id=row["id"], text=row["text"], kind=Kind(row["kind"]), importance=row["importance"],
        priority=Priority(row["priority"]), created_at=row["created_at"], updated_at=row["updated_at"],
        tenant=row["tenant"], user_id=row["user_id"], agent_id=row["agent_id"], session_id=row["session_id"],
        pinned=row["pinned"], held=row["held"], security=row["security"],
        last_accessed_at=row["last_accessed_at"], access_count=row["access_count"],
        update_count=row["update_count"], tier=Tier.COLD, metadata=json.loads(row["metadata"]),
        source_ids=list(row["source_ids"] or []), content_hash=row["content_hash"],
        embedding=None if embedding is None else np.asarray(embedding, dtype=np.float32),
        expires_at=row.get("expires_at"), source=row.get("source") or "user",
    )
