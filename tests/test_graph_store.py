"""The HNSW graph a big scope searches instead of the exact scan (store.graph, SQLiteStore's graph scopes): it
answers as the scan does, lives in a private file that is loaded rather than rebuilt, follows every change
through the vector journal (also one made by another connection), and a purge leaves no trace of the purged
vector in any graph file. `graph_from` is lowered so that scopes of a few dozen records use the graph."""

from __future__ import annotations

import hashlib
import random
import stat
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ebbing import Memory
from ebbing.embed.base import normalise
from ebbing.embed.hashing import HashEmbedder
from ebbing.model import Scope
from ebbing.recall.search import SearchConfig
from ebbing.store.graph import EXACT_BELOW, ScopeGraph
from ebbing.store.vectors import ScopeVectors
from ebbing.text.terms import terms

from .conftest import T0

SMALL = 30  # graph_from for these tests
KEY = ("default", "u1")  # the scope every test fills
WORDS = ("amber birch cedar delta ember fjord garnet harbor indigo juniper kelp lagoon meadow nectar onyx pebble "
         "quartz raven saffron tundra umber violet willow xenon yarrow zephyr anchor beacon canyon dune estuary "
         "falcon glacier heron island jasper").split()


def _open(tmp_path: Path, graph_from: int = SMALL) -> Memory:
    mem = Memory(tmp_path / "mem.db", embedder=HashEmbedder(), archive=tmp_path / "archive")
    mem.store.graph_from = graph_from
    return mem


def _fill(mem: Memory, count: int, seed: int = 0, user_id: str = "u1", start: int = 0,
          **kwargs: object) -> list[str]:
    """`count` distinct records of five random words and a unique tag each; their ids."""
    rng = random.Random(seed)
    ids = []
    for i in range(start, start + count):
        result = mem.add(" ".join(rng.sample(WORDS, 5)) + f" item{i}", user_id=user_id, at=T0, dedupe=False,
                         **kwargs)  # type: ignore[arg-type]
        ids.append(result.records[0].id)
    return ids


def _find(mem: Memory, query: str, limit: int = 5, **kwargs: object) -> list[str]:
    hits = mem.search(query, user_id="u1", limit=limit, at=T0, count_use=False, include_cold=False,
                      **kwargs)  # type: ignore[arg-type]
    return [hit.record.id for hit in hits]


def _graph(mem: Memory) -> ScopeGraph:
    held = mem.store._vectors[KEY]
    assert isinstance(held, ScopeGraph)
    return held


def _registration(mem: Memory) -> tuple[str, int] | None:
    row = mem.store._conn.execute("SELECT file, applied FROM graph_scopes").fetchone()
    return None if row is None else (row[0], row[1])


def _holds(graph: ScopeGraph, seq: int) -> bool:
    return bool(np.asarray(graph._index.contains(np.array([seq], dtype=np.uint64))).reshape(-1)[0])


def _code(graph: ScopeGraph, seq: int) -> bytes:
    """The int8 bytes the graph holds for `seq` (what its file stores)."""
    return np.asarray(graph._index.get(np.array([seq], dtype=np.uint64), dtype="i8")).reshape(-1).tobytes()


def _graph_files(mem: Memory) -> list[Path]:
    folder = mem.store.graph_folder
    return sorted(folder.iterdir()) if folder.exists() else []


# -- the store: graph scopes ----------------------------------------------------------------------------


class TermEmbedder:
    """Dense and deterministic: a text is the sum of one fixed random vector per term. Unlike the hash embedder's
    sparse vectors, its cosines seldom tie, so which records a search nominates is well defined."""

    name, dimensions = "test-terms", 64

    def __init__(self) -> None:
        self._terms: dict[str, np.ndarray] = {}

    def _term(self, term: str) -> np.ndarray:
        if term not in self._terms:
            seed = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")
            self._terms[term] = np.random.default_rng(seed).standard_normal(self.dimensions).astype(np.float32)
        return self._terms[term]

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        return normalise(np.stack([sum((self._term(t) for t in terms(text) or [text]),
                                       np.zeros(self.dimensions, dtype=np.float32)) for text in texts]))


def test_graph_search_returns_what_the_exact_scan_returns(tmp_path: Path) -> None:
    def opened(graph_from: int) -> Memory:
        mem = Memory(tmp_path / "mem.db", embedder=TermEmbedder(), archive=tmp_path / "archive")
        mem.store.graph_from = graph_from
        return mem

    graphed = opened(SMALL)
    ids = _fill(graphed, 240)
    exact = opened(1_000_000)  # the same file, scanned
    try:
        wanted = SearchConfig().candidates  # what a search takes from the vector index
        vectors = np.stack([graphed.get(i).embedding for i in ids])  # type: ignore[misc]
        rng = random.Random(7)
        queries = []  # those whose nominees are clear: no near tie at the edge of the candidates taken
        for query in [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(200)]:
            cosines = np.sort(vectors @ graphed.embedder.embed([query], query=True)[0])[::-1]
            if cosines[wanted - 1] - cosines[wanted] > 0.015:  # well above int8 rounding
                queries.append(query)
        assert len(queries) >= 8
        scope = Scope("default", "u1")
        seqs = np.array([graphed.store.seq_of("default", i) for i in ids])
        found, first, overlap = [], [], []
        for query in queries:
            probe = graphed.embedder.embed([query], query=True)[0]
            truth = set(seqs[np.argsort(-(vectors @ probe), kind="stable")[:wanted]].tolist())
            nominated = set(graphed.store.vector_search(scope, probe, wanted, None))
            # Both are approximate (the graph nominates by usearch's coarse int8 codes before re-scoring, the
            # scan ranks by its own int8 codes): nearly all of the true nearest, never a stranger's share.
            found.append(len(nominated & truth) / wanted)
            assert found[-1] >= 0.9, query
            # A swap at the edge of the candidates barely moves what a search returns first.
            through_graph, through_scan = _find(graphed, query), _find(exact, query)
            first.append(through_graph[:1] == through_scan[:1])
            overlap.append(len(set(through_graph) & set(through_scan)) / max(1, len(through_scan)))
        assert np.mean(found) >= 0.97
        assert np.mean(first) >= 0.9 and np.mean(overlap) >= 0.9
        assert _graph(graphed).size == len(ids)
        assert isinstance(exact.store._vectors[KEY], ScopeVectors)
    finally:
        graphed.close()
        exact.close()


def test_graph_file_is_private_and_loaded_again_after_reopening(tmp_path: Path) -> None:
    mem = _open(tmp_path)
    _fill(mem, 40)
    assert not mem.store.graph_folder.exists()  # nothing before the first search
    _find(mem, "amber birch")
    (first,) = _graph_files(mem)
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert stat.S_IMODE(mem.store.graph_folder.stat().st_mode) == 0o700
    registered = _registration(mem)
    assert registered is not None and registered[0] == first.name and first.name.endswith(f"-{registered[1]}.graph")
    late = mem.add("narwhal quokka axolotl pangolin", user_id="u1", at=T0, dedupe=False).records[0].id
    mem.close()  # the graph has not seen the add: nothing to save, the journal keeps it

    mem = _open(tmp_path)
    try:
        assert _find(mem, "narwhal quokka axolotl pangolin")[0] == late
        graph = _graph(mem)
        assert graph.file == first.name and _registration(mem) == registered  # read from the file, journal replayed
        assert graph.size == 41 and graph.applied > registered[1]
        assert _graph_files(mem) == [first]
    finally:
        mem.close()  # saves: the graph replayed a change

    mem = _open(tmp_path)
    try:
        (second,) = _graph_files(mem)  # the older file is gone
        assert second != first and _registration(mem) == (second.name, graph.applied)
        assert stat.S_IMODE(second.stat().st_mode) == 0o600
        assert mem.store._conn.execute("SELECT count(*) FROM vector_journal").fetchone()[0] == 0  # pruned
        assert _find(mem, "narwhal quokka axolotl pangolin")[0] == late
        assert _graph(mem).file == second.name and _graph(mem).size == 41
    finally:
        mem.close()


def test_a_graph_replays_what_another_connection_wrote(tmp_path: Path) -> None:
    first = _open(tmp_path)
    second = _open(tmp_path)
    try:
        ids = _fill(first, 40)
        _find(first, "amber")
        graph = _graph(first)
        late = second.add("narwhal quokka axolotl pangolin", user_id="u1", at=T0, dedupe=False).records[0].id
        assert _find(first, "narwhal quokka axolotl pangolin")[0] == late
        assert _graph(first) is graph and graph.size == 41  # followed the journal, not reloaded
        second.forget(late, at=T0)
        assert late not in _find(first, "narwhal quokka axolotl pangolin", limit=40)
        second.update(ids[3], "walrus manatee dugong", at=T0)  # a new vector for an old record
        assert _find(first, "walrus manatee dugong")[0] == ids[3]
        seq = first.store.seq_of("default", ids[3])
        assert seq is not None and first.store.vector_search(
            Scope("default", "u1"), first.embedder.embed(["walrus manatee dugong"])[0], 1, None) == [seq]
        assert _graph(first) is graph and graph.size == 40
        # The other connection searches a graph of its own, loaded from the file and the journal.
        assert _find(second, "walrus manatee dugong")[0] == ids[3]
        assert isinstance(_graph(second), ScopeGraph) and _graph(second).size == 40
    finally:
        first.close()
        second.close()


def test_forget_and_restore_move_a_record_out_of_and_back_into_the_graph(tmp_path: Path) -> None:
    mem = _open(tmp_path)
    try:
        ids = _fill(mem, 40)
        text = mem.get(ids[5]).text
        assert _find(mem, text)[0] == ids[5]
        seq = mem.store.seq_of("default", ids[5])
        assert seq is not None and _holds(_graph(mem), seq)
        mem.forget(ids[5], at=T0)
        assert ids[5] not in _find(mem, text, limit=40)
        assert not _holds(_graph(mem), seq) and _graph(mem).size == 39
        mem.restore(ids[5], at=T0)
        assert _find(mem, text)[0] == ids[5]
        assert _holds(_graph(mem), seq) and _graph(mem).size == 40
    finally:
        mem.close()


def test_purge_drops_the_graph_file_and_rebuilds_without_the_vector(tmp_path: Path) -> None:
    mem = _open(tmp_path)
    try:
        ids = _fill(mem, 40)
        secret = mem.add("okapi tapir gharial saola vaquita kakapo quoll numbat bilby dibbler", user_id="u1",
                         at=T0, dedupe=False).records[0].id
        assert _find(mem, "okapi tapir gharial")[0] == secret
        seq = mem.store.seq_of("default", secret)
        assert seq is not None
        code = _code(_graph(mem), seq)
        (old,) = _graph_files(mem)
        assert code in old.read_bytes()  # the check below can see the vector in a file
        mem.forget(secret, at=T0)  # to the trash first, as a sweep would, then erased
        mem.purge(secret, at=T0)
        assert not old.exists() and _registration(mem) is None
        assert KEY not in mem.store._vectors
        assert secret not in _find(mem, "okapi tapir gharial", limit=50)
        (new,) = _graph_files(mem)
        registered = _registration(mem)
        assert registered is not None and registered[0] == new.name
        rebuilt = ScopeGraph.load(new)
        assert rebuilt is not None and rebuilt.size == 40 and not _holds(rebuilt, seq)
        assert all(_holds(rebuilt, s) for s in (mem.store.seq_of("default", i) for i in ids) if s is not None)
        assert seq not in rebuilt.nearest(mem.embedder.embed(["okapi tapir gharial saola"])[0], 40)
        assert all(code not in f.read_bytes() for f in _graph_files(mem))
    finally:
        mem.close()
    assert all(code not in f.read_bytes() for f in (tmp_path / "mem.db.graphs").iterdir())


def test_a_purge_by_another_connection_leaves_no_vector_in_graph_files(tmp_path: Path) -> None:
    holder = _open(tmp_path)
    purger = _open(tmp_path)
    try:
        _fill(holder, 40)
        secret = holder.add("okapi tapir gharial saola vaquita kakapo quoll numbat bilby dibbler", user_id="u1",
                            at=T0, dedupe=False).records[0].id
        _find(holder, "okapi tapir")  # holder builds the graph, with the secret in it
        seq = holder.store.seq_of("default", secret)
        assert seq is not None
        code = _code(_graph(holder), seq)
        purger.add("narwhal quokka axolotl pangolin", user_id="u1", at=T0, dedupe=False)  # journaled
        _find(holder, "narwhal")  # holder replays it: one unsaved change
        purger.purge(secret, at=T0)
        _find(purger, "okapi tapir")  # the purger rebuilds the graph without the secret
        assert all(code not in f.read_bytes() for f in _graph_files(purger))
        assert secret not in _find(holder, "okapi tapir gharial", limit=50)
    finally:
        holder.close()  # saves the graph it holds (one change unsaved): is it the one from before the purge?
        purger.close()
    assert all(code not in f.read_bytes() for f in (tmp_path / "mem.db.graphs").iterdir())


def test_agent_and_metadata_filters_hold_on_a_graph_scope(tmp_path: Path) -> None:
    mem = _open(tmp_path)
    try:
        ids = _fill(mem, 20, agent_id="alpha", metadata={"colour": "red"})
        ids += _fill(mem, 20, seed=1, start=20, agent_id="beta", metadata={"colour": "blue"})
        alpha, red = set(ids[:20]), set(ids[:20])
        target = mem.get(ids[25]).text  # a beta record, exactly
        assert _find(mem, target)[0] == ids[25]
        assert isinstance(_graph(mem), ScopeGraph)
        found = _find(mem, target, limit=10, agent_id="alpha")
        assert found and set(found) <= alpha
        found = _find(mem, target, limit=10, filters={"colour": "red"})
        assert found and set(found) <= red
        assert _find(mem, target, limit=10, agent_id="alpha", filters={"colour": "blue"}) == []
        # The vector path on its own: only the allowed seqs, nearest first.
        probe = mem.embedder.embed([target], query=True)[0]
        allowed = {mem.store.seq_of("default", i) for i in alpha}
        for scope, filters in ((Scope("default", "u1", "alpha"), None), (Scope("default", "u1"), {"colour": "red"})):
            seqs = mem.store.vector_search(scope, probe, 10, filters)
            assert len(seqs) == 10 and set(seqs) <= allowed
        seqs = mem.store.vector_search(Scope("default", "u1", "beta"), probe, 3, None)
        assert seqs[0] == mem.store.seq_of("default", ids[25])
    finally:
        mem.close()


def test_a_corrupt_graph_file_is_rebuilt(tmp_path: Path) -> None:
    mem = _open(tmp_path)
    ids = _fill(mem, 40)
    _find(mem, "amber")
    mem.close()
    (path,) = _graph_files(mem)
    path.write_bytes(b"not a usearch index " * 500)

    mem = _open(tmp_path)
    try:
        text = mem.get(ids[11]).text
        assert _find(mem, text)[0] == ids[11]
        registered = _registration(mem)
        assert registered is not None and (mem.store.graph_folder / registered[0]).exists()
        rebuilt = ScopeGraph.load(mem.store.graph_folder / registered[0])
        assert rebuilt is not None and rebuilt.size == 40
    finally:
        mem.close()


def test_a_rebuilt_graph_leaves_no_unreadable_file_behind(tmp_path: Path) -> None:
    mem = _open(tmp_path)
    _fill(mem, 40)
    _find(mem, "amber")
    _fill(mem, 2, seed=3, start=40)
    _find(mem, "amber")  # replays two changes: close saves '<hash>-2.graph'
    mem.close()
    (path,) = _graph_files(mem)
    assert not path.name.endswith("-0.graph")
    path.write_bytes(b"not a usearch index " * 500)

    mem = _open(tmp_path)
    try:
        _fill(mem, 1, seed=4, start=42)  # journaled: the rebuild lands past the unreadable file's position
        _find(mem, "amber")
        registered = _registration(mem)
        assert registered is not None
        assert [f.name for f in _graph_files(mem)] == [registered[0]]
    finally:
        mem.close()


def test_small_scopes_keep_the_exact_scan_until_they_grow(tmp_path: Path) -> None:
    mem = _open(tmp_path)
    try:
        ids = _fill(mem, SMALL - 1)
        _fill(mem, 40, user_id="u2", seed=2)  # another user's scope is big; this one is not
        text = mem.get(ids[4]).text
        assert _find(mem, text)[0] == ids[4]
        assert isinstance(mem.store._vectors[KEY], ScopeVectors)
        assert not mem.store.graph_folder.exists() and _registration(mem) is None
        late = _fill(mem, 1, seed=9, start=500)[0]  # reaches graph_from: the next search graphs the scope
        assert _find(mem, mem.get(late).text)[0] == late
        assert isinstance(_graph(mem), ScopeGraph) and _graph(mem).size == SMALL
        assert len(_graph_files(mem)) == 1
    finally:
        mem.close()


def test_default_threshold_keeps_small_stores_off_graphs(tmp_path: Path) -> None:
    mem = _open(tmp_path, graph_from=50_000)
    try:
        ids = _fill(mem, 40)
        assert _find(mem, mem.get(ids[0]).text)[0] == ids[0]
        assert isinstance(mem.store._vectors[KEY], ScopeVectors)
        assert not mem.store.graph_folder.exists()
    finally:
        mem.close()


# -- ScopeGraph on its own ----------------------------------------------------------------------------------


def _unit(rows: int, dims: int, seed: int) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    out: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return out


def test_scope_graph_upsert_replaces_and_remove_drops() -> None:
    vectors = _unit(200, 32, 0)
    graph = ScopeGraph(32)
    graph.upsert(np.arange(200) + 1000, vectors)
    assert graph.size == 200 and graph.unsaved == 200
    assert graph.nearest(vectors[17], 1) == [1017]
    graph.upsert([1017], vectors[90:91])  # the key now holds another vector
    assert graph.size == 200
    assert set(graph.nearest(vectors[90], 2)) == {1017, 1090}
    assert 1017 not in graph.nearest(vectors[17], 5)
    graph.remove([1090, 5])  # an absent key is ignored
    assert graph.size == 199 and graph.nearest(vectors[90], 1) == [1017]
    assert graph.unsaved == 200 + 1 + 1
    graph.remove([])
    graph.upsert([], np.empty((0, 32), dtype=np.float32))
    assert graph.size == 199


def test_scope_graph_nearest_with_allowed_keys_scans_them_in_cosine_order() -> None:
    dims = 32
    query = _unit(1, dims, 1)[0]
    noise = _unit(300, dims, 2)
    noise -= np.outer(noise @ query, query)  # orthogonal to the query
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    cosines = np.linspace(-0.9, 0.95, 300)  # well apart, so int8 codes keep the order
    vectors = (cosines[:, None] * query + np.sqrt(1 - cosines[:, None] ** 2) * noise).astype(np.float32)
    order = np.random.default_rng(3).permutation(300)
    graph = ScopeGraph(dims)
    graph.upsert(order + 1, vectors[order])
    allowed = np.array([5, 40, 41, 150, 299, 300, 123, 7, 9999])  # 9999 is not in the graph
    assert len(allowed) < EXACT_BELOW
    by_cosine = sorted((int(k) for k in allowed if k <= 300), key=lambda k: -float(vectors[k - 1] @ query))
    assert graph.nearest(query, 4, allowed=allowed) == by_cosine[:4]
    assert graph.nearest(query, 50, allowed=allowed) == by_cosine
    assert graph.nearest(query, 5, allowed=np.array([], dtype=np.int64)) == []
    assert graph.nearest(query, 5, allowed=np.array([9999])) == []
    assert graph.nearest(query, 0) == [] and ScopeGraph(dims).nearest(query, 5) == []
    unfiltered = graph.nearest(query, 10)
    assert unfiltered == [int(k) + 1 for k in np.argsort(-(vectors @ query))[:10]]


def test_scope_graph_save_and_load_roundtrip(tmp_path: Path) -> None:
    vectors = _unit(150, 24, 4)
    graph = ScopeGraph(24)
    graph.upsert(np.arange(150) * 3 + 1, vectors)
    graph.remove([4])
    path = tmp_path / "graphs" / "scope-7.graph"
    graph.save(path)
    assert graph.unsaved == 0 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["scope-7.graph"]  # no partial file left
    loaded = ScopeGraph.load(path)
    assert loaded is not None and loaded.dimensions == 24 and loaded.size == 149 and loaded.unsaved == 0
    assert not _holds(loaded, 4) and _holds(loaded, 7)
    for row in (0, 2, 77, 149):
        assert loaded.nearest(vectors[row], 5) == graph.nearest(vectors[row], 5)
        assert loaded.nearest(vectors[row], 1) == [row * 3 + 1]
    assert ScopeGraph.load(tmp_path / "missing.graph") is None
    junk = tmp_path / "junk.graph"
    junk.write_bytes(b"\x00\x01garbage" * 100)
    assert ScopeGraph.load(junk) is None


def test_a_loaded_graph_searches_as_widely_as_a_built_one(tmp_path: Path) -> None:
    """usearch restores an index with its default search width (64), not the one it was saved with."""
    rng = np.random.default_rng(3)
    graph = ScopeGraph(16)
    graph.upsert(np.arange(1, 201), normalise(rng.standard_normal((200, 16)).astype(np.float32)))
    graph.save(tmp_path / "g.graph")
    loaded = ScopeGraph.load(tmp_path / "g.graph")
    assert loaded is not None
    loaded.nearest(normalise(rng.standard_normal((1, 16)).astype(np.float32))[0], 10)
    assert loaded._index.expansion_search == graph._index.expansion_search == loaded.expansion == 256


def test_a_purge_keeps_other_users_graphs_loaded(tmp_path: Path) -> None:
    mem = _open(tmp_path)
    try:
        doomed = _fill(mem, 40)[0]
        _fill(mem, 40, seed=1, user_id="u2")
        _find(mem, "amber birch")
        mem.search("amber birch", user_id="u2", at=T0, count_use=False, include_cold=False)
        other = mem.store._vectors[("default", "u2")]
        assert isinstance(other, ScopeGraph)
        mem.purge(doomed, at=T0)
        assert ("default", "u1") not in mem.store._vectors  # it held the purged vector: rebuilt when next needed
        assert mem.store._vectors[("default", "u2")] is other
    finally:
        mem.close()


def test_graph_benchmark_measures_graph_and_scan_on_given_vectors(tmp_path: Path) -> None:
    from ebbing.bench import graph as bench

    rng = np.random.default_rng(0)
    base = normalise(rng.standard_normal((40, 32)).astype(np.float32))
    asked = normalise(rng.standard_normal((10, 32)).astype(np.float32))
    figure = bench.measure(400, base, asked, tmp_path, adds=6, seed=0, per_turn=10.0)
    assert figure["records"] == 400 and figure["graph_recall@10"] >= 0.9 and figure["scan_recall@10"] >= 0.9
    assert figure["graph_ms"]["p50"] > 0 and figure["add_ms"]["p50"] > 0 and figure["graph_file_mb"] > 0
