"""The web inspector in process (FastAPI's TestClient over the real app and a real SQLite file):
pages, escaping, login and cookie, actions checked in the store, 404 for foreign ids, 403 for agents."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import NotFound
from ebbing.server import inspector_view as view
from ebbing.server.app import create_app
from ebbing.server.keys import KeyStore, keys_path

DAY = 86_400.0
NASTY = '<script>alert("x")</script> & <b>bold</b>'


@dataclass
class Seeded:
    db: Path
    ids: dict[str, str]  # name -> record id


def seed(db: Path, tenant: str = "default", now: float | None = None, *, nasty: bool = True) -> Seeded:
    """A user's month: facts, a preference, a changed fact, a pinned rule, swept into every tier; with `nasty`,
    one text full of HTML to check the escaping."""
    now = time.time() if now is None else now
    lines = [
        ("tea", "I like green tea with honey in the afternoon", 45),
        ("timeout30", "The database timeout is 30 seconds", 40),
        ("sister", "My sister Ana lives in Lisbon", 34),
        ("tabs", "I prefer tabs over spaces in Python code", 30),
        ("standup", "Standup moved to 9:30 on Tuesdays", 26),
        ("allergy", "Always remember: I am allergic to peanuts", 22),
        ("trip", "Booked a trip to Kyoto for the spring", 12),
        ("nasty", NASTY, 8),
        ("timeout60", "The database timeout is 60 seconds now, because of slow queries", 5),
        ("deploy", "Deploys go out on Thursdays after the review", 2),
    ]
    ids: dict[str, str] = {}
    with Memory(db, embedder=HashEmbedder(), tenant=tenant) as memory:
        for name, text, days_ago in lines if nasty else [line for line in lines if line[0] != "nasty"]:
            ids[name] = memory.add(text, user_id="maya", at=now - days_ago * DAY).records[0].id
        ids["leo"] = memory.add("Leo's laptop is a ThinkPad", user_id="leo", at=now - 3 * DAY).records[0].id
        memory.pin(ids["deploy"], at=now - DAY)
        memory.sweep(at=now - 20 * DAY)
        memory.sweep(at=now - 6 * DAY)
        memory.sweep(at=now - DAY)
        memory.forget(ids["standup"], at=now - 2 * DAY, reason="the user said it changed")
    return Seeded(db, ids)


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    return seed(tmp_path / "mem.db")


@pytest.fixture
def client(seeded: Seeded) -> Iterator[TestClient]:
    with TestClient(create_app(seeded.db, embedder=HashEmbedder())) as test_client:
        yield test_client


def section(html: str, tier: str) -> str:
    found = re.search(rf'data-testid="tier-{tier}">(.*?)</section>', html, re.S)
    assert found, f"no {tier} section"
    return found.group(1)


def store(seeded: Seeded, tenant: str = "default") -> Memory:
    return Memory(seeded.db, embedder=HashEmbedder(), tenant=tenant)


def test_overview_shows_every_tier_the_log_and_both_charts(client: TestClient, seeded: Seeded) -> None:
    page = client.get("/", params={"user": "maya"})
    assert page.status_code == 200
    html = page.text
    with store(seeded) as memory:
        records = list(memory.export("maya"))
        stats = memory.stats("maya")
    for record in records:  # every record is listed in the section of the tier it is in
        assert f'data-id="{record["id"]}" data-tier="{record["tier"]}"' in html
    for tier, count in stats["by_tier"].items():
        assert f'data-testid="count-{tier}">{count}<' in html
    assert stats["by_tier"]["cold"] and stats["by_tier"]["trash"]  # the seed reaches every tier
    assert seeded.ids["leo"] not in html  # another user's record is not on maya's page
    assert seeded.ids["standup"] in section(html, "trash")
    log = html.split('data-testid="log"')[1]
    assert seeded.ids["standup"] in log and "the user said it changed" in log
    assert html.count('class="chart"') == 2 and "<polygon" in html and "<polyline" in html
    assert html.count('<svg class="key"') == html.count("<polyline")  # a colour swatch per curve, no inline style
    assert "style=" not in html  # the Content-Security-Policy allows no inline style
    assert "never (pinned)" in section(html, "hot") + section(html, "warm")  # the pinned deploy rule
    assert re.search(r"→ (warm|cold|trash) <span class=\"when\">\d{4}-\d\d-\d\d", html)  # projected fade dates
    everyone = client.get("/").text
    assert seeded.ids["leo"] in everyone and seeded.ids["tea"] in everyone


def test_users_are_listed_with_their_counts_and_long_tiers_are_paged(
        client: TestClient, seeded: Seeded, monkeypatch: pytest.MonkeyPatch) -> None:
    with store(seeded) as memory:
        assert memory.users() == {"leo": 1, "maya": 10}
        warm = memory.stats("maya")["by_tier"]["warm"]
    html = client.get("/").text
    assert ">leo <small>1</small>" in html and ">maya <small>10</small>" in html
    monkeypatch.setattr(view, "PAGE", 1)
    short = section(client.get("/", params={"user": "maya"}).text, "warm")
    assert short.count("data-tier=") == 1 and f"Show all {warm}" in short
    link = re.search(r'href="([^"]*more=warm[^"]*)"', short)
    assert link
    full = section(client.get(link.group(1).replace("&amp;", "&")).text, "warm")
    assert full.count("data-tier=") == warm > 1


def test_user_text_is_escaped_everywhere(client: TestClient, seeded: Seeded) -> None:
    nasty = seeded.ids["nasty"]
    pages = [client.get("/", params={"user": "maya"}).text,
             client.get("/", params={"user": "maya", "q": "bold script"}).text,
             client.get(f"/inspector/memories/{nasty}").text,
             client.get("/", params={"user": "maya", "q": '<img src=x onerror="alert(1)">'}).text]
    for html in pages:
        assert "<script>alert" not in html and "<b>bold</b>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in pages[2]
    assert nasty in pages[1]  # found by the search, shown escaped
    assert "&lt;img src=x" in pages[3]


def test_search_only_looks_and_sees_the_cold_archive(client: TestClient, seeded: Seeded) -> None:
    with store(seeded) as memory:
        before = {r["id"]: (r["tier"], r["access_count"]) for r in memory.export("maya")}
    cold = next(i for i, (tier, _) in before.items() if tier == "cold")
    with store(seeded) as memory:
        words = memory.get(cold).text
    hits = client.get("/", params={"user": "maya", "q": words}).text.split('data-testid="hits"')[1]
    assert cold in hits.split("</table>")[0]
    with store(seeded) as memory:
        after = {r["id"]: (r["tier"], r["access_count"]) for r in memory.export("maya")}
    assert after == before  # nothing counted as used, nothing lifted out of the archive


def test_timeline_of_a_changed_fact(client: TestClient, seeded: Seeded) -> None:
    html = client.get("/", params={"user": "maya", "slot": "database timeout"}).text
    timeline = html.split('data-testid="timeline"')[1].split("</ol>")[0]
    assert timeline.index("30 seconds") < timeline.index("60 seconds")
    assert 'class="past"' in timeline and 'class="current"' in timeline
    detail = client.get(f"/inspector/memories/{seeded.ids['timeout60']}").text
    assert "Timeline of its fact" in detail and "30 seconds" in detail
    assert 'data-testid="history"' in detail and ">add<" in detail
    nothing = client.get("/", params={"user": "maya", "slot": "favourite volcano"}).text
    assert "No fact matches" in nothing


def test_actions_change_the_store_and_redirect_back(client: TestClient, seeded: Seeded) -> None:
    back = "/?user=maya"
    tea, trip = seeded.ids["tea"], seeded.ids["trip"]
    for action, memory_id in [("pin", trip), ("forget", tea)]:
        done = client.post(f"/inspector/memories/{memory_id}/{action}", data={"back": back}, follow_redirects=False)
        assert (done.status_code, done.headers["location"]) == (303, back)
    with store(seeded) as memory:
        assert memory.get(trip).pinned and memory.get(tea).tier.value == "trash"
    html = client.get(back).text
    assert tea in section(html, "trash") and "forgotten in the inspector" in html.split('data-testid="log"')[1]
    assert client.post(f"/inspector/memories/{tea}/restore", data={"back": back}).status_code == 200
    client.post(f"/inspector/memories/{trip}/unpin", data={"back": back})
    with store(seeded) as memory:
        assert memory.get(tea).tier.value == "warm" and not memory.get(trip).pinned
    erased = client.post(f"/inspector/memories/{tea}/purge", data={"back": f"/inspector/memories/{tea}"},
                         follow_redirects=False)
    assert (erased.status_code, erased.headers["location"]) == (303, "/")  # not back to a page that is gone
    with store(seeded) as memory, pytest.raises(NotFound):
        memory.get(tea)
    assert client.get(f"/inspector/memories/{tea}").status_code == 404
    everyone = client.get("/").text.split('data-testid="log"')[1]  # a purge keeps no owner: all users' log
    assert tea in everyone and "purged on request" in everyone and "tier purged" in everyone
    assert client.post(f"/inspector/memories/{trip}/explode", data={"back": back}).status_code == 404


def test_back_never_leaves_the_site(client: TestClient, seeded: Seeded) -> None:
    for back in ["//evil.example/x", "https://evil.example/", "javascript:alert(1)", "/\\evil.example"]:
        done = client.post(f"/inspector/memories/{seeded.ids['trip']}/pin", data={"back": back},
                           follow_redirects=False)
        assert done.headers["location"] == "/"


def test_a_form_from_another_site_is_refused(client: TestClient, seeded: Seeded) -> None:
    trip = seeded.ids["trip"]
    for origin in ["https://evil.example", "http://127.0.0.1.evil.example", "null"]:
        refused = client.post(f"/inspector/memories/{trip}/forget", data={"back": "/"}, headers={"Origin": origin})
        assert refused.status_code == 403
    with store(seeded) as memory:
        assert memory.get(trip).tier.value != "trash"
    same = client.post(f"/inspector/memories/{trip}/pin", data={"back": "/"}, headers={"Origin": "http://testserver"},
                       follow_redirects=False)
    assert same.status_code == 303


def test_bad_input_is_a_clear_400(client: TestClient) -> None:
    for params, field in [({"days": "0"}, "days"), ({"days": "9999"}, "days"), ({"user": "x" * 300}, "user")]:
        page = client.get("/", params=params)
        assert page.status_code == 400 and f"{field}:" in page.text
    assert client.get("/inspector/static/inspector.css").headers["content-type"].startswith("text/css")
    assert client.get("/inspector/static/..%2Fapp.py").status_code == 404
    assert client.get("/inspector/static/secret.txt").status_code == 404


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[TestClient, Seeded, Seeded, dict[str, str]]]:
    """Two tenants on one store, each with keys; acme's key is admin, globex's an agent."""
    db = tmp_path / "shared.db"
    acme, globex = seed(db, "acme"), seed(db, "globex")
    store_ = KeyStore(keys_path(db))
    keys = {"acme": store_.create("acme", "admin")[0], "globex": store_.create("globex", "agent")[0]}
    store_.close()
    with TestClient(create_app(db, embedder=HashEmbedder())) as test_client:
        yield test_client, acme, globex, keys


def login(client: TestClient, key: str) -> str:
    """Log in through the form; returns the session id the cookie now holds."""
    done = client.post("/inspector/login", data={"key": key}, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/"), done.text
    return str(client.cookies["ebbing_session"])


def test_login_sets_a_strict_httponly_session_cookie_and_never_echoes_the_key(
        keyed: tuple[TestClient, Seeded, Seeded, dict[str, str]]) -> None:
    client, _, _, keys = keyed
    home = client.get("/", follow_redirects=False)
    assert (home.status_code, home.headers["location"]) == (303, "/inspector/login")
    assert client.post("/inspector/memories/X/pin", follow_redirects=False).status_code == 303
    wrong = keys["acme"][:-4] + "zzzz"
    failed = client.post("/inspector/login", data={"key": wrong}, follow_redirects=False)
    assert failed.status_code == 401 and "not valid" in failed.text and wrong not in failed.text
    assert "set-cookie" not in failed.headers
    ok = client.post("/inspector/login", data={"key": keys["acme"]}, follow_redirects=False)
    assert (ok.status_code, ok.headers["location"]) == (303, "/")
    cookie = ok.headers["set-cookie"]
    session = client.cookies["ebbing_session"]  # an opaque session id, not the key
    assert cookie.startswith(f"ebbing_session={session};") and "HttpOnly" in cookie and "Max-Age=43200" in cookie
    assert "samesite=strict" in cookie.lower() and "Path=/" in cookie and "secure" not in cookie.lower()
    assert keys["acme"] not in cookie and len(session) >= 40
    page = client.get("/", params={"user": "maya"})  # the client now sends the cookie
    assert page.status_code == 200 and "tenant <b>acme</b>" in page.text and keys["acme"] not in page.text
    out = client.post("/inspector/logout", follow_redirects=False)
    assert 'ebbing_session=""' in out.headers["set-cookie"] and "Max-Age=0" in out.headers["set-cookie"]
    client.cookies.clear()
    assert client.get("/", follow_redirects=False).status_code == 303
    client.cookies.set("ebbing_session", session)  # a copy of the cookie kept from before the logout: dead
    assert client.get("/", follow_redirects=False).status_code == 303


def test_foreign_ids_are_404_and_change_nothing(keyed: tuple[TestClient, Seeded, Seeded, dict[str, str]]) -> None:
    client, acme, globex, keys = keyed
    login(client, keys["globex"])
    theirs = acme.ids["trip"]
    page = client.get(f"/inspector/memories/{theirs}")
    unknown = client.get("/inspector/memories/01ZZZZZZZZZZZZZZZZZZZZZZZZ")
    assert page.status_code == unknown.status_code == 404
    assert page.text.replace(theirs, "ID") == unknown.text.replace("01ZZZZZZZZZZZZZZZZZZZZZZZZ", "ID")
    for action in ("pin", "forget", "restore", "unpin"):
        assert client.post(f"/inspector/memories/{theirs}/{action}", data={"back": "/"}).status_code == 404
    overview = client.get("/", params={"user": "maya"}).text
    assert theirs not in overview and globex.ids["trip"] in overview
    with store(acme, "acme") as memory:
        record = memory.get(theirs)
        assert not record.pinned and record.tier.value != "trash"
        assert all(event.actor != "server" for event in memory.history(theirs))  # nothing was done to it


def test_an_agent_key_cannot_erase(keyed: tuple[TestClient, Seeded, Seeded, dict[str, str]]) -> None:
    client, _, globex, keys = keyed
    client.headers["Authorization"] = f"Bearer {keys['globex']}"  # a Bearer header works like the cookie
    html = client.get("/", params={"user": "maya"}).text
    assert 'data-action="purge"' not in html and 'data-action="forget"' in html
    refused = client.post(f"/inspector/memories/{globex.ids['trip']}/purge", data={"back": "/"})
    assert refused.status_code == 403
    with store(globex, "globex") as memory:
        assert memory.get(globex.ids["trip"]).id == globex.ids["trip"]
