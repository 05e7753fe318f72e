"""The chat client and JSON helper against a real OpenAI-compatible server on loopback (tests/llm_server.py)."""

from __future__ import annotations

import json
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from ebbing import EbbingError, InvalidInput
from ebbing.llm import prompts
from ebbing.llm.base import JSON_REMINDER, LLM, complete_json, parse_json
from ebbing.llm.openai import OpenAIChat, retry_after

from .llm_server import serve


def test_complete_round_trip_carries_messages_model_and_temperature() -> None:
    with serve(api_key="sk-good-key") as server, closing(
            OpenAIChat("test-model", base_url=server.url, api_key="sk-good-key")) as llm:
        assert isinstance(llm, LLM) and llm.name == "openai/test-model"
        answer = llm.complete("Be brief.", "我对虾过敏 — remember it", max_tokens=64)
        assert json.loads(answer) == {"model": "test-model", "system": "Be brief.", "user": "我对虾过敏 — remember it"}
        (request,) = server.requests
        assert request.path == "/v1/chat/completions"
        assert request.headers["authorization"] == "Bearer sk-good-key"
        assert request.body["messages"] == [{"role": "system", "content": "Be brief."},
                                            {"role": "user", "content": "我对虾过敏 — remember it"}]
        assert request.body["model"] == "test-model" and request.body["temperature"] == 0
        assert request.body["max_tokens"] == 64 and "response_format" not in request.body


def test_json_mode_asks_for_a_json_object() -> None:
    with serve() as server, closing(OpenAIChat("m", base_url=server.url + "/")) as llm:
        assert json.loads(llm.complete("", "hi", json_mode=True))["user"] == "hi"
        body = server.requests[0].body
        assert body["response_format"] == {"type": "json_object"}
        assert body["messages"] == [{"role": "user", "content": "hi"}]  # no empty system message


@pytest.mark.parametrize(("answer", "expected"), [
    ('{"kind": "fact"}', {"kind": "fact"}),
    ('Here you go:\n```json\n{"kind": "fact", "pin": true}\n```\nAnything else?', {"kind": "fact", "pin": True}),
    ('```\n[1, 2]\n```', [1, 2]),
    ('Sure! The answer is {"facts": [{"value": "30s"}]} — hope this helps {not json}', {"facts": [{"value": "30s"}]}),
    ('I considered [option A] but: [{"a": 1}]', [{"a": 1}]),
], ids=["plain", "fenced", "bare-fence", "prose", "prose-with-brackets"])
def test_complete_json_tolerates_wrapped_json(answer: str, expected: Any) -> None:
    with serve(lambda body: answer) as server, closing(OpenAIChat("m", base_url=server.url)) as llm:
        assert complete_json(llm, "sys", "text", max_tokens=100) == expected
        assert len(server.requests) == 1 and server.requests[0].body["response_format"] == {"type": "json_object"}
        assert server.requests[0].body["max_tokens"] == 100


def test_complete_json_retries_once_with_a_reminder() -> None:
    def stubborn_once(body: dict[str, Any]) -> str:
        return '{"ok": true}' if JSON_REMINDER in body["messages"][-1]["content"] else "I think it is a fact."

    with serve(stubborn_once) as server, closing(OpenAIChat("m", base_url=server.url)) as llm:
        assert complete_json(llm, prompts.CLASSIFY, "I live in Lyon") == {"ok": True}
        first, second = (r.body["messages"] for r in server.requests)
        assert first[-1]["content"] == "I live in Lyon"
        assert second[-1]["content"].startswith("I live in Lyon") and second[0] == first[0]


def test_complete_json_gives_up_after_the_second_answer() -> None:
    with serve(lambda body: "I cannot answer in JSON, sorry. " * 5) as server, \
            closing(OpenAIChat("m", base_url=server.url)) as llm:
        with pytest.raises(EbbingError, match="the LLM did not answer with JSON: I cannot answer") as info:
            complete_json(llm, "sys", "text")
        assert len(server.requests) == 2
        assert len(str(info.value)) == len("the LLM did not answer with JSON: ") + 80


def test_parse_json_rejects_prose() -> None:
    for text in ("", "no json here", "{broken", "```json\n{nope}\n```"):
        with pytest.raises(ValueError):
            parse_json(text)


def test_retries_server_errors_then_succeeds() -> None:
    with serve() as server, closing(OpenAIChat("m", base_url=server.url, retries=3)) as llm:
        server.fail_next(1, 503)
        assert json.loads(llm.complete("s", "after a 503"))["user"] == "after a 503"
        assert len(server.requests) == 2


def test_honours_retry_after_on_429() -> None:
    with serve() as server, closing(OpenAIChat("m", base_url=server.url, retries=2)) as llm:
        server.fail_next(1, 429, retry_after=0)  # an immediate retry, not the 0.5 s backoff
        started = time.monotonic()
        assert json.loads(llm.complete("s", "now"))["user"] == "now"
        assert time.monotonic() - started < 0.4 and len(server.requests) == 2
        server.fail_next(1, 429, retry_after=1)  # longer than the backoff, and waited for
        started = time.monotonic()
        assert json.loads(llm.complete("s", "later"))["user"] == "later"
        assert time.monotonic() - started >= 0.95 and len(server.requests) == 4


def test_gives_up_after_the_retries() -> None:
    with serve() as server, closing(OpenAIChat("m", base_url=server.url, retries=1)) as llm:
        server.fail_next(5, 500)
        with pytest.raises(EbbingError, match=r"500: .*injected failure 500.*after 2 attempts"):
            llm.complete("s", "u")
        assert len(server.requests) == 2


@pytest.mark.parametrize("status", [400, 404, 422])
def test_does_not_retry_other_client_errors(status: int) -> None:
    with serve() as server, closing(OpenAIChat("m", base_url=server.url, retries=3)) as llm:
        server.fail_next(5, status)
        with pytest.raises(EbbingError, match=f"chat server answered {status}"):
            llm.complete("s", "u")
        assert len(server.requests) == 1


def test_wrong_key_fails_without_showing_it() -> None:
    with serve(api_key="sk-right") as server, \
            closing(OpenAIChat("m", base_url=server.url, api_key="sk-wrong-secret-42")) as llm:
        with pytest.raises(EbbingError, match="401") as info:
            llm.complete("s", "u")
        assert "sk-wrong-secret-42" not in str(info.value) and "Incorrect API key" in str(info.value)
        assert info.value.__cause__ is None and info.value.__context__ is None
        assert len(server.requests) == 1  # 401 is not retried
        with closing(OpenAIChat("m", base_url=server.url)) as anonymous, pytest.raises(EbbingError, match="401"):
            anonymous.complete("s", "u")


def test_timeouts_are_retried_then_reported() -> None:
    def slow(body: dict[str, Any]) -> str:
        time.sleep(1.0)
        return "too late"

    with serve(slow) as server, closing(OpenAIChat("m", base_url=server.url, timeout=0.5, retries=1)) as llm:
        started = time.monotonic()
        with pytest.raises(EbbingError, match=r"did not answer within 0.5 s \(after 2 attempts\)"):
            llm.complete("s", "u")
        assert time.monotonic() - started < 3 and len(server.requests) == 2


def test_unreachable_server() -> None:
    with serve() as server:
        url = server.url
    with closing(OpenAIChat("m", base_url=url, retries=0)) as llm, \
            pytest.raises(EbbingError, match="cannot reach the chat server: ConnectError"):
        llm.complete("s", "u")


@pytest.mark.parametrize("body", [{"choices": []}, {"error": "odd"}])
def test_a_200_without_a_completion_is_an_error(body: dict[str, Any]) -> None:
    with serve(lambda request: body) as server, closing(OpenAIChat("m", base_url=server.url)) as llm, \
            pytest.raises(EbbingError, match="without a chat completion"):
        llm.complete("s", "u")


def test_null_content_is_an_error() -> None:
    refusal = {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "refusal": "no"},
                            "finish_reason": "content_filter"}]}
    with serve(lambda request: refusal) as server, closing(OpenAIChat("m", base_url=server.url)) as llm, \
            pytest.raises(EbbingError, match=r"no text.*content_filter"):
        llm.complete("s", "u")


def test_from_env() -> None:
    assert OpenAIChat.from_env({}) is None
    assert OpenAIChat.from_env({"EBBING_LLM_MODEL": "qwen2.5"}) is None
    assert OpenAIChat.from_env({"EBBING_LLM_BASE_URL": "http://localhost:11434/v1"}) is None
    assert OpenAIChat.from_env({"EBBING_LLM_BASE_URL": "http://x/v1", "EBBING_LLM_MODEL": " "}) is None
    with serve(api_key="sk-env-secret") as server:
        llm = OpenAIChat.from_env({"EBBING_LLM_BASE_URL": server.url, "EBBING_LLM_MODEL": "qwen2.5",
                                   "EBBING_LLM_API_KEY": "sk-env-secret", "UNRELATED": "x"})
        assert llm is not None
        with closing(llm):
            assert llm.name == "openai/qwen2.5"
            assert json.loads(llm.complete("s", "via env"))["model"] == "qwen2.5"
            assert server.requests[0].headers["authorization"] == "Bearer sk-env-secret"
            assert "sk-env-secret" not in repr(llm)


def test_repr_hides_the_key() -> None:
    llm = OpenAIChat("gpt-4o-mini", api_key="sk-proj-very-secret")
    assert repr(llm) == "OpenAIChat(model='gpt-4o-mini', base_url='https://api.openai.com/v1')"
    llm.close()


def test_rejects_bad_settings() -> None:
    with pytest.raises(InvalidInput, match=r"llm\.model"):
        OpenAIChat("")
    with pytest.raises(InvalidInput, match="timeout"):
        OpenAIChat("m", timeout=0)
    with pytest.raises(InvalidInput, match=r"llm\.temperature"):
        OpenAIChat("m", temperature=-1)
    with closing(OpenAIChat("m")) as llm, pytest.raises(InvalidInput, match=r"llm\.max_tokens"):
        llm.complete("s", "u", max_tokens=0)


def test_retry_after_parsing() -> None:
    assert retry_after(None) is None and retry_after("soon") is None and retry_after("nan") is None
    assert retry_after("2") == 2.0 and retry_after("0.25") == 0.25 and retry_after("-3") == 0.0
    assert retry_after("3600") == 10.0  # capped
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=5), usegmt=True)
    assert 3.5 < (retry_after(later) or 0) <= 5.0


def test_prompts_name_their_keys() -> None:
    for key in ('"kind"', '"salience"', '"priority"', '"pin"', "fact", "preference", "decision", "temporary",
                "episode", "P0", "P1", "P2"):
        assert key in prompts.CLASSIFY
    for key in ('"facts"', '"subject"', '"attribute"', '"value"', '"reason"', '"user"'):
        assert key in prompts.EXTRACT_FACTS
    for must in ("number", "unit", "proper name", "decision", "because", "date", "language", "plain text"):
        assert must in prompts.SUMMARISE
    json.loads(prompts.CLASSIFY[prompts.CLASSIFY.rindex("{"):])  # the example answers are valid JSON
    json.loads(prompts.EXTRACT_FACTS[prompts.EXTRACT_FACTS.index('{"facts": [{'):].splitlines()[0])
