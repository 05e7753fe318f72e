"""The inspector's review queue in process (FastAPI's TestClient over the real app and a real SQLite file, logged
in with a key): a newer value from a lower-authority source is listed with both texts and sources, accepting and
rejecting through the forms change the store, foreign sites, foreign tenants and read-only roles are refused,
texts are escaped. One test clicks Accept in a real Chromium (as tests/test_inspector_browser.py does)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI, Request, Response
from fastapi.testclient import TestClient

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.server import inspector
from ebbing.server.app import create_app
from ebbing.server.keys import KeyStore, keys_path

DAY = 86_400.0
OLD = "My shipping address is 12 Oak Street, Springfield"
NEW = "The user's shipping address is 45 Elm Avenue, Shelbyville"
NASTY = NEW + ' <script>alert("x")</script> & <b>bold</b>'
REVIEWS = "/inspector/reviews"


@dataclass
class Queued:
    db: Path
    review: str  # the pending review's id
    proposed: str  # the tool's newer statement, waiting
    current: str  # the user's statement it would replace


def queue(db: Path, tenant: str = "default", newer: str = NEW, user: str = "u") -> Queued:
    """The user gives an address; a day later a tool gives another one: it waits for review."""
    at = time.time() - 10 * DAY
    with Memory(db, embedder=HashEmbedder(), tenant=tenant) as mem:
        current = mem.add(OLD, user_id=user, at=at).records[0].id
        proposed = mem.add(newer, user_id=user, source="tool", at=at + DAY).records[0].id
        [review] = mem.reviews(user)
    assert (review.memory_id, review.incumbent, review.status) == (proposed, current, "pending")
    return Queued(db, review.id, proposed, current)


def store(db: Path, tenant: str = "default") -> Memory:
    return Memory(db, embedder=HashEmbedder(), tenant=tenant)


def login(client: TestClient, key: str) -> None:
    done = client.post("/inspector/login", data={"key": key}, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/"), done.text


def served_app(db: Path, *keys: tuple[str, str]) -> tuple[TestClient, list[str]]:
    """A TestClient over the real app on `db`, with a key per (tenant, role)."""
    key_store = KeyStore(keys_path(db))
    made = [key_store.create(tenant, role)[0] for tenant, role in keys]
    key_store.close()
    return TestClient(create_app(db, embedder=HashEmbedder())), made


@pytest.fixture
def queued(tmp_path: Path) -> Queued:
    return queue(tmp_path / "mem.db")


@pytest.fixture
def client(queued: Queued) -> Iterator[TestClient]:
    """Logged in with an admin key of the tenant."""
    test_client, [key] = served_app(queued.db, ("default", "admin"))
    with test_client:
        login(test_client, key)
        yield test_client


def row(html: str, review_id: str) -> str:
    found = re.search(rf'<tr data-review="{review_id}"(.*?)</tr>', html, re.S)
    assert found, f"no row for review {review_id}"
    return found.group(1)


def test_the_queue_lists_a_pending_review_with_both_texts_and_sources(client: TestClient, queued: Queued) -> None:
    page = client.get(REVIEWS)
    assert page.status_code == 200 and "style=" not in page.text and "<script>" not in page.text
    line = row(page.text, queued.review)
    assert 'data-status="pending"' in line
    proposed = line.split('data-testid="proposed">')[1].split("</td>")[0]
    current = line.split('data-testid="current">')[1].split("</td>")[0]
    assert NEW.replace("'", "&#39;") in proposed and ">tool</span>" in proposed
    assert OLD in current and ">user</span>" in current
    assert f'href="/inspector/memories/{queued.proposed}"' in proposed
    assert f'href="/inspector/memories/{queued.current}"' in current
    for decision in ("accept", "reject"):  # a form each, with a note and the way back to this page
        form = re.search(rf'<form method="post" action="{REVIEWS}/{queued.review}/{decision}">(.*?)</form>', line)
        assert form and 'name="note"' in form.group(1)
        assert f'name="back" value="{REVIEWS}?status=pending"' in form.group(1)
    assert 'data-testid="pending">1<' in page.text  # the header counts what waits, on every page
    assert 'data-testid="pending">1<' in client.get("/").text
    assert f'href="{REVIEWS}"' in client.get(f"/inspector/memories/{queued.current}").text
    record = client.get(f"/inspector/memories/{queued.proposed}").text  # a record's page says who said it
    assert re.search(r'data-testid="source">tool<', record)
    assert re.search(r'data-testid="source">user<', client.get(f"/inspector/memories/{queued.current}").text)

    assert queued.review in client.get(REVIEWS, params={"status": "any"}).text
    assert queued.review in client.get(REVIEWS, params={"user": "u"}).text
    for params in ({"status": "accepted"}, {"status": "rejected"}, {"user": "someone-else"}):
        assert queued.review not in client.get(REVIEWS, params=params).text
    bad = client.get(REVIEWS, params={"status": "maybe"})
    assert bad.status_code == 400 and "status:" in bad.text


def test_accepting_through_the_form_replaces_the_current_value(client: TestClient, queued: Queued) -> None:
    back = f"{REVIEWS}?status=pending&user=u"
    done = client.post(f"{REVIEWS}/{queued.review}/accept", data={"note": "  the user moved  ", "back": back},
                       headers={"Origin": "http://testserver"}, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, back)
    with store(queued.db) as mem:
        review = mem.review(queued.review)
        assert (review.status, review.note) == ("accepted", "the user moved")
        assert review.decided_by is not None and review.decided_by.startswith("key:")  # which key decided
        [step] = [s for s in mem.timeline("u", "shipping address") if s["current"]]
        assert step["id"] == queued.proposed and "45 Elm Avenue" in step["value"]
    assert queued.review not in client.get(back).text  # no longer pending
    decided = row(client.get(REVIEWS, params={"status": "accepted"}).text, queued.review)
    assert "accepted" in decided and "the user moved" in decided and f"by {review.decided_by}" in decided
    assert "<form" not in decided  # decided: nothing left to click
    assert 'data-testid="pending"' not in client.get(REVIEWS).text
    again = client.post(f"{REVIEWS}/{queued.review}/reject", data={"back": back})
    assert again.status_code == 409 and "already accepted" in again.text and 'data-testid="error"' in again.text


def test_rejecting_sends_the_proposed_record_to_the_trash(client: TestClient, queued: Queued) -> None:
    done = client.post(f"{REVIEWS}/{queued.review}/reject", data={"note": "wrong customer"}, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, REVIEWS)  # no `back`: the queue itself
    with store(queued.db) as mem:
        assert mem.review(queued.review).status == "rejected"
        assert mem.get(queued.proposed).tier.value == "trash" and mem.get(queued.current).tier.value != "trash"
        [step] = [s for s in mem.timeline("u", "shipping address") if s["current"]]
        assert step["id"] == queued.current
    decided = row(client.get(REVIEWS, params={"status": "rejected"}).text, queued.review)
    assert "wrong customer" in decided
    history = client.get(f"/inspector/memories/{queued.proposed}").text
    assert 'data-testid="tier">trash<' in history and "rejected in review" in history
    again = client.post(f"{REVIEWS}/{queued.review}/accept")
    assert again.status_code == 409 and "already rejected" in again.text


def test_unknown_reviews_decisions_and_bad_notes_change_nothing(client: TestClient, queued: Queued) -> None:
    unknown = client.post(f"{REVIEWS}/01ZZZZZZZZZZZZZZZZZZZZZZZZ/accept")
    assert unknown.status_code == 404 and "no review with id" in unknown.text
    assert client.post(f"{REVIEWS}/{queued.review}/explode").status_code == 404
    long_note = client.post(f"{REVIEWS}/{queued.review}/accept", data={"note": "x" * 40000})
    assert long_note.status_code == 400 and "note:" in long_note.text
    with store(queued.db) as mem:
        assert mem.review(queued.review).status == "pending"
    done = client.post(f"{REVIEWS}/{queued.review}/accept", data={"back": "//evil.example/x"},
                       follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, REVIEWS)  # back only ever to the queue


def test_a_decision_from_another_site_is_refused(client: TestClient, queued: Queued) -> None:
    for headers in ({"Origin": "https://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Sec-Fetch-Site": "same-site"}):
        for decision in ("accept", "reject"):
            refused = client.post(f"{REVIEWS}/{queued.review}/{decision}", data={"back": REVIEWS}, headers=headers)
            assert refused.status_code == 403
    with store(queued.db) as mem:
        assert mem.review(queued.review).status == "pending"
        assert mem.get(queued.proposed).tier.value != "trash"


def test_texts_and_notes_are_escaped(tmp_path: Path) -> None:
    queued = queue(tmp_path / "mem.db", newer=NASTY)
    test_client, [key] = served_app(queued.db, ("default", "admin"))
    with test_client as client:
        login(client, key)
        html = client.get(REVIEWS).text
        assert "<script>alert" not in html and "<b>bold</b>" not in html
        escaped = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;"
        assert escaped in row(html, queued.review).split('data-testid="proposed">')[1]
        client.post(f"{REVIEWS}/{queued.review}/accept", data={"note": "<img src=x onerror=alert(1)>"})
        decided = client.get(REVIEWS, params={"status": "any"}).text
        assert "<img src=x" not in decided and "&lt;img src=x onerror=alert(1)&gt;" in decided
        assert "<script>alert" not in client.get(REVIEWS, params={"user": "<script>alert(1)</script>"}).text


def test_keys_see_and_decide_only_their_own_tenants_reviews(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    acme, globex = queue(db, "acme"), queue(db, "globex", user="w")
    test_client, [admin, agent] = served_app(db, ("acme", "admin"), ("globex", "agent"))
    with test_client as client:
        first = client.get(REVIEWS, follow_redirects=False)
        assert (first.status_code, first.headers["location"]) == (303, "/inspector/login")
        assert client.post(f"{REVIEWS}/{acme.review}/accept", follow_redirects=False).status_code == 303
        login(client, agent)  # an agent key may change memories here, so it decides reviews too
        page = client.get(REVIEWS).text
        assert globex.review in page and acme.review not in page and 'data-action="accept"' in page
        assert client.post(f"{REVIEWS}/{acme.review}/accept").status_code == 404
        assert client.post(f"{REVIEWS}/{globex.review}/accept", follow_redirects=False).status_code == 303
        client.cookies.clear()
        login(client, admin)
        assert acme.review in client.get(REVIEWS).text and globex.review not in client.get(REVIEWS).text
    with store(db, "acme") as mem:
        assert mem.review(acme.review).status == "pending"
    with store(db, "globex") as mem:
        assert mem.review(globex.review).status == "accepted"


@dataclass(frozen=True)
class Viewer:
    """A caller of a role that may look but not change anything (no such key role yet: the router is ready)."""

    tenant: str = "default"
    role: str = "viewer"
    key_id: str = "k1"


class NoSessions:
    def open(self, request: Request, key: str, response: Response) -> None:
        return None

    def close(self, request: Request, response: Response) -> None:
        return None


def test_a_read_only_role_sees_the_queue_without_forms_and_cannot_decide(queued: Queued) -> None:
    def memory_dep() -> Iterator[Memory]:
        with store(queued.db) as mem:
            yield mem

    app = FastAPI()
    app.include_router(inspector.build_router(lambda request: Viewer(), memory_dep, NoSessions()))
    with TestClient(app) as client:
        page = client.get(REVIEWS)
        assert page.status_code == 200 and queued.review in page.text and "45 Elm Avenue" in page.text
        assert "<form method=\"post\" action=\"/inspector/reviews" not in page.text
        for decision in ("accept", "reject"):
            refused = client.post(f"{REVIEWS}/{queued.review}/{decision}", data={"back": REVIEWS})
            assert refused.status_code == 403 and "cannot decide reviews" in refused.text
    with store(queued.db) as mem:
        assert mem.review(queued.review).status == "pending"


# -- in a real browser ---------------------------------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(not CHROMIUM.exists() and os.environ.get("CI") != "true",
                    reason="no /usr/bin/chromium here (Debian's chromium package; scripts/setup installs it)")
def test_accept_in_chromium(tmp_path: Path) -> None:
    """`ebbing serve` as a real process: log in, open the queue from the header, type a note, click Accept."""
    from playwright import sync_api

    from ebbing.bench.serve import running_server
    from tests.test_inspector_browser import ARGS

    queued = queue(tmp_path / "served.db", "acme")
    keys = KeyStore(keys_path(queued.db))
    key = keys.create("acme", "admin", note="browser test")[0]
    keys.close()
    with running_server(queued.db, embedder="hash", args=("--sweep-every", "0"), log=tmp_path / "serve.log",
                        timeout=30) as base, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            expect = sync_api.expect
            expect.set_options(timeout=10_000)
            blocked: list[str] = []
            page.on("console", lambda message: blocked.append(message.text)
                    if "Content Security Policy" in message.text else None)
            page.goto(base + "/")
            page.fill("#key", key)
            page.click("button:has-text('Log in')")
            expect(page.get_by_test_id("pending")).to_have_text("1")
            page.get_by_test_id("nav-reviews").click()
            line = page.locator(f'tr[data-review="{queued.review}"]')
            expect(line.get_by_test_id("proposed")).to_contain_text("45 Elm Avenue")
            expect(line.get_by_test_id("current")).to_contain_text("12 Oak Street")
            line.locator("form:has(button[data-action=accept]) input[name=note]").fill("confirmed by phone")
            line.locator("button[data-action=accept]").click()
            expect(page).to_have_url(f"{base}{REVIEWS}?status=pending")
            expect(line).to_have_count(0)
            expect(page.get_by_test_id("pending")).to_have_count(0)
            page.click("a.chip:has-text('accepted')")
            expect(line.get_by_test_id("note")).to_have_text("confirmed by phone")
            with store(queued.db, "acme") as mem:
                review = mem.review(queued.review)
                assert (review.status, review.note) == ("accepted", "confirmed by phone")
            assert blocked == []
        finally:
            browser.close()
