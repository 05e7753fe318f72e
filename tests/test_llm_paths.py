"""With an LLM configured, it classifies, extracts facts and summarises: tested against a real
OpenAI-compatible server on loopback (tests/llm_server.py) that answers like a model would."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.ingest.consolidate import ConsolidationConfig
from ebbing.llm import prompts
from ebbing.llm.openai import OpenAIChat

from .conftest import T0
from .llm_server import serve


def model(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if system == prompts.CLASSIFY:
        return json.dumps({"kind": "decision" if "switch" in user else "fact", "salience": 0.8, "priority": "P1",
                           "pin": False})
    if system == prompts.EXTRACT_FACTS:
        if "cache TTL" in user:
            value = re.findall(r"\d+s", user)[-1]
            return json.dumps({"facts": [{"subject": "user", "attribute": "cache TTL", "value": value,
                                          "reason": "hit rate" if "because" in user else None}]})
        return json.dumps({"facts": [{"subject": "user", "attribute": "made up", "value": "not in the text"}]})
    return "A short summary that forgets every number."


def test_the_llm_paths_are_used_and_checked(tmp_path: Path) -> None:
    with serve(model) as server:
        llm = OpenAIChat("test-model", base_url=server.url, retries=0)
        with Memory(tmp_path / "m.db", embedder=HashEmbedder(), llm=llm,
                    consolidation=ConsolidationConfig(working_budget_tokens=60)) as mem:
            first = mem.add("Our cache TTL is 300s", user_id="u", at=T0).records[0]
            second = mem.add("We switch the cache TTL to 600s because of the hit rate", user_id="u",
                             at=T0 + timedelta(hours=1)).records[0]
            assert first.kind.value == "fact" and second.kind.value == "decision"
            assert [t["value"] for t in mem.timeline("u", "cache TTL")] == ["300s", "600s"]
            invented = mem.add("Nothing concrete here, just thinking aloud", user_id="u", at=T0).records[0]
            assert mem.store.facts_of("default", [invented.id]) == []  # a value not in the text is not trusted
            for i in range(12):
                mem.add(f"Build {i} of Orion took {40 + i} minutes", user_id="u", session_id="s",
                        at=T0 + timedelta(minutes=i))
            summaries = [r for r in mem.export(user_id="u") if r["kind"] == "summary"]
            assert summaries
            for summary in summaries:  # the model dropped the numbers; Ebbing put them back
                assert "A short summary" in summary["text"]
                for turn_id in summary["source_ids"]:
                    for number in re.findall(r"\d+", mem.get(turn_id).text):
                        assert number in summary["text"]
        systems = {r.body["messages"][0]["content"] for r in server.requests}
        assert {prompts.CLASSIFY, prompts.EXTRACT_FACTS, prompts.SUMMARISE} <= systems
