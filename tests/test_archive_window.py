"""Where forgotten records go: a faded or expired P1 record waits in the cold archive (searchable with cold
fallback, restorable) until `archive_days` after its last use, then the trash; P2 records go to the trash."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ebbing import InvalidInput, Memory, Tier
from ebbing.embed.hashing import HashEmbedder
from ebbing.retention.config import RetentionConfig

from .conftest import T0


def day(n: float) -> object:
    return T0 + timedelta(days=n)


def test_a_faded_p1_episode_waits_in_the_archive_then_goes_to_the_trash(mem: Memory) -> None:
    episode = mem.add("Yesterday I lost my job at the bank and decided to open a dance studio", user_id="u",
                      at=T0).records[0]
    assert episode.priority.value == "P1"
    seen = {}
    for n in (10, 60, 120, 300, 364):
        mem.sweep(at=day(n))
        seen[n] = mem.get(episode.id).tier
    assert seen[10] is not Tier.TRASH
    assert {seen[n] for n in (60, 120, 300, 364)} == {Tier.COLD}, seen  # faded, then P1 expired at 90 days
    mem.sweep(at=day(366))
    assert mem.get(episode.id).tier is Tier.TRASH
    (event,) = [e for e in mem.history(episode.id) if e.type == "tier" and e.data["to"] == "trash"]
    assert "past the archive limit 365" in event.reason


def test_the_archive_reason_is_recorded(mem: Memory) -> None:
    episode = mem.add("We went hiking at Mount Tam last weekend", user_id="u", at=T0).records[0]
    mem.sweep(at=day(100))
    (event,) = [e for e in mem.history(episode.id) if e.type == "tier"]
    assert event.data["to"] == "cold"
    assert "kept in the cold archive until 365 days without use" in event.reason
    assert mem.search("hiking Mount Tam", user_id="u", at=day(100), include_cold=False) == []  # not live
    hits = mem.search("hiking Mount Tam", user_id="u", at=day(100), include_cold=True)
    assert [h.record.id for h in hits] == [episode.id]  # and the recall brings it back
    assert mem.get(episode.id).tier is Tier.WARM


def test_p2_small_talk_still_goes_straight_to_the_trash(mem: Memory) -> None:
    note = mem.add("so tired today", user_id="u", at=T0).records[0]
    assert note.priority.value == "P2"
    mem.sweep(at=day(40))
    assert mem.get(note.id).tier is Tier.TRASH


@pytest.mark.parametrize("archive_days", [0.0, 30.0])
def test_a_shorter_archive_window_trashes_sooner(tmp_path: object, archive_days: float) -> None:
    with Memory(tmp_path / "m.db", embedder=HashEmbedder(),  # type: ignore[operator]
                retention=RetentionConfig(archive_days=archive_days)) as mem:
        episode = mem.add("We went hiking at Mount Tam last weekend", user_id="u", at=T0).records[0]
        mem.sweep(at=day(60))
        assert mem.get(episode.id).tier is Tier.TRASH


def test_explain_projects_the_archive_then_the_trash(mem: Memory) -> None:
    episode = mem.add("We went hiking at Mount Tam last weekend", user_id="u", at=T0).records[0]
    mem.sweep(at=day(100))
    explained = mem.explain(episode.id, at=day(100))
    assert explained["tier"] == explained["tier_by_score"] == "cold"
    projected = explained["projected"]
    assert projected["tier"] == "trash"
    assert abs((datetime_of(projected["at"]) - T0).total_seconds() / 86_400 - 365) < 0.01


def datetime_of(text: str) -> object:
    from datetime import datetime

    return datetime.fromisoformat(text)


def test_a_negative_archive_window_is_refused() -> None:
    with pytest.raises(InvalidInput, match="archive_days"):
        RetentionConfig(archive_days=-1)


def test_cold_search_sees_flags_changed_while_cold_and_hands_out_copies(mem: Memory) -> None:
    episode = mem.add("We went hiking at Mount Tam last weekend", user_id="u", at=T0).records[0]
    mem.sweep(at=day(100))
    assert mem.get(episode.id).tier is Tier.COLD
    first = mem.search("hiking Mount Tam", user_id="u", at=day(100), include_cold=True, count_use=False)
    assert [h.record.pinned for h in first] == [False]
    first[0].record.text = "changed by the caller"  # must not leak into the archive cache
    mem.pin(episode.id, at=day(100))  # changes the archive index's flags, not the file
    again = mem.search("hiking Mount Tam", user_id="u", at=day(100), include_cold=True, count_use=False)
    assert [(h.record.pinned, h.record.text) for h in again] == [(True, "We went hiking at Mount Tam last weekend")]


def test_one_thread_restores_the_blas_thread_count() -> None:
    from ebbing.recall.blas import _cached, one_thread

    found = _cached()
    if found is None:
        pytest.skip("numpy's BLAS exposes no thread setting here")
    set_threads, get_threads = found
    set_threads(2)
    with one_thread():
        assert get_threads() == 1
    assert get_threads() == 2


def test_a_purge_leaves_no_archived_text_in_the_search_cache(mem: Memory) -> None:
    episode = mem.add("We went hiking at Mount Tam last weekend", user_id="u", at=T0).records[0]
    mem.sweep(at=day(100))
    assert mem.search("hiking Mount Tam", user_id="u", at=day(100), include_cold=True, count_use=False)
    cached = [record.text for parsed in mem._cold_files._files.values() for record, _, _ in parsed.values()]
    assert episode.text in cached
    mem.purge(episode.id, at=day(100))
    cached = [record.text for parsed in mem._cold_files._files.values() for record, _, _ in parsed.values()]
    assert episode.text not in cached
    assert mem.search("hiking Mount Tam", user_id="u", at=day(100), include_cold=True, count_use=False) == []
