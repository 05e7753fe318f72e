"""THE acceptance test: `ebbing serve` as a real process on a free loopback port, two tenants' keys made
with the CLI, the API over HTTP with httpx, including every cross-tenant attempt, auth failures and limits.
Also: the server refuses a public address without keys, and a tiny `ebbing bench serve` run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from ebbing.bench.serve import render, run, running_server
from ebbing.cli import app
from ebbing.errors import InvalidInput
from ebbing.server.keys import KeyStore, keys_path

T0 = "2026-01-05T09:00:00+00:00"
NOBODY = "01KAAAAAAAAAAAAAAAAAAAAAAA"  # shaped like an id, never made


def spawn(*args: str) -> subprocess.Popen[str]:
    """The real CLI in a process of its own; several run side by side, since each start takes a second or two."""
    return subprocess.Popen([sys.executable, "-m", "ebbing", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(process: subprocess.Popen[str], code: int = 0) -> tuple[str, str]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == code, err
    return out, err


def same_404(foreign: httpx.Response, missing: httpx.Response, foreign_id: str) -> None:
    """A foreign id must look exactly like an id that never existed: status, headers that matter, body."""
    assert foreign.status_code == missing.status_code == 404, (foreign.text, missing.text)
    assert foreign.headers["content-type"] == missing.headers["content-type"]
    assert foreign.text.replace(foreign_id, NOBODY) == missing.text


def test_two_tenants_over_a_real_socket(tmp_path: Path) -> None:
    db = tmp_path / "mem.db"
    # the two tenants' agent keys through the real CLI, each in its own process, side by side
    makers = [spawn("--db", str(db), "keys", "create", "--tenant", t, "--role", "agent", "--json")
              for t in ("alpha", "beta")]
    made = [json.loads(finish(p)[0]) for p in makers]
    assert [(m["tenant"], m["role"]) for m in made] == [("alpha", "agent"), ("beta", "agent")]
    alpha, beta = (m["key"] for m in made)
    store = KeyStore(keys_path(db))  # the rest directly: the CLI makes the same call
    alpha_admin, beta_admin = store.create("alpha", "admin")[0], store.create("beta", "admin")[0]
    doomed, doomed_info = store.create("alpha", "agent")
    slow = store.create("alpha", "agent", rate=0.2, burst=3)[0]
    store.close()
    # list and revoke through the CLI in this process (another interpreter start costs seconds on a busy CI)
    revoked = CliRunner().invoke(app, ["--db", str(db), "keys", "revoke", doomed_info.key_id, "--json"])
    assert revoked.exit_code == 0 and json.loads(revoked.stdout)["revoked_at"]
    listed = json.loads(CliRunner().invoke(app, ["--db", str(db), "keys", "list", "--json"]).stdout)
    assert len(listed) == 6 and not any(k in json.dumps(listed) for k in (alpha, beta, doomed))
    assert [k["key_id"] for k in listed if k["revoked_at"]] == [doomed_info.key_id]

    with running_server(db, args=("--sweep-every", "0", "--max-body", "4000")) as url:
        a = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {alpha}"}, timeout=60)
        b = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {beta}"}, timeout=60)
        b_admin = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {beta_admin}"}, timeout=60)
        beta_stats_before = b.get("/v1/stats").json()
        beta_export_before = b.get("/v1/export").json()

        created = a.post("/v1/memories", json={"text": "Alpha's database timeout is 30 seconds", "user_id": "alice",
                                                "at": T0})
        assert created.status_code == 201
        rid = created.json()["records"][0]["id"]
        a.post("/v1/memories", json={"text": "Alpha's release codename is Juniper", "user_id": "alice", "at": T0})
        original = a.get(f"/v1/memories/{rid}").json()
        original_history = a.get(f"/v1/memories/{rid}/history").json()

        # every operation on a foreign id: the same 404 as an id that never existed
        attempts: list[tuple[httpx.Client, str, str, dict[str, Any] | None]] = [
            (b, "GET", "/v1/memories/{id}", None),
            (b, "PATCH", "/v1/memories/{id}", {"text": "hijacked"}),
            (b, "DELETE", "/v1/memories/{id}", None),
            (b, "POST", "/v1/memories/{id}/forget", {"reason": "x"}),
            (b, "POST", "/v1/memories/{id}/restore", {}),
            (b, "POST", "/v1/memories/{id}/pin", {}),
            (b, "POST", "/v1/memories/{id}/unpin", {}),
            (b, "GET", "/v1/memories/{id}/history", None),
            (b, "GET", "/v1/memories/{id}/explain", None),
            (b_admin, "POST", "/v1/memories/{id}/hold", {}),
            (b_admin, "POST", "/v1/memories/{id}/release", {}),
            (b_admin, "POST", "/v1/memories/{id}/purge", {}),
        ]
        for http, method, path, body in attempts:
            foreign = http.request(method, path.format(id=rid), json=body)
            missing = http.request(method, path.format(id=NOBODY), json=body)
            same_404(foreign, missing, rid)

        # nothing of alpha's shows up anywhere for beta, and nothing of beta's state changed
        for query in ("database timeout", "Juniper", "Alpha"):
            assert b.post("/v1/search", json={"query": query, "user_id": "alice"}).json() == {"hits": []}
            assert b.post("/v1/search", json={"query": query}).json() == {"hits": []}
            assert "Alpha" not in b.post("/v1/context", json={"query": query, "user_id": "alice"}).json()["text"]
        assert b.post("/v1/timeline", json={"user_id": "alice", "slot": "database timeout"}).json() == {"timeline": []}
        assert b.get("/v1/stats").json() == beta_stats_before
        assert b.get("/v1/stats", params={"user_id": "alice"}).json() == b.get("/v1/stats", params={
            "user_id": "nobody-at-all"}).json()
        assert b.get("/v1/export").json() == beta_export_before == {"records": []}
        assert b.get("/v1/export", params={"user_id": "alice"}).json() == {"records": []}
        assert b.get("/v1/forgotten").json() == {"forgotten": []}
        assert b_admin.post("/v1/users/alice/purge", json={}).json() == {"purged": 0}
        sweep = b_admin.post("/v1/sweep", json={}).json()
        assert sweep["evaluated"] == 0

        # alpha's record is untouched by all of it
        assert a.get(f"/v1/memories/{rid}").json() == original
        assert a.get(f"/v1/memories/{rid}/history").json() == original_history
        assert len(a.get("/v1/export").json()["records"]) == 2
        assert a.post("/v1/search", json={"query": "database timeout", "user_id": "alice"}).json()["hits"]

        # beta's own records stay beta's
        own = b.post("/v1/memories", json={"text": "Beta deploys on Tuesdays", "user_id": "alice"}).json()
        assert own["records"][0]["tenant"] == "beta"
        assert [r["id"] for r in a.get("/v1/export").json()["records"]].count(own["records"][0]["id"]) == 0
        found = b.post("/v1/search", json={"query": "deploys", "user_id": "alice"}).json()["hits"]
        assert [h["record"]["tenant"] for h in found] == ["beta"]
        # the same words as alpha's record make a new beta record: dedupe never reaches across tenants
        before_twin = a.get(f"/v1/memories/{rid}").json()
        twin = b.post("/v1/memories", json={"text": "Alpha's database timeout is 30 seconds", "user_id": "alice",
                                             "at": T0}).json()["records"][0]
        assert twin["tenant"] == "beta" and twin["id"] != rid and twin["access_count"] == 0
        assert a.get(f"/v1/memories/{rid}").json() == before_twin

        # auth: no key, a bad key, a revoked key, an agent on admin routes
        def error(response: httpx.Response, status: int, type_: str) -> None:
            assert response.status_code == status, response.text
            assert response.json()["error"]["type"] == type_

        error(httpx.get(f"{url}/v1/stats"), 401, "unauthorized")
        error(httpx.get(f"{url}/v1/stats", headers={"Authorization": "Bearer ebk_123456789abc_wrong"}), 401,
              "unauthorized")
        error(httpx.get(f"{url}/v1/stats", headers={"Authorization": f"Bearer {doomed}"}), 401, "unauthorized")
        error(a.post("/v1/sweep", json={}), 403, "forbidden")
        error(a.post(f"/v1/memories/{rid}/purge", json={}), 403, "forbidden")
        error(a.post("/v1/users/alice/purge", json={}), 403, "forbidden")
        assert httpx.post(f"{url}/v1/sweep", json={}, headers={"Authorization": f"Bearer {alpha_admin}"}).json()[
            "evaluated"] >= 2
        assert a.get(f"/v1/memories/{rid}").status_code == 200  # 403s changed nothing

        # limits: 413 for a large body, 429 when the key's bucket is empty
        error(a.post("/v1/memories", json={"text": "x " * 3000, "user_id": "alice"}), 413, "too_large")
        limited = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {slow}"}, timeout=60)
        statuses = [limited.get("/v1/stats").status_code for _ in range(5)]
        assert statuses[:3] == [200, 200, 200] and 429 in statuses[3:]
        refused = limited.get("/v1/stats")
        error(refused, 429, "rate_limited")
        assert int(refused.headers["retry-after"]) >= 1
        assert a.get("/v1/stats").status_code == 200  # other keys are not slowed

        # unknown routes and the schema
        error(a.get("/v2/anything"), 404, "not_found")
        assert "/v1/memories" in httpx.get(f"{url}/openapi.json").json()["paths"]
        for http in (a, b, b_admin, limited):
            http.close()


def test_serve_refuses_a_public_address_without_keys(tmp_path: Path) -> None:
    refused = CliRunner().invoke(app, ["--db", str(tmp_path / "mem.db"), "serve", "--host", "0.0.0.0"])
    assert isinstance(refused.exception, InvalidInput) and refused.exception.field == "host"
    assert "loopback" in str(refused.exception) and "ebbing keys create" in str(refused.exception)
    assert not (tmp_path / "mem.db").exists()  # nothing was opened, let alone served


def test_bench_serve_tiny_run(tmp_path: Path) -> None:
    """`ebbing bench serve` in small: a real server, concurrent clients and sweeps, the exactly-once check."""
    result = run(clients=3, requests=24, workdir=tmp_path)
    assert result["ok"] is True, result
    assert result["adds_acknowledged"] == 13 and result["records_exported"] == 13  # 12 and the warm-up add
    assert result["sweeps"] >= 1 and result["latency_ms"]["all"]["count"] == 24
    assert result["latency_ms"]["all"]["p99"] >= result["latency_ms"]["all"]["p50"] > 0
    assert "missing 0, duplicated 0" in render(result)
