"""The inspector end to end: `ebbing serve` as a real process, Debian's Chromium driven by Playwright.

Log in with a key, load a user's page, search, pin, forget, restore and erase; each step is checked on
screen and then in the store (opened with `Memory` beside the server). Playwright cannot download its own
browser here, so it runs `/usr/bin/chromium` (installed by scripts/setup). Set EBBING_INSPECTOR_SCREENSHOT
to a path to also save a screenshot of the populated page (docs/inspector.png is made that way).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import NotFound
from ebbing.server.keys import KeyStore, keys_path
from tests.test_inspector import Seeded, seed

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]

if not CHROMIUM.exists():
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI must run the browser test: /usr/bin/chromium is missing (scripts/setup installs it)")
    pytest.skip("no /usr/bin/chromium here (Debian's chromium package; scripts/setup installs it)",
                allow_module_level=True)

from playwright import sync_api  # noqa: E402  (a locked dev dependency: never skipped for lack of it)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Seeded, str]]:
    """(base url, seeded store, admin key) of a real `ebbing serve` on a free loopback port."""
    db = tmp_path / "served.db"
    seeded = seed(db, "acme", nasty=False)  # escaping is checked in test_inspector.py
    keys = KeyStore(keys_path(db))
    key = keys.create("acme", "admin", note="browser test")[0]
    keys.close()
    port = free_port()
    env = {**os.environ, "EBBING_EMBEDDER": "hash", "EBBING_HOME": str(tmp_path / "home")}
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "ebbing", "--db", str(db), "serve", "--port", str(port),
                               "--sweep-every", "0"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("ebbing serve did not start: " + (tmp_path / "serve.log").read_text()) from None
                time.sleep(0.1)
        yield base, seeded, key
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def store(seeded: Seeded) -> Memory:
    return Memory(seeded.db, embedder=HashEmbedder(), tenant="acme")


def test_load_search_pin_forget_restore_erase_in_chromium(served: tuple[str, Seeded, str]) -> None:
    base, seeded, key = served
    ids = seeded.ids
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            expect = sync_api.expect
            expect.set_options(timeout=10_000)
            blocked: list[str] = []  # whatever the Content-Security-Policy stopped: nothing, if it fits the pages
            page.on("console", lambda message: blocked.append(message.text)
                    if "Content Security Policy" in message.text else None)

            # Load: no key yet, so the login form; a wrong key is refused, the right one lets us in.
            first = page.goto(base + "/")
            assert first is not None and "script-src 'self'" in first.headers["content-security-policy"]
            expect(page).to_have_url(base + "/inspector/login")
            page.fill("#key", "ebk_000000000000_wrong")
            page.click("button:has-text('Log in')")
            expect(page.locator(".error")).to_contain_text("not valid")
            page.fill("#key", key)
            page.click("button:has-text('Log in')")
            expect(page.get_by_test_id("who")).to_contain_text("acme")
            cookies = page.context.cookies()
            assert [c["name"] for c in cookies] == ["ebbing_session"] and cookies[0]["httpOnly"]
            assert key not in cookies[0]["value"]  # a session id: the key stays out of the browser
            assert page.evaluate("document.cookie") == ""  # HttpOnly: the page's scripts cannot read the session
            page.click("a.chip:has-text('maya')")
            expect(page.locator("h1")).to_have_text("maya")
            with store(seeded) as memory:
                stats = memory.stats("maya")["by_tier"]
            for tier, count in stats.items():
                expect(page.get_by_test_id(f"count-{tier}")).to_have_text(str(count))
            expect(page.locator("svg.chart")).to_have_count(2)

            shot = os.environ.get("EBBING_INSPECTOR_SCREENSHOT")
            if shot:
                page.goto(base + "/?user=maya&slot=database+timeout")
                page.screenshot(path=shot, full_page=True)
                page.goto(base + "/?user=maya")

            # Search: the hit is on screen; in the store nothing was counted as a use.
            with store(seeded) as memory:
                uses = memory.get(ids["trip"]).access_count
            page.fill("#q", "trip to Kyoto")
            page.press("#q", "Enter")
            hits = page.get_by_test_id("hits")
            expect(hits.locator(f'tr[data-id="{ids["trip"]}"]')).to_contain_text("Kyoto")
            with store(seeded) as memory:
                assert memory.get(ids["trip"]).access_count == uses

            # Pin: the row gets its badge and an Unpin button; the record is pinned in the store.
            row = page.locator(f'tr[data-id="{ids["trip"]}"][data-tier]')
            row.locator("button[data-action=pin]").click()
            row = page.locator(f'tr[data-id="{ids["trip"]}"][data-tier]')
            expect(row.locator(".badge.pinned")).to_be_visible()
            expect(row.locator("button[data-action=unpin]")).to_be_visible()
            with store(seeded) as memory:
                assert memory.get(ids["trip"]).pinned

            # Forget: the record moves to the trash section and the forgetting log says why.
            page.locator(f'tr[data-id="{ids["tabs"]}"][data-tier] button[data-action=forget]').click()
            expect(page.get_by_test_id("tier-trash").locator(f'tr[data-id="{ids["tabs"]}"]')).to_be_visible()
            expect(page.get_by_test_id("log").locator(f'tr[data-id="{ids["tabs"]}"]')).to_contain_text(
                "forgotten in the inspector")
            with store(seeded) as memory:
                assert memory.get(ids["tabs"]).tier.value == "trash"

            # Restore from the trash: back in warm, on screen and in the store.
            page.get_by_test_id("tier-trash").locator(
                f'tr[data-id="{ids["tabs"]}"] button[data-action=restore]').click()
            expect(page.get_by_test_id("tier-warm").locator(f'tr[data-id="{ids["tabs"]}"]')).to_be_visible()
            expect(page.get_by_test_id("tier-trash").locator(f'tr[data-id="{ids["tabs"]}"]')).to_have_count(0)
            with store(seeded) as memory:
                assert memory.get(ids["tabs"]).tier.value == "warm"

            # Erase asks first: dismissing keeps the record, accepting erases it for good.
            erase = page.locator(f'tr[data-id="{ids["standup"]}"][data-tier] button[data-action=purge]')
            page.once("dialog", lambda dialog: dialog.dismiss())
            erase.click()
            page.wait_for_timeout(300)  # time for a form that was not stopped to have been sent
            expect(page.locator(f'tr[data-id="{ids["standup"]}"][data-tier]')).to_have_count(1)
            with store(seeded) as memory:
                assert memory.get(ids["standup"]).tier.value == "trash"
            page.once("dialog", lambda dialog: dialog.accept())
            erase.click()
            expect(page.locator(f'tr[data-id="{ids["standup"]}"][data-tier]')).to_have_count(0)
            with store(seeded) as memory, pytest.raises(NotFound):
                memory.get(ids["standup"])

            # A record's own page: its history shows what was just done to it.
            page.goto(f"{base}/inspector/memories/{ids['tabs']}")
            expect(page.get_by_test_id("history")).to_contain_text("forgotten in the inspector")
            expect(page.get_by_test_id("tier")).to_have_text("warm")
            assert blocked == []

            # Log out: the session ends on the server too, so the page asks for a key again.
            page.click("button:has-text('Log out')")
            expect(page).to_have_url(base + "/inspector/login")
            page.goto(base + "/")
            expect(page).to_have_url(base + "/inspector/login")
        finally:
            browser.close()


def test_the_api_docs_render_offline_in_chromium(served: tuple[str, Seeded, str]) -> None:
    """`/docs` loads Swagger UI from the server itself: with every other host refused, the operations render and
    the page's policy blocks nothing it needs."""
    base, _, _ = served
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page()
            elsewhere: list[str] = []

            def only_here(route: sync_api.Route) -> None:
                if route.request.url.startswith(base):
                    route.continue_()
                else:  # a CDN, a font host: the offline docs must not need them
                    elsewhere.append(route.request.url)
                    route.abort()

            page.route("**/*", only_here)
            blocked: list[str] = []
            page.on("console", lambda message: blocked.append(message.text)
                    if "Content Security Policy" in message.text else None)
            answer = page.goto(base + "/docs")
            assert answer is not None and "script-src 'self';" in answer.headers["content-security-policy"]
            sync_api.expect(page.locator(".opblock-summary-path", has_text="/v1/events")).to_have_count(1,
                                                                                                     timeout=15_000)
            assert page.locator(".opblock").count() > 20
            assert elsewhere == [] and blocked == []
        finally:
            browser.close()
