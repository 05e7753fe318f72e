"""The server's web-facing defences: the inspector's server-side sessions (never the key in a cookie), the
Secure flag, security headers and the Content-Security-Policy, the cross-site checks on POSTs, and error
answers a client can read (bad JSON names the body; a 413 arrives whole, also over a real socket to urllib).
"""

from __future__ import annotations

import json
import re
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from ebbing import Memory
from ebbing.bench.serve import running_server
from ebbing.cli import app as cli_app
from ebbing.embed.hashing import HashEmbedder
from ebbing.server import headers, limits
from ebbing.server.app import create_app
from ebbing.server.keys import KeyStore, keys_path
from ebbing.server.limits import Limits
from ebbing.server.tenancy import SESSION_SECONDS, Server

COOKIE = "ebbing_session"
HOUR = 3600.0


@dataclass
class Site:
    db: Path
    admin: str  # plaintext keys
    agent: str
    record: str  # a record id of tenant acme


@pytest.fixture
def site(tmp_path: Path) -> Site:
    db = tmp_path / "mem.db"
    with Memory(db, embedder=HashEmbedder(), tenant="acme") as memory:
        record = memory.add("Deploys go out on Thursdays", user_id="maya").records[0].id
        memory.add("I like green tea in the afternoon", user_id="maya")
    store = KeyStore(keys_path(db))
    admin, agent = store.create("acme", "admin")[0], store.create("acme", "agent")[0]
    store.close()
    return Site(db, admin, agent, record)


@pytest.fixture
def http(site: Site) -> Iterator[TestClient]:
    with TestClient(create_app(site.db, embedder=HashEmbedder())) as client:
        yield client


def login(client: TestClient, key: str, **headers: str) -> str:
    done = client.post("/inspector/login", data={"key": key}, headers=headers, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/"), done.text
    return str(client.cookies[COOKIE])


def rows(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(keys_path(db)) as conn:
        return conn.execute("SELECT hash, key_id, created_at, expires_at FROM sessions").fetchall()


def logged_in(client: TestClient) -> bool:
    return client.get("/", follow_redirects=False).status_code == 200


# --- sessions ---------------------------------------------------------------------------------------------

def test_the_cookie_holds_a_session_id_and_the_store_only_its_hash(site: Site, http: TestClient) -> None:
    session = login(http, site.admin)
    assert session != site.admin and site.admin not in session and len(session) >= 40
    assert logged_in(http)
    [(digest, key_id, created, expires)] = rows(site.db)
    assert key_id == site.admin.split("_")[1]  # the key's public id
    assert digest != session and len(digest) == 64 and expires - created == SESSION_SECONDS
    raw = b"".join(path.read_bytes() for path in site.db.parent.glob("mem.keys.db*"))  # WAL included
    secret = site.admin.split("_", 2)[2]
    assert session.encode() not in raw and secret.encode() not in raw and site.admin.encode() not in raw
    failed = http.post("/inspector/login", data={"key": site.admin + "x"}, follow_redirects=False)
    assert failed.status_code == 401 and "set-cookie" not in failed.headers
    assert len(rows(site.db)) == 1  # a bad key opens nothing


def test_revoking_the_key_ends_its_sessions_at_once(site: Site, http: TestClient) -> None:
    login(http, site.agent)
    assert logged_in(http)
    store = KeyStore(keys_path(site.db))  # as `ebbing keys revoke` does, from another process
    store.revoke(site.agent.split("_")[1])  # by its public id
    store.close()
    assert not logged_in(http) and rows(site.db) == []
    answer = http.get("/v1/stats")  # the API says why, in the usual shape
    assert answer.status_code == 401 and "log in again" in answer.json()["error"]["message"]


def test_a_revoked_key_is_refused_even_if_its_session_row_survived(site: Site, http: TestClient) -> None:
    login(http, site.agent)
    with sqlite3.connect(keys_path(site.db)) as conn:  # revoked behind the store's back: the row stays
        conn.execute("UPDATE keys SET revoked_at = 1 WHERE revoked_at IS NULL")
    assert len(rows(site.db)) == 1 and not logged_in(http)


def test_sessions_expire_after_twelve_hours(site: Site, http: TestClient) -> None:
    session = login(http, site.admin)
    store = KeyStore(keys_path(site.db))
    assert store.session(session) is not None
    assert store.session(session, at=rows(site.db)[0][3] + 1) is None
    store.close()
    with sqlite3.connect(keys_path(site.db)) as conn:
        conn.execute("UPDATE sessions SET expires_at = created_at - 1")
    assert not logged_in(http)
    login(http, site.admin)  # the next login tidies the dead row away
    assert len(rows(site.db)) == 1


def test_every_server_process_on_the_store_shares_the_sessions(site: Site) -> None:
    with TestClient(create_app(site.db, embedder=HashEmbedder())) as one, \
            TestClient(create_app(site.db, embedder=HashEmbedder())) as two:
        session = login(one, site.admin)
        two.cookies.set(COOKIE, session)
        assert logged_in(two)
        assert two.post("/inspector/logout", follow_redirects=False).status_code == 303
        assert not logged_in(one)  # logged out in one process, out in all of them
        assert rows(site.db) == []


def test_logging_in_again_replaces_the_session_and_clears_an_old_raw_key_cookie(site: Site, http: TestClient) -> None:
    first = login(http, site.admin)
    http.cookies.set("ebbing_key", site.admin)  # what older servers left in a browser
    second = http.post("/inspector/login", data={"key": site.admin}, follow_redirects=False)
    cookies = second.headers.get_list("set-cookie")
    assert any(c.startswith('ebbing_key=""') and "Max-Age=0" in c for c in cookies)
    assert http.cookies[COOKIE] != first and len(rows(site.db)) == 1


def test_open_mode_ignores_a_stale_session_cookie(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path / "open.db", embedder=HashEmbedder())) as client:
        client.cookies.set(COOKIE, "made-up")
        assert logged_in(client) and client.get("/v1/stats").status_code == 200


# --- the Secure flag --------------------------------------------------------------------------------------

def test_the_cookie_is_secure_over_https_or_when_told(site: Site) -> None:
    def set_cookie(client: TestClient) -> str:
        done = client.post("/inspector/login", data={"key": site.admin}, follow_redirects=False)
        return str(done.headers["set-cookie"]).lower()

    with TestClient(create_app(site.db, embedder=HashEmbedder())) as plain:
        assert "secure" not in set_cookie(plain)
    with TestClient(create_app(site.db, embedder=HashEmbedder()), base_url="https://testserver") as tls:
        assert "; secure" in set_cookie(tls)
        assert "; secure" in tls.post("/inspector/logout", follow_redirects=False).headers["set-cookie"].lower()
    with TestClient(create_app(site.db, embedder=HashEmbedder(), secure_cookies=True)) as told:
        assert "; secure" in set_cookie(told)


@pytest.mark.parametrize(("args", "env", "secure"), [([], {}, False), (["--secure-cookies"], {}, True),
                                                     ([], {"EBBING_COOKIE_SECURE": "1"}, True)])
def test_serve_takes_secure_cookies_from_a_flag_or_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str], secure: bool) -> None:
    served: list[FastAPI] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: served.append(app))
    monkeypatch.setenv("EBBING_EMBEDDER", "hash")
    monkeypatch.delenv("EBBING_COOKIE_SECURE", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    done = CliRunner().invoke(cli_app, ["--db", str(tmp_path / "mem.db"), "serve", *args])
    assert done.exit_code == 0, done.output
    server = served[0].state.ebbing
    assert isinstance(server, Server) and server.secure_cookies is secure
    server.keys.close()  # the app was built but never served


# --- security headers -------------------------------------------------------------------------------------

def test_every_answer_carries_the_security_headers(site: Site, http: TestClient) -> None:
    answers = {"login form": http.get("/inspector/login"), "health": http.get("/healthz"),
               "no route": http.get("/nowhere"), "css": http.get("/inspector/static/inspector.css"),
               "401": http.get("/v1/stats"), "413": http.post("/v1/memories", content=b"x" * 2_000_000)}
    login(http, site.admin)
    answers |= {"page": http.get("/", params={"user": "maya"}), "error page": http.get("/", params={"days": "0"}),
                "record": http.get(f"/inspector/memories/{site.record}"), "api": http.get("/v1/stats")}
    for name, answer in answers.items():
        got = answer.headers
        assert got["content-security-policy"] == headers.CSP, name
        assert "frame-ancestors 'none'" in got["content-security-policy"] and "unsafe" not in headers.CSP
        assert (got["x-frame-options"], got["x-content-type-options"], got["referrer-policy"]) == (
            "DENY", "nosniff", "same-origin"), name
    docs = http.get("/docs")  # Swagger UI from installed files: no CDN, no inline script (server/docs.py)
    assert docs.status_code == 200 and docs.headers["content-security-policy"] == headers.DOCS_CSP
    assert "<script>" not in docs.text and "cdn" not in docs.text.lower()
    assert "'unsafe-inline'" not in headers.DOCS_CSP.split("script-src")[1].split(";")[0]
    assert docs.headers["x-frame-options"] == "DENY"
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "docs.js"):
        assert http.get(f"/docs/assets/{asset}").status_code == 200
    assert http.get("/docs/assets/../../app.py").status_code == 404
    assert http.get("/redoc").status_code == 404  # FastAPI's ReDoc page loads from a CDN: not served


def test_the_pages_need_nothing_the_policy_forbids(site: Site, http: TestClient) -> None:
    """No inline script, no inline style, no event-handler attribute, nothing loaded from elsewhere."""
    pages = [http.get("/inspector/login").text]
    login(http, site.admin)
    pages += [http.get("/").text, http.get("/", params={"user": "maya", "q": "tea", "slot": "deploys"}).text,
              http.get(f"/inspector/memories/{site.record}").text, http.get("/", params={"days": "0"}).text]
    assert '<svg class="key"' in pages[1]  # the curve legend's swatches are drawn, not styled
    for html in pages:
        scripts = re.findall(r"<script[^>]*>", html)
        assert scripts and all(re.search(r'\bsrc="/inspector/static/[a-z]+\.js"', tag) for tag in scripts)
        assert "<style" not in html and "style=" not in html and not re.search(r"\son[a-z]+=", html)
        assert not re.search(r'(src|href)="(https?:)?//', html)


# --- cross-site POSTs -------------------------------------------------------------------------------------

def test_sec_fetch_site_refuses_other_sites_even_without_origin(site: Site, http: TestClient) -> None:
    login(http, site.admin)
    pin = f"/inspector/memories/{site.record}/pin"
    for fetch_site in ("cross-site", "same-site", "CROSS-SITE"):
        refused = http.post(pin, data={"back": "/"}, headers={"Sec-Fetch-Site": fetch_site})
        assert refused.status_code == 403 and "another site" in refused.text
        assert http.post("/inspector/logout", headers={"Sec-Fetch-Site": fetch_site}).status_code == 403
    assert logged_in(http)  # the refused logouts logged nobody out
    with Memory(site.db, embedder=HashEmbedder(), tenant="acme") as memory:
        assert not memory.get(site.record).pinned
    for allowed in ({"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"}, {"Sec-Fetch-Site": "none"},
                    {}):  # the page's own form, a typed navigation, curl
        assert http.post(pin, data={"back": "/"}, headers=allowed, follow_redirects=False).status_code == 303
    assert http.post(pin, headers={"Sec-Fetch-Site": "same-origin", "Origin": "https://evil.example"}).status_code \
        == 403  # Origin still counts
    http.cookies.clear()
    lured = http.post("/inspector/login", data={"key": site.admin}, headers={"Sec-Fetch-Site": "cross-site"})
    assert lured.status_code == 403 and COOKIE not in http.cookies  # no login forced on from another site


# --- error answers ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "where"), [(b'{"query": "x",}', "character 14"), (b"{not json", "character 1"),
                                             (b'{"query": "x"', "character 13")])
def test_malformed_json_names_the_body(tmp_path: Path, body: bytes, where: str) -> None:
    with TestClient(create_app(tmp_path / "mem.db", embedder=HashEmbedder())) as client:
        answer = client.post("/v1/search", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["type"] == "invalid_request" and error["field"] == "body"
    assert error["message"].startswith("body: must be valid JSON: ") and where in error["message"]


def post(url: str, data: bytes | Iterator[bytes], **headers: str) -> tuple[int, dict[str, Any]]:
    """POST with Python's urllib, which sends its whole body before it reads the answer."""
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_over_a_real_socket_urllib_reads_the_413_and_the_sessions_are_shared(site: Site) -> None:
    big = json.dumps({"text": "word " * 1_000_000, "user_id": "maya"}).encode()  # 5 MB; the limit is 1 MB
    assert limits.DRAIN > len(big) > 4 * Limits().max_body

    def chunks() -> Iterator[bytes]:  # no Content-Length: urllib sends it chunked
        for start in range(0, len(big), 65_536):
            yield big[start:start + 65_536]

    with running_server(site.db, args=("--sweep-every", "0")) as url:
        auth = {"Authorization": f"Bearer {site.agent}"}
        for body in (big, big, chunks()):  # twice over the same path: nothing is left stuck in the server
            status, answer = post(f"{url}/v1/memories", body, **auth)
            assert status == 413 and answer["error"]["type"] == "too_large" and answer["error"]["field"] == "body"
        status, answer = post(f"{url}/v1/memories", json.dumps({"text": "small", "user_id": "maya"}).encode(), **auth)
        assert status == 201
        with Memory(site.db, embedder=HashEmbedder(), tenant="acme") as memory:
            assert memory.stats()["total"] == 3  # the two seeded and the small one

        # behind a TLS proxy on loopback (trusted by uvicorn): the cookie is Secure; direct HTTP: it is not
        form = b"key=" + site.admin.encode()
        cookies = []
        for extra in ({"X-Forwarded-Proto": "https"}, {}):
            request = urllib.request.Request(f"{url}/inspector/login", data=form, headers={
                "Content-Type": "application/x-www-form-urlencoded", **extra})
            with urllib.request.build_opener(NoRedirect).open(request, timeout=60) as answer:
                cookies.append(answer.headers["Set-Cookie"])
        assert "; secure" in cookies[0].lower() and "secure" not in cookies[1].lower()

        # a session opened by the server process works in this one, and a logout here ends it there
        session = re.match(rf"{COOKIE}=([^;]+);", cookies[1])
        assert session
        with TestClient(create_app(site.db, embedder=HashEmbedder())) as here:
            here.cookies.set(COOKIE, session.group(1))
            assert logged_in(here)
            here.post("/inspector/logout")
        gone = urllib.request.Request(f"{url}/v1/stats", headers={"Cookie": f"{COOKIE}={session.group(1)}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(gone, timeout=60)
        assert refused.value.code == 401


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Hands the login's 303 back as it is, Set-Cookie and all."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None

    def http_error_303(self, req: Any, fp: Any, code: int, msg: str, hdrs: Any) -> Any:
        return fp
