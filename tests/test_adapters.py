"""The framework adapters against the real packages: a LangGraph store (alone and in a compiled graph) and
LangChain's retriever and chat history, each over a real SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

from ebbing import InvalidInput, Memory, Tier, clock
from ebbing.adapters import EbbingChatMessageHistory, EbbingRetriever, EbbingStore
from ebbing.embed.hashing import HashEmbedder
from ebbing.ingest.consolidate import ConsolidationConfig

ALICE = ("memories", "alice")
DAY = 86_400.0


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(tmp_path / "mem.db", embedder=HashEmbedder())
    yield memory
    memory.close()


def record_of(mem: Memory, namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    """The stored record behind an item, read through `Memory`, not through the store under test."""
    rows = [r for r in mem.export() if r["metadata"].get("langgraph_key") == key
            and r["metadata"].get("langgraph_namespace") == ".".join(namespace)]
    assert len(rows) == 1, rows
    return rows[0]


# -- LangGraph ---------------------------------------------------------------------------------------------


def test_langgraph_store_through_the_base_store_api(mem: Memory, tmp_path: Path) -> None:
    store = EbbingStore(mem)
    assert isinstance(store, BaseStore)
    dark = {"text": "Alice prefers dark mode in every editor", "topic": "ui", "n": 3}
    store.put(ALICE, "theme", dark)
    store.put(ALICE, "theme-again", {"text": "Alice prefers dark mode in every editor!", "topic": "ui", "n": 1})
    store.put(ALICE, "trip", {"content": "Alice flies to Lisbon in March", "tags": {"kind": "travel"}, "n": 5})
    store.put(("memories", "alice", "work"), "stack", {"languages": ["Rust", "Go"], "n": 7})
    store.put(("memories", "bob"), "theme", {"text": "Bob prefers light mode in every editor", "n": 4})
    store.put(("settings",), "locale", {"text": "Default locale is pt-PT"})

    item = store.get(ALICE, "theme")
    assert item is not None and item.value == dark and list(item.value) == ["text", "topic", "n"]
    assert item.namespace == ALICE and item.key == "theme" and item.created_at == item.updated_at
    assert store.get(ALICE, "missing") is None and store.get(("memories", "carol"), "theme") is None
    assert store.get(("memories", "alice", "work"), "stack").value == {"languages": ["Rust", "Go"], "n": 7}

    # The mapping: the namespace's second label is the Ebbing user, the text field is the record's text.
    theme = record_of(mem, ALICE, "theme")
    assert theme["user_id"] == "alice" and theme["text"] == dark["text"]
    assert theme["metadata"]["langgraph_value"] == {"text": None, "topic": "ui", "n": 3}
    assert record_of(mem, ("memories", "alice", "work"), "stack")["user_id"] == "alice"
    assert record_of(mem, ("settings",), "locale")["user_id"] is None
    assert record_of(mem, ALICE, "theme-again")["id"] != theme["id"]  # a restatement under another key: no merge

    # Search with a query is Ebbing recall in the user's scope, under the namespace prefix.
    hits = store.search(ALICE, query="dark mode editor")
    assert {h.key for h in hits} == {"theme", "theme-again"} and all(h.namespace == ALICE for h in hits)
    assert all(isinstance(h.score, float) and 0 < h.score <= 1 for h in hits)
    assert [h.key for h in store.search(("memories",), query="light mode editor", limit=1)] == ["theme"] and \
        store.search(("memories",), query="light mode editor", limit=1)[0].namespace == ("memories", "bob")
    assert mem.get(theme["id"]).access_count == 1  # what the agent recalled counts as used
    assert store.search(ALICE, query="dark mode editor", filter={"n": 1})[0].key == "theme-again"

    # Search without a query lists, newest change first, with LangGraph's filters and paging.
    listed = store.search(("memories",))
    assert [i.key for i in listed] == ["theme", "stack", "trip", "theme-again", "theme"] and \
        listed[0].namespace == ("memories", "bob") and all(i.score is None for i in listed)
    assert [i.key for i in store.search(("memories",), filter={"n": {"$gte": 4}})] == ["theme", "stack", "trip"]
    assert [i.key for i in store.search(("memories",), filter={"tags": {"kind": "travel"}})] == ["trip"]
    assert [i.key for i in store.search(("memories",), limit=2, offset=1)] == ["stack", "trip"]
    assert store.search(("nothing",)) == []

    assert store.list_namespaces() == [ALICE, ("memories", "alice", "work"), ("memories", "bob"), ("settings",)]
    assert store.list_namespaces(prefix=("memories",), max_depth=2) == [ALICE, ("memories", "bob")]
    assert store.list_namespaces(suffix=("work",)) == [("memories", "alice", "work")]
    assert store.list_namespaces(prefix=("memories", "*"), limit=1, offset=1) == [("memories", "alice", "work")]

    # A put on an existing key corrects the record in place: same id, the change in its history.
    store.put(ALICE, "theme", {"text": "Alice switched to light mode", "topic": "ui", "n": 3})
    changed = store.get(ALICE, "theme")
    assert changed is not None and changed.value["text"] == "Alice switched to light mode"
    assert changed.created_at == item.created_at and changed.updated_at > item.updated_at
    assert record_of(mem, ALICE, "theme")["id"] == theme["id"]
    assert [e.type for e in mem.history(theme["id"])][-1] == "update"

    # Delete forgets (to the trash, restorable); Ebbing forgetting on its own shows through the store too.
    store.delete(ALICE, "theme-again")
    assert store.get(ALICE, "theme-again") is None
    assert "theme-again" not in {h.key for h in store.search(ALICE, query="dark mode editor")}
    trip = record_of(mem, ALICE, "trip")["id"]
    mem.forget(trip, reason="forgotten elsewhere")
    assert store.get(ALICE, "trip") is None and "trip" not in {i.key for i in store.search(ALICE)}
    mem.restore(trip)
    store.refresh()
    assert store.get(ALICE, "trip") is not None

    # Bad input changes nothing.
    before = mem.stats()["total"]
    with pytest.raises(InvalidNamespaceError):
        store.put(("memories", "a.b"), "k", {"text": "dotted"})
    with pytest.raises(InvalidInput, match="text"):
        store.put(ALICE, "huge", {"text": "x" * 40_000})
    with pytest.raises(InvalidInput, match="user_at"):
        EbbingStore(mem, user_at=-1)
    assert mem.stats()["total"] == before and store.get(ALICE, "huge") is None

    # Another store on the same file (a new process) finds every item; the async API works the same.
    again = EbbingStore(Memory(tmp_path / "mem.db", embedder=HashEmbedder()))
    try:
        assert again.get(ALICE, "theme").value["text"] == "Alice switched to light mode"
        assert again.get(ALICE, "theme-again") is None

        async def use_async() -> None:
            await again.aput(("memories", "dana"), "pet", {"text": "Dana has a cat called Miso"})
            assert (await again.aget(("memories", "dana"), "pet")).value == {"text": "Dana has a cat called Miso"}
            assert [h.key for h in await again.asearch(("memories", "dana"), query="cat Miso")] == ["pet"]
            await again.adelete(("memories", "dana"), "pet")
            assert await again.aget(("memories", "dana"), "pet") is None

        asyncio.run(use_async())

        # An item the other process adds is found by a search in a namespace this store knows, then by key.
        again.put(ALICE, "pet", {"text": "Alice has a parrot called Kiwi"})
        assert store.get(ALICE, "pet") is None  # not in this store's index yet
        assert [h.key for h in store.search(ALICE, query="parrot Kiwi")] == ["pet"]
        assert store.get(ALICE, "pet").value == {"text": "Alice has a parrot called Kiwi"}
    finally:
        again.memory.close()

    # A key deleted, written anew, and its old record restored from the trash: the item is the new one.
    old = record_of(mem, ALICE, "theme-again")["id"]
    store.put(ALICE, "theme-again", {"text": "Alice prefers dark mode in every editor, again", "n": 9})
    mem.restore(old)
    found = [h for h in store.search(ALICE, query="dark mode editor") if h.key == "theme-again"]
    assert [h.value["n"] for h in found] == [9] and store.get(ALICE, "theme-again").value["n"] == 9


class Chat(TypedDict, total=False):
    message: str
    recalled: list[str]


def test_langgraph_graph_keeps_its_long_term_memory_in_ebbing(mem: Memory) -> None:
    def remember(state: Chat, config: RunnableConfig, *, store: BaseStore) -> Chat:  # the store injected by LangGraph
        user = config["configurable"]["user_id"]
        count = len(store.search(("memories", user), limit=100))
        store.put(("memories", user), f"m{count}", {"text": state["message"]})
        return {}

    def recall(state: Chat, config: RunnableConfig) -> Chat:
        store = get_store()  # the same store, found from inside the run
        user = config["configurable"]["user_id"]
        return {"recalled": [h.value["text"] for h in store.search(("memories", user), query=state["message"])]}

    builder = StateGraph(Chat)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=EbbingStore(mem))

    maya = {"configurable": {"user_id": "maya"}}
    graph.invoke({"message": "Maya is allergic to peanuts"}, maya)
    graph.invoke({"message": "Maya's sister lives in Porto"}, maya)
    graph.invoke({"message": "Sam is allergic to cats"}, {"configurable": {"user_id": "sam"}})
    result = graph.invoke({"message": "is Maya allergic to peanuts?"}, maya)
    assert result["recalled"][0] == "Maya is allergic to peanuts"
    assert all("Sam" not in text for text in result["recalled"])

    # What the graph wrote is ordinary Ebbing memory of user maya.
    assert mem.stats("maya")["total"] == 3 and mem.stats("sam")["total"] == 1
    hits = mem.search("peanuts allergy", user_id="maya")
    assert hits[0].record.text == "Maya is allergic to peanuts" and hits[0].record.metadata["langgraph_key"] == "m0"
    assert hits[0].record.pinned or hits[0].record.priority.value == "P0"  # Ebbing's classifier: an allergy stays


# -- LangChain ---------------------------------------------------------------------------------------------


def test_langchain_retriever_returns_documents_and_runs_in_a_chain(mem: Memory) -> None:
    dark = mem.add("I prefer dark mode in every editor", user_id="maya", kind="preference").records[0]
    mem.add("My sister lives in Porto", user_id="maya")
    mem.add("I prefer dark mode too", user_id="sam")
    retriever = EbbingRetriever(memory=mem, user_id="maya", k=3)

    docs = retriever.invoke("dark mode editor")
    assert isinstance(docs[0], Document) and docs[0].page_content == dark.text and docs[0].id == dark.id
    meta = docs[0].metadata
    assert meta["id"] == dark.id and meta["kind"] == "preference" and meta["tier"] == "hot"
    assert meta["user_id"] == "maya" and 0 < meta["score"] <= 1 and meta["created_at"] == dark.created_at.isoformat()
    assert all(d.metadata["user_id"] == "maya" for d in docs)
    assert mem.get(dark.id).access_count == 1  # retrieval is a use
    assert retriever.invoke("quantum chromodynamics lattice") == []  # nothing relevant: nothing returned
    assert EbbingRetriever(memory=mem, user_id="maya", filters={"kind": "fact"}).invoke("dark mode editor") == []

    chain = (RunnableLambda(lambda question: question["q"]) | retriever
             | RunnableLambda(lambda found: "\n".join(f"- {d.page_content}" for d in found)))
    assert chain.invoke({"q": "where does my sister live?"}).startswith("- My sister lives in Porto")
    assert asyncio.run(retriever.ainvoke("dark mode editor"))[0].id == dark.id
    with pytest.raises(InvalidInput, match="limit"):
        EbbingRetriever(memory=mem, k=0).invoke("dark mode")


def test_langchain_chat_history_add_get_clear(mem: Memory) -> None:
    history = EbbingChatMessageHistory(mem, user_id="maya", session_id="chat-1")
    assert history.messages == []
    history.add_messages([SystemMessage("You are a helpful assistant."), HumanMessage("I moved to Lisbon"),
                          AIMessage("Noted, Lisbon it is."), HumanMessage("ok")])
    history.add_user_message("I moved to Lisbon")  # said twice: two messages, not one merged record
    history.add_ai_message(AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Lisbon"}, "id": "c1"}]))

    got = history.messages
    assert [(m.type, m.content) for m in got] == [
        ("system", "You are a helpful assistant."), ("human", "I moved to Lisbon"), ("ai", "Noted, Lisbon it is."),
        ("human", "ok"), ("human", "I moved to Lisbon"), ("ai", "")]
    assert isinstance(got[-1], AIMessage) and got[-1].tool_calls[0]["args"] == {"city": "Lisbon"}

    # In the store: one turn per message, in the session, with the role Ebbing reads.
    rows = [r for r in mem.export("maya") if r["session_id"] == "chat-1"]
    assert len(rows) == 6 and {r["metadata"]["role"] for r in rows} == {"system", "user", "assistant"}
    assert {r["text"] for r in rows if r["metadata"]["role"] == "assistant"} == {
        "Noted, Lisbon it is.", "[ai message without text]"}
    assert mem.search("Lisbon", user_id="maya")  # the conversation is memory like any other

    other = EbbingChatMessageHistory(mem, user_id="maya", session_id="chat-2")
    other.add_user_message("Another chat")
    history.clear()
    assert history.messages == [] and [m.content for m in other.messages] == ["Another chat"]
    assert {r["tier"] for r in mem.export("maya") if r["session_id"] == "chat-1"} == {Tier.TRASH.value}
    with pytest.raises(InvalidInput, match="session_id"):
        EbbingChatMessageHistory(mem, user_id="maya", session_id="")


def test_langchain_chat_history_reads_back_turns_that_were_consolidated(tmp_path: Path) -> None:
    small = Memory(tmp_path / "small.db", embedder=HashEmbedder(), consolidation=ConsolidationConfig(60))
    try:
        history = EbbingChatMessageHistory(small, user_id="u", session_id="garden")
        said = [message for i in range(8) for message in (
            HumanMessage(f"Turn {i}: we planted tomatoes in bed number {i}"), AIMessage(f"Reply {i}: bed {i}, noted"))]
        history.add_messages(said)
        rows = list(small.export("u"))
        assert any(r["kind"] == "summary" for r in rows) and any(r["tier"] == "cold" for r in rows)  # consolidated
        assert history.messages == said  # summaries are no messages; archived turns still are
    finally:
        small.close()


def test_langgraph_items_fade_like_any_memory(mem: Memory) -> None:
    store = EbbingStore(mem)
    store.put(ALICE, "museum", {"text": "Alice visited the museum of modern art last spring", "n": 1})
    store.put(ALICE, "ack", {"text": "ok"})  # low-information: a temporary memory that fades fast
    museum = record_of(mem, ALICE, "museum")["id"]

    mem.sweep(at=clock.now() + 30 * DAY)  # a month without use
    assert store.get(ALICE, "ack") is None  # forgotten: in the trash, gone from the store
    assert mem.get(museum).tier is Tier.COLD
    assert store.get(ALICE, "museum").value["n"] == 1  # archived, still an item
    assert [i.key for i in store.search(ALICE)] == ["museum"]
    assert store.list_namespaces() == [ALICE]

    store.put(ALICE, "museum", {"text": "Alice visited the museum of modern art last spring", "n": 2})
    record = mem.get(museum)  # changed in place: restored from the archive first, same id
    assert record.tier is Tier.WARM and record.metadata["langgraph_value"]["n"] == 2
    moved, updated = mem.history(museum)[-2:]
    assert (moved.type, moved.data["from"], moved.data["to"], updated.type) == ("tier", "cold", "warm", "update")
