"""LangChain adapters: `EbbingRetriever` (memories as `Document`s) and `EbbingChatMessageHistory` (a
conversation kept as Ebbing turns of one session).

    retriever = EbbingRetriever(memory=mem, user_id="maya", k=5)
    docs = retriever.invoke("which editor theme?")     # Document(page_content=text, metadata={id, score, ...})

    history = EbbingChatMessageHistory(mem, user_id="maya", session_id="chat-42")
    history.add_messages([HumanMessage("I moved to Lisbon"), AIMessage("Noted!")])

Both are thin layers over `Memory`: retrieval is `Memory.search` (so what is retrieved counts as used and
fades more slowly), a message is `Memory.add` with the session id and the message's role in metadata (an
assistant's turn is no evidence of a user fact), and `clear` forgets the session's messages (to the trash).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, messages_from_dict
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ebbing import clock, validate
from ebbing.memory import Memory
from ebbing.model import Hit, Tier

# LangChain's message types and the roles Ebbing reads ("assistant" turns state no user facts).
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}
STEP = 1e-5  # seconds between the times of messages added together
MESSAGE = "langchain_message"  # metadata: the message's type and its fields other than the text


def document(hit: Hit) -> Document:
    record = hit.record
    return Document(page_content=record.text, id=record.id, metadata={
        "id": record.id,
        "score": hit.score,
        "kind": record.kind.value,
        "tier": record.tier.value,
        "priority": record.priority.value,
        "pinned": record.pinned,
        "importance": record.importance,
        "user_id": record.user_id,
        "session_id": record.session_id,
        "created_at": record.created_at.isoformat(),
        "last_accessed_at": record.last_accessed_at.isoformat() if record.last_accessed_at else None,
        "metadata": record.metadata,
    })


class EbbingRetriever(BaseRetriever):
    """The `k` memories of `user_id` most relevant to the query, best first, as `Document`s.

    Scores are Ebbing's: relevance weighted by retention, and nothing under the relevance floor comes back,
    so an unrelated query returns no documents rather than the least bad ones.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory
    user_id: str | None = None
    k: int = 5
    filters: dict[str, Any] | None = None
    include_cold: bool | None = None

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        hits = self.memory.search(query, user_id=self.user_id, limit=self.k, filters=self.filters,
                                  include_cold=self.include_cold)
        return [document(hit) for hit in hits]


class EbbingChatMessageHistory(BaseChatMessageHistory):
    """The messages of one session, stored as Ebbing turns; `messages` reads them back oldest first.

    Every message is its own record (restatements are not merged), so the history reads back as it was
    written. Old turns may be consolidated into a summary and archived: they stay in `messages` (summaries are
    not messages), until they are forgotten.
    """

    def __init__(self, memory: Memory, user_id: str | None, session_id: str) -> None:
        super().__init__()
        self.memory = memory
        self.user_id = validate.name(user_id, "user_id")
        self.session_id = validate.name(session_id, "session_id", required=True)
        self._last = 0.0  # the time of the last message this object added

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a property, as LangChain documents
        rows = sorted(self._rows(), key=lambda row: (clock.to_epoch(row["created_at"]), row["id"]))
        out = []
        for row in rows:
            stored = row["metadata"][MESSAGE]
            data = {**stored["data"], "content": stored["data"].get("content", row["text"])}
            out.append(messages_from_dict([{"type": stored["type"], "data": data}])[0])
        return out

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        # Messages added together get times 10 µs apart (after any this object added before), so they read
        # back in the order given even within one clock tick.
        start = max(clock.now(), self._last + STEP)
        for offset, message in enumerate(messages):
            text = message.text.strip()
            data = message.model_dump(exclude={"content", "type"}, mode="json")
            if not text:  # tool calls, images: keep the content itself, and a line that says what it is
                data["content"] = message.content
                text = f"[{message.type} message without text]"
            self.memory.add(text, user_id=self.user_id, session_id=self.session_id,
                            metadata={"role": ROLES.get(message.type, message.type),
                                      MESSAGE: {"type": message.type, "data": data}},
                            at=start + offset * STEP, dedupe=False)
            self._last = start + offset * STEP

    def clear(self) -> None:
        for row in self._rows():
            self.memory.forget(row["id"], reason="chat history cleared")

    def _rows(self) -> list[dict[str, Any]]:
        """The session's messages that are not forgotten, in any live or archived tier."""
        return [row for row in self.memory.export(self.user_id)
                if row["session_id"] == self.session_id and row["user_id"] == self.user_id
                and row["tier"] != Tier.TRASH.value
                and MESSAGE in row["metadata"]]
