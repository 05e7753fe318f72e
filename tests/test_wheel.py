"""The core install: the wheel, built from this checkout and installed without extras in a fresh virtualenv (at
the versions uv.lock pins), adds, searches and sweeps; every optional surface says which extra it needs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTRAS_ONLY = ("fastapi", "uvicorn", "jinja2", "prometheus_client", "fastapi_offline", "mcp", "psycopg", "pgserver",
               "matplotlib", "numba", "langgraph", "langchain_core")


def _uv() -> list[str]:
    """uv as scripts/setup installs it (a module of the machine's python3), or on PATH."""
    for python in ("python3", sys.executable):
        found = shutil.which(python) or python
        if subprocess.run([found, "-m", "uv", "--version"], capture_output=True).returncode == 0:
            return [found, "-m", "uv"]
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is not installed: run scripts/setup")
    return [uv]


def _run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
         ok: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=600, cwd=cwd,
                            env={**os.environ, "UV_PYTHON_DOWNLOADS": "never", **(env or {})})
    if ok:
        assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding the wheel and the core dependencies only; returns its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    uv = _uv()
    _run(*uv, "build", "--wheel", "--out-dir", str(work / "dist"), str(ROOT), cwd=work)
    (wheel,) = (work / "dist").glob("ebbing-*.whl")
    constraints = _run(*uv, "export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project",
                       "--format", "requirements-txt", cwd=ROOT).stdout
    (work / "constraints.txt").write_text(constraints)
    base = getattr(sys, "_base_executable", sys.executable)
    _run(*uv, "venv", "--quiet", "--python", base, str(work / "venv"))
    python = work / "venv" / "bin" / "python"
    _run(*uv, "pip", "install", "--quiet", "--python", str(python), "-c", str(work / "constraints.txt"),
         str(wheel))
    return python.parent


def test_the_wheel_installs_no_extra(core: Path) -> None:
    probe = "import importlib.util, json, sys; print(json.dumps([m for m in sys.argv[1:] " \
            "if importlib.util.find_spec(m) is not None]))"
    present = json.loads(_run(str(core / "python"), "-c", probe, *EXTRAS_ONLY).stdout)
    assert present == []


def test_add_search_sweep_on_the_core_install(core: Path, tmp_path: Path) -> None:
    script = """
import json, sys
from ebbing import Memory
with Memory(sys.argv[1]) as mem:
    kept = mem.add("I am allergic to shrimp", user_id="u", at="2026-01-01T09:00:00Z").records[0]
    mem.add("ok thanks", user_id="u", at="2026-01-01T09:01:00Z")
    hits = mem.search("what am I allergic to?", user_id="u", at="2026-01-01T10:00:00Z")
    report = mem.sweep(at="2026-09-01T00:00:00Z")
    print(json.dumps({"first": hits[0].record.id, "kept": kept.id, "moved": len(report.changes),
                      "stats": mem.stats("u")}))
"""
    result = json.loads(_run(str(core / "python"), "-c", script, str(tmp_path / "lib.db")).stdout)
    assert result["first"] == result["kept"]
    assert result["moved"] >= 1  # the acknowledgement faded in eight months

    env = {"EBBING_HOME": str(tmp_path / "home")}
    added = json.loads(_run(str(core / "ebbing"), "add", "我的数据库连接超时阈值是 30s", "--user", "alice", "--json",
                            env=env).stdout)
    hits = json.loads(_run(str(core / "ebbing"), "search", "超时阈值", "--user", "alice", "--json", env=env).stdout)
    assert hits["hits"][0]["record"]["id"] == added["records"][0]["id"]
    swept = json.loads(_run(str(core / "ebbing"), "sweep", "--json", env=env).stdout)
    assert "changes" in swept


@pytest.mark.parametrize(("args", "extra"), [
    (["serve"], "server"),
    (["worker", "--rounds", "1"], "server"),
    (["mcp"], "mcp"),
    (["--db", "postgresql://nobody@127.0.0.1:1/none", "stats"], "postgres"),
    (["curves", "--plot", "curves.png"], "plots"),
])
def test_a_missing_extra_names_its_install_command(core: Path, tmp_path: Path, args: list[str], extra: str) -> None:
    result = _run(str(core / "ebbing"), *args, env={"EBBING_HOME": str(tmp_path)}, cwd=tmp_path, ok=False)
    assert result.returncode == 1
    assert f"pip install 'ebbing[{extra}]'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "curves.png").exists()


def test_the_adapters_name_their_extra(core: Path) -> None:
    result = _run(str(core / "python"), "-c", "import ebbing.adapters.langchain", ok=False)
    assert "pip install 'ebbing[langchain]'" in result.stderr
