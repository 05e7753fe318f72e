"""The HNSW graphs of a SQLite store's big scopes (`store.graph`): opened from their files beside the store or
built from it, kept in step with the vector journal that migration 0007's triggers write, and saved again.

A graph file is `<scope hash>-<build token>-<journal position>.graph` in `<store>.graphs/`; `graph_scopes` names
each graphed scope's current file and how far into `vector_journal` it is. The store decides when a scope gets a
graph (`SQLiteStore.graph_from`) and holds the graphs it loaded; this module does everything else.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from secrets import token_hex

import numpy as np

from ebbing.model import LIVE_TIERS
from ebbing.store.graph import ScopeGraph

# A graph is saved again after this many changes (or a tenth of its size).
GRAPH_SAVE_EVERY = 5_000
_LIVE = "('" + "', '".join(t.value for t in LIVE_TIERS) + "')"
_SCOPE = f"m.tenant = ? AND m.user_id IS ? AND m.tier IN {_LIVE}"  # a scope's live records


class SQLiteGraphs:
    """The graph files of one store. `conn` is the store's connection and `write` its write transaction; the
    caller holds the store's lock around every call."""

    def __init__(self, conn: sqlite3.Connection, write: Callable[[], AbstractContextManager[sqlite3.Connection]],
                 folder: Path, read_only: bool) -> None:
        self._conn, self._write, self.folder, self.read_only = conn, write, folder, read_only

    def open(self, tenant: str, user_id: str | None) -> ScopeGraph | None:
        """The scope's graph: its file plus the journal since, or built from the store when there is no usable
        file. Building registers the scope first, so every change from then on is journaled: the vectors are
        read after that, and whatever changed meanwhile is replayed (replaying re-reads a record's current
        state, so a change seen twice does no harm)."""
        scope = self._conn.execute("SELECT json_array(?, ?)", (tenant, user_id)).fetchone()[0]
        row = self._conn.execute("SELECT file, applied FROM graph_scopes WHERE scope = ?", (scope,)).fetchone()
        if row is not None:
            loaded = ScopeGraph.load(self.folder / row[0])
            if loaded is not None:
                loaded.scope, loaded.file, loaded.applied = scope, row[0], row[1]
                return self.replay(loaded)
        # Each build has a token of its own in its file names, so a graph held from an earlier build (before a
        # purge, say) is never taken for this one, nor saved over it.
        file = _graph_file(hashlib.sha256(scope.encode()).hexdigest()[:32], token_hex(6), 0)
        where, params = _SCOPE, [tenant, user_id]
        with self._write() as conn:
            applied = conn.execute("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'vector_journal'"
                                   ).fetchone()[0]
            conn.execute("INSERT OR REPLACE INTO graph_scopes VALUES (?, ?, ?)", (scope, file, applied))
            conn.execute("DELETE FROM vector_journal WHERE scope = ?", (scope,))
        graph: ScopeGraph | None = None
        cursor = self._conn.execute(
            f"SELECT m.seq, v.vector FROM memories m JOIN vectors v ON v.seq = m.seq WHERE {where}", params)
        while rows := cursor.fetchmany(65536):
            keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
            graph = graph or ScopeGraph(vectors.shape[1], scope=scope, file=file)
            graph.upsert(keys, vectors, threads=0)  # every core: a one-off build
        if graph is None:  # emptied since it was counted
            with self._write() as conn:
                conn.execute("DELETE FROM graph_scopes WHERE scope = ?", (scope,))
            return None
        graph.applied = applied
        self.replay(graph)
        self.save(graph)
        if row is not None and row[0] != graph.file:  # the unreadable file this build replaces
            with contextlib.suppress(FileNotFoundError):
                (self.folder / row[0]).unlink()
        return graph

    def rescored(self, keys: list[int], vector: np.ndarray, limit: int) -> list[int]:
        """The `limit` nearest of a graph's nominees by their float32 vectors: the graph's int8 codes are coarse
        (usearch scales unit vectors by 127, so most components get a few levels), and twice the nominees,
        re-scored exactly, recover most of what they misorder."""
        if len(keys) <= limit:
            return keys
        rows = self._conn.execute(f"SELECT seq, vector FROM vectors WHERE seq IN ({', '.join('?' * len(keys))})",
                                  keys).fetchall()
        seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        scores = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1) @ vector
        return [int(seqs[i]) for i in np.argsort(-scores, kind="stable")[:limit]]

    def current(self, graph: ScopeGraph) -> ScopeGraph | None:
        """`graph` after replaying the journal; None when it must be opened afresh (its registration went with
        a purge, or another process saved a newer file and pruned the journal it would need)."""
        row = self._conn.execute("SELECT file, applied FROM graph_scopes WHERE scope = ?", (graph.scope,)).fetchone()
        if row is None or _build(row[0]) != _build(graph.file) or row[1] > graph.applied:
            return None
        return self.replay(graph)

    def replay(self, graph: ScopeGraph) -> ScopeGraph:
        """Apply the journal rows this graph has not seen: each named record is re-read, and is in the graph if
        it is live in this scope now, out of it otherwise."""
        rows = self._conn.execute("SELECT id, seq FROM vector_journal WHERE scope = ? AND id > ? ORDER BY id",
                                  (graph.scope, graph.applied)).fetchall()
        if not rows:
            return graph
        named = sorted({r[1] for r in rows})
        live: dict[int, bytes] = {}
        for start in range(0, len(named), 900):  # under SQLite's bound-parameter limit
            part = named[start:start + 900]
            live.update(self._conn.execute(
                f"SELECT m.seq, v.vector FROM memories m JOIN vectors v ON v.seq = m.seq WHERE m.seq IN "
                f"({', '.join('?' * len(part))}) AND m.tier IN {_LIVE} AND json_array(m.tenant, m.user_id) = ?",
                (*part, graph.scope)).fetchall())
        graph.remove([seq for seq in named if seq not in live])
        if live:
            graph.upsert(np.fromiter(live, dtype=np.int64, count=len(live)),
                         np.frombuffer(b"".join(live.values()), dtype="<f4").reshape(len(live), -1))
        graph.applied = rows[-1][0]
        if graph.unsaved >= max(GRAPH_SAVE_EVERY, graph.size // 10) and not self.read_only:
            self.save(graph)
        return graph

    def save(self, graph: ScopeGraph) -> None:
        """Write the graph to a new file and point the scope at it; the journal it holds the effect of is
        pruned. A file named by its journal position is never rewritten in place, so a reader that loaded the
        registration always finds the file it names."""
        name, build, _ = graph.file[: -len(".graph")].split("-")
        file = _graph_file(name, build, graph.applied)
        if file == graph.file and not graph.unsaved and (self.folder / file).exists():
            return
        graph.save(self.folder / file)
        with self._write() as conn:
            old = conn.execute("SELECT file FROM graph_scopes WHERE scope = ? AND applied <= ?",
                               (graph.scope, graph.applied)).fetchone()
            if old is None or _build(old[0]) != build:  # purged or rebuilt meanwhile, or saved newer elsewhere
                superseded = file
            else:
                conn.execute("UPDATE graph_scopes SET file = ?, applied = ? WHERE scope = ?",
                             (file, graph.applied, graph.scope))
                conn.execute("DELETE FROM vector_journal WHERE scope = ? AND id <= ?", (graph.scope, graph.applied))
                superseded = old[0]
        graph.file = file
        if superseded != file:
            with contextlib.suppress(FileNotFoundError):
                (self.folder / superseded).unlink()


def _graph_file(name: str, build: str, applied: int) -> str:
    """A graph file's name: the scope's hash, the build's token, the journal position it holds."""
    return f"{name}-{build}-{applied}.graph"


def _build(file: str) -> str:
    return file.split("-")[1]
