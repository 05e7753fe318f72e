"""docs/architecture.md names every package and top-level module that exists, so it cannot drift."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "ebbing"


def test_every_package_and_module_is_named_in_the_architecture_page() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = [p.parent.relative_to(SOURCE).as_posix() for p in SOURCE.rglob("__init__.py")
                if p.parent != SOURCE and "__pycache__" not in p.parts]
    modules = [p.relative_to(SOURCE).as_posix() for p in SOURCE.glob("*.py") if p.name != "__main__.py"]
    missing = [name for name in packages if f"{name.split('/')[-1]}/" not in page]
    missing += [name for name in modules if name not in page]
    # every module of the engine's packages too: a new module is a new concept, and the page says what it holds
    for package in ("ingest", "recall", "lifecycle", "judgement", "store", "text", "retention"):
        missing += [f"{package}/{p.name}" for p in (SOURCE / package).glob("*.py")
                    if p.name != "__init__.py" and p.name not in page]
    assert not missing, f"not in docs/architecture.md: {missing}"
