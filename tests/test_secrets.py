"""No secret reaches a file: the generated corpus through the whole write path, every other text Ebbing stores,
and false positives on real conversations."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from ebbing import InvalidInput, Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.eval import secrets as measure
from ebbing.eval import secrets_corpus
from ebbing.eval.data import shared_file

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _every_byte(folder: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_the_corpus_leaves_no_plaintext_in_any_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Seed 0 of the generated corpus (the development set): every sentence as text, as metadata and as a
    forget reason, through add, sweep to the Parquet archive, export and the log; then a byte search."""
    cases = secrets_corpus.cases(seed=0, per_form=2)
    store = tmp_path / "store"
    mem = Memory(store / "ebbing.db", embedder=HashEmbedder(), archive=store / "archive")
    with caplog.at_level(logging.DEBUG):
        for i, case in enumerate(cases):
            record = mem.add(case.text, user_id="u", metadata={"said": case.text, "form": case.form},
                             at="2026-01-01T00:00:00Z", dedupe=False).records[0]
            if i % 3 == 0:
                mem.forget(record.id, reason=f"the user asked: {case.text}", at="2026-01-02T00:00:00Z")
        mem.sweep(at="2026-03-01T00:00:00Z")  # what was not forgotten goes to the archive
        export = tmp_path / "export.jsonl"
        export.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in mem.export()),
                          encoding="utf-8")
        history = json.dumps([e.to_dict() for r in mem.export() for e in mem.history(r["id"])], ensure_ascii=False)
    mem.close()
    assert any(p.suffix == ".parquet" for p in store.rglob("*"))

    files = _every_byte(tmp_path)
    readable = export.read_text(encoding="utf-8") + history + caplog.text
    for case in cases:
        for secret in case.secrets:
            # Short values (a 3-digit CVV, a 4-digit PIN) occur by chance in binary pages and in unrelated
            # numbers; they are checked in everything readable instead.
            if len(secret) >= 8:
                assert secret.encode() not in files, (case.form, secret)
            assert f" {secret} " not in f" {readable} ".replace(",", " "), (case.form, secret)
    exported = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    by_text = {row["metadata"]["form"]: row for row in exported}
    assert by_text  # the records and their metadata are there, with placeholders instead of the values
    assert all(secret not in row["text"] and secret not in row["metadata"]["said"]
               for case in cases for secret in case.secrets for row in [by_text[case.form]])


def test_the_development_corpus_and_its_near_misses() -> None:
    report = measure.score(measure.corpus(seed=0))
    for language, row in report["languages"].items():
        assert row["sentences_protected"] == row["sentences"], (language, report["missed"][:3])
        assert row["near_misses_touched"] == 0, language


def test_metadata_reasons_and_updates_are_guarded(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "ebbing.db", embedder=HashEmbedder())
    record = mem.add("Deploys go through the staging cluster first", user_id="u", at="2026-01-01T00:00:00Z",
                     metadata={"ci": {"token": GITHUB}, "note": "my password is Hunter2-xyz!", "count": 3}).records[0]
    stored = mem.get(record.id).metadata
    assert GITHUB not in json.dumps(stored) and "Hunter2-xyz!" not in json.dumps(stored)
    assert stored["count"] == 3 and stored["ci"]["token"].startswith("[secret:")
    updated = mem.update(record.id, metadata={"db": "postgres://app:S3cret-Pass@db:5432/app"}, at="2026-01-02")
    assert "S3cret-Pass" not in json.dumps(updated.metadata)
    mem.forget(record.id, reason=f"leaked {GITHUB} in a chat", at="2026-01-03T00:00:00Z")
    assert GITHUB not in json.dumps([e.to_dict() for e in mem.history(record.id)])
    mem.close()
    assert GITHUB.encode() not in _every_byte(tmp_path)


@pytest.mark.parametrize("field", ["user_id", "agent_id", "session_id"])
def test_an_id_holding_a_secret_is_refused_and_nothing_is_stored(tmp_path: Path, field: str) -> None:
    mem = Memory(tmp_path / "ebbing.db", embedder=HashEmbedder())
    ids = {"user_id": "u", field: f"bot-{GITHUB}"}
    with pytest.raises(InvalidInput, match=field):
        mem.add("The release train leaves on Thursdays", at="2026-01-01T00:00:00Z", **ids)
    assert mem.stats()["total"] == 0
    # Opaque ids look random too; they are ids, not secrets.
    fine = {"user_id": "u", field: "sess_8f7a6b5c4d3e2f1a0b9c7d6e"} if field != "user_id" else {
        "user_id": "01JBX7Q3M8W2Z5K9R4T6Y1N0PA"}
    assert mem.add("The release train leaves on Thursdays", at="2026-01-01T00:00:00Z", **fine).records
    mem.close()


LOCOMO = shared_file(Path("../shared/data/locomo/locomo10.json"))


@pytest.mark.skipif(LOCOMO is None, reason="LoCoMo data not found beside the checkout")
def test_false_positives_on_locomo_stay_under_half_a_percent() -> None:
    turns = measure.conversation_turns(LOCOMO, None)["locomo"]
    result = measure.false_positives(turns)
    assert result["turns"] == 5882
    assert result["rate"] <= 0.005, result["examples"]
