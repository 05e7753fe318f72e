"""The documentation cannot drift: every setting the code reads is in docs/configuration.md's table, the README
stays short, every relative link and image resolves, and the pages the README promises exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "ebbing"
DOCS = ROOT / "docs"
README = ROOT / "README.md"
CONFIGURATION = DOCS / "configuration.md"
REQUIRED_PAGES = ("benchmarks", "evaluation", "serving", "integrations", "scaling", "security", "configuration")
README_MAX_LINES = 300

ENV_NAME = re.compile(r"EBBING_[A-Z0-9_]+")
TEXT_SUFFIXES = {".py", ".html", ".js", ".css", ".toml", ".txt", ".md"}


def _source_files() -> list[Path]:
    return sorted(p for p in SOURCE.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES
                  and "__pycache__" not in p.parts)


def _markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def _settings_table() -> list[list[str]]:
    """The rows (cells) of the one table in docs/configuration.md whose header names the environment variable."""
    rows: list[list[str]] = []
    in_table = False
    for line in CONFIGURATION.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            if in_table:
                break
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if not in_table:
            in_table = len(cells) == 5 and "environment variable" in cells[1]
            continue
        if not all(set(c) <= set("-: ") for c in cells):
            rows.append(cells)
    assert rows, "docs/configuration.md has no settings table (setting | environment variable | flag | default | ...)"
    return rows


def _code_names(cell: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", cell))


def _documented_env() -> set[str]:
    return {name for row in _settings_table() for name in _code_names(row[1])}


def test_the_settings_table_has_the_promised_columns() -> None:
    text = CONFIGURATION.read_text(encoding="utf-8")
    assert "| setting (config.toml) | environment variable | flag | default | meaning |" in text


def test_every_ebbing_variable_in_the_source_is_in_the_configuration_table() -> None:
    documented = _documented_env()
    missing: dict[str, str] = {}
    for path in _source_files():
        for name in ENV_NAME.findall(path.read_text(encoding="utf-8")):
            # `EBBING_LLM_*` in prose names a family: at least one documented variable must belong to it.
            known = any(d.startswith(name) for d in documented) if name.endswith("_") else name in documented
            if not known:
                missing.setdefault(name, str(path.relative_to(ROOT)))
    assert not missing, f"environment variables not in docs/configuration.md's table: {missing}"


def _environment_reads(tree: ast.AST) -> set[str]:
    """Names read or set through os.environ / os.getenv / an `env` mapping with a literal key."""

    def is_environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
            isinstance(node, ast.Name) and node.id in ("environ", "env"))

    def literal(node: ast.AST) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and (name := literal(node.args[0])):
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr in ("get", "setdefault", "pop")
                    and is_environ(func.value)) or (
                    isinstance(func, ast.Attribute | ast.Name)
                    and (func.attr if isinstance(func, ast.Attribute) else func.id) == "getenv"):
                names.add(name)
        elif isinstance(node, ast.Subscript) and is_environ(node.value) and (name := literal(node.slice)):
            names.add(name)
    return names


def test_every_environment_variable_the_code_touches_is_in_the_configuration_table() -> None:
    documented = _documented_env()
    missing = {}
    for path in SOURCE.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        for name in _environment_reads(ast.parse(path.read_text(encoding="utf-8"))):
            if name not in documented:
                missing.setdefault(name, str(path.relative_to(ROOT)))
    assert not missing, f"environment variables not in docs/configuration.md's table: {missing}"


def test_every_setting_is_a_row_with_its_name_variable_and_flag() -> None:
    from ebbing.settings import SETTINGS  # here, so that a broken import fails this test, not the whole file

    rows = _settings_table()
    problems = []
    for setting in SETTINGS:
        row = next((r for r in rows if setting.name in _code_names(r[0])), None)
        if row is None:
            problems.append(f"no row for `{setting.name}`")
            continue
        if setting.env not in _code_names(row[1]):
            problems.append(f"{setting.name}: `{setting.env}` not in its row")
        if setting.flag and setting.flag not in row[2]:
            problems.append(f"{setting.name}: flag {setting.flag} not in its row")
        if setting.secret and "secret" not in row[0]:
            problems.append(f"{setting.name} is secret and its row does not say so")
    assert not problems, f"docs/configuration.md: {problems}"


def test_the_configuration_page_explains_precedence_and_the_config_command() -> None:
    text = CONFIGURATION.read_text(encoding="utf-8")
    for needle in ("config.toml", "ebbing config", "--json", "flag", "environment", "default"):
        assert needle in text, needle


def test_the_readme_is_at_most_300_lines() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES})"


@pytest.mark.parametrize("page", REQUIRED_PAGES)
def test_each_required_page_exists_and_the_readme_links_it(page: str) -> None:
    path = DOCS / f"{page}.md"
    assert path.is_file(), f"docs/{page}.md is missing"
    assert path.read_text(encoding="utf-8").startswith("# "), f"docs/{page}.md has no title"
    assert f"](docs/{page}.md)" in README.read_text(encoding="utf-8"), f"README.md does not link docs/{page}.md"


FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _links(path: Path) -> list[str]:
    text = CODE_SPAN.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    return LINK.findall(text)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        slug, n = _slug(heading), 1
        while slug in anchors:
            slug, n = f"{_slug(heading)}-{n}", n + 1
        anchors.add(slug)
    return anchors


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_image_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # http(s), mailto and the like; an anchor in the same page
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve()
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_anchor_within_a_page_exists(page: Path) -> None:
    anchors = _anchors(page)
    missing = [t for t in _links(page) if t.startswith("#") and t[1:] not in anchors]
    assert not missing, f"{page.relative_to(ROOT)}: no heading for {missing}"
