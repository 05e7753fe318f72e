"""The 14-day scenario: deterministic, shaped like the seed's experiment, and labelled consistently."""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ebbing.bench.scenario import (
    KINDS,
    SECRET_SLOT,
    SLOTS,
    Scenario,
    dump,
    facts_at,
    generate,
    load,
)
from ebbing.bench.score import Piece, find, normalise, score_probe
from ebbing.text.tokens import XlmrTokens

LANGS = ("en", "zh")
SEED_PROBES = (15, 200, 350, 500)
BUDGET = 8_000  # the benchmark's default context budget


@pytest.fixture(scope="module", params=LANGS)
def scenario(request: pytest.FixtureRequest) -> Scenario:
    return generate(str(request.param), 0)


def _values(scenario: Scenario, slot: str, upto: int) -> list[str]:
    """The values a slot took in turns 1..upto, in order, repeats collapsed."""
    out: list[str] = []
    for turn in scenario.turns[:upto]:
        value = turn.sets.get(slot)
        if value is not None and (not out or out[-1] != value):
            out.append(value)
    return out


def _check_probes_follow_turns(scenario: Scenario) -> None:
    """Every need was stated by then and is current; every stale value was current once and is superseded."""
    for probe in scenario.probes:
        for need in probe.needs:
            assert need.slot != SECRET_SLOT
            stated = [t for t in scenario.turns[:probe.after] if t.sets.get(need.slot) == need.value]
            assert stated, f"probe after {probe.after}: {need.slot}={need.value} never stated before it"
            assert _values(scenario, need.slot, probe.after)[-1] == need.value, (probe.after, need.slot)
            assert need.any_of and any(find(need.any_of, normalise(t.text)) for t in stated)
        for old in probe.stale:
            history = _values(scenario, old.slot, probe.after)
            assert old.value in history[:-1], f"probe after {probe.after}: stale {old.value} was never current"
            assert history[-1] != old.value
        if probe.timeline:
            assert probe.timeline_slot is not None
            history = _values(scenario, probe.timeline_slot, probe.after)
            assert len(history) >= 2
            assert len(probe.timeline) == len(history)
            slot = SLOTS[probe.timeline_slot]
            for forms, value in zip(probe.timeline, history, strict=True):
                assert forms == next(v.forms for v in slot.values if value in (v.en, v.zh))
            assert probe.reason
            changed = [t for t in scenario.turns[:probe.after] if probe.timeline_slot in t.sets and t.reason]
            assert changed and any(find(probe.reason, normalise(t.text)) for t in changed)


def test_same_seed_same_scenario_and_other_seed_other_filler(tmp_path: Path) -> None:
    for lang in LANGS:
        first, again, other = generate(lang, 7), generate(lang, 7), generate(lang, 8)
        dump(first, tmp_path / "a.jsonl")
        dump(again, tmp_path / "b.jsonl")
        dump(other, tmp_path / "c.jsonl")
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
        assert first == again
        # The script is the same, the filler around it is not.
        scripted = [(t.index, t.text) for t in first.turns if (t.sets or t.refers) and not t.secret]
        assert scripted == [(t.index, t.text) for t in other.turns if (t.sets or t.refers) and not t.secret]
        filler = [t.text for t in first.turns if not (t.sets or t.refers or t.secret)]
        other_filler = [t.text for t in other.turns if not (t.sets or t.refers or t.secret)]
        assert sum(a != b for a, b in zip(filler, other_filler, strict=True)) > len(filler) // 2
        assert [t.at for t in first.turns] != [t.at for t in other.turns]


def test_shape(scenario: Scenario) -> None:
    turns = scenario.turns
    assert len(turns) == 500
    assert [t.index for t in turns] == list(range(1, 501))
    assert sorted({t.day for t in turns}) == list(range(1, 15))
    assert all(a.day <= b.day for a, b in itertools.pairwise(turns))
    assert all(t.session == f"day-{t.day:02d}" for t in turns)
    assert all(t.role in ("user", "assistant") and t.kind in KINDS and t.text.strip() for t in turns)
    times = [datetime.fromisoformat(t.at) for t in turns]
    assert all(a < b for a, b in itertools.pairwise(times))
    start = datetime.fromisoformat("2026-03-02T09:00:00+00:00")
    for turn, at in zip(turns, times, strict=True):
        assert at.utcoffset() == timedelta(0)
        day_start = start + timedelta(days=turn.day - 1)
        assert day_start <= at <= day_start + timedelta(hours=9, minutes=30), (turn.index, turn.at)
    # The seed's calendar: day 1 is turns 1-10, days 3-5 are turns 41-150, turn 200 on day 7, 350 on day 10.
    assert {t.day for t in turns[:10]} == {1} and turns[10].day == 2
    assert turns[40].day == 3 and turns[149].day == 5 and turns[150].day == 6
    assert turns[199].day == 7 and turns[349].day == 10 and turns[499].day == 14
    # Mostly alternating: an assistant never speaks twice in a row, a user now and then.
    pairs = list(itertools.pairwise(turns))
    assert not any(a.role == b.role == "assistant" for a, b in pairs)
    assert sum(a.role != b.role for a, b in pairs) >= 0.9 * len(pairs)
    # The script's landmarks, as in the seed.
    assert turns[2].sets == {"db_timeout": "30s"}
    assert turns[6].sets["favourite_language"] == "Rust"
    assert turns[8].sets["project"] == "Aurora" and turns[8].sets["backend_language"] == "Go"
    update = next(t for t in turns if t.sets.get("db_timeout") == "60s")
    assert update.day == 2 and update.reason and "500" in update.reason
    assert any(t.remember for t in turns)
    assert [t.index for t in turns if t.secret] == [137]
    kinds = {t.kind for t in turns}
    assert kinds == set(KINDS)
    assert any(t.noise for t in turns) and not any(t.noise and (t.sets or t.refers) for t in turns)


def test_probes(scenario: Scenario) -> None:
    probes = scenario.probes
    afters = [p.after for p in probes]
    assert set(SEED_PROBES) <= set(afters)
    assert len(probes) >= 24 and len(set(afters)) == len(afters) and afters == sorted(afters)
    by_index = {t.index: t for t in scenario.turns}
    for probe in probes:
        assert probe.question.strip() and probe.needs
        at = datetime.fromisoformat(probe.at)
        assert at == datetime.fromisoformat(by_index[probe.after].at) + timedelta(minutes=1)
        if probe.after < len(scenario.turns):
            assert at < datetime.fromisoformat(by_index[probe.after + 1].at)
    history = [p for p in probes if p.timeline]
    assert len(history) >= 3
    assert {p.timeline_slot for p in history} == {"db_timeout", "deploy_region"}
    assert any(p.after == 200 and p.timeline_slot == "db_timeout" for p in probes)
    preference = [p for p in probes if any(f.category == "preference" for f in p.needs)]
    assert len(preference) >= 5
    assert sum(any(f.slot == "script_language" for f in p.needs) for p in probes) >= 3
    assert {f.slot for f in next(p for p in probes if p.after == 350).needs} >= {
        "backend_language", "favourite_language", "script_language"}
    day1_slots = {slot for t in scenario.turns if t.day == 1 for slot in t.sets}
    late = [p for p in probes if by_index[p.after].day >= 10 and {f.slot for f in p.needs} & day1_slots]
    assert len(late) >= 5
    assert any(p.stale for p in probes if p.after >= 400)
    # "What's my timeout right now?" before the update needs 30s; after it, 60s with 30s as stale.
    early = next(p for p in probes if p.after == 24)
    assert [(f.slot, f.value) for f in early.needs] == [("db_timeout", "30s")] and not early.stale
    later = next(p for p in probes if p.after == 40)
    assert [f.value for f in later.needs] == ["60s"] and [f.value for f in later.stale] == ["30s"]


def test_probes_are_answerable_from_the_turns(scenario: Scenario) -> None:
    _check_probes_follow_turns(scenario)


@pytest.mark.parametrize("lang", LANGS)
def test_surface_forms_appear_only_where_labelled(lang: str) -> None:
    """A slot's surface forms occur exactly in the turns that set it or refer to it, for several seeds: no
    filler line, chit-chat or unrelated answer carries a fact by accident (or a stale value, or a reason)."""
    for seed in range(4):
        scenario = generate(lang, seed)
        for turn in scenario.turns:
            text = normalise(turn.text)
            for slot, spec in SLOTS.items():
                forms = tuple(f for v in spec.values for f in v.forms)
                labelled = slot in turn.sets or slot in turn.refers
                assert bool(find(forms, text)) == labelled, (seed, turn.index, slot, turn.text)
                reasons = tuple(f for v in spec.values for f in v.reason_forms)
                if reasons and find(reasons, text):
                    assert labelled, (seed, turn.index, slot)
        secret = [t for t in scenario.turns if t.secret]
        assert len(secret) == 1
        password = secret[0].sets[SECRET_SLOT]
        assert [t.index for t in scenario.turns if password in t.text] == [secret[0].index]


def test_old_values_after_an_update_are_always_worded_as_past(scenario: Scenario) -> None:
    """Alone in a context, a turn presents a stale value as current only if it was said before the update:
    the scenario itself never restates an old value as if it still held."""
    flagged: dict[str, set[int]] = {}
    for probe in scenario.probes:
        for turn in scenario.turns[:probe.after]:
            score = score_probe(probe, [Piece(turn.text, 10, (turn.index,))], scenario)
            for slot in score.stale_as_current:
                flagged.setdefault(slot, set()).add(turn.index)
    updates = {slot: min(t.index for t in scenario.turns if slot in t.sets and t.reason)
               for slot in ("db_timeout", "deploy_region")}
    assert flagged.keys() == updates.keys()
    for slot, indices in flagged.items():
        assert max(indices) < updates[slot], (slot, sorted(indices))
    assert 3 in flagged["db_timeout"] and 9 in flagged["deploy_region"]


def test_tokens_far_exceed_the_budget(scenario: Scenario) -> None:
    counter = XlmrTokens()
    counts = [counter.count(t.text) for t in scenario.turns]
    total = sum(counts)
    print(f"\n{scenario.lang}: {total} XLM-R tokens in {len(counts)} turns")
    assert total > 3 * BUDGET
    assistant = [c for c, t in zip(counts, scenario.turns, strict=True) if t.role == "assistant"]
    user = [c for c, t in zip(counts, scenario.turns, strict=True) if t.role == "user"]
    assert sum(60 <= c <= 200 for c in assistant) >= 0.5 * len(assistant)
    assert max(assistant) <= 250 and max(user) <= 80
    assert sum(user) / len(user) < sum(assistant) / len(assistant) / 3
    # A FIFO window of the budget holds well under half of the conversation.
    held, used = 0, 0
    for c in reversed(counts):
        if used + c > BUDGET:
            break
        used, held = used + c, held + 1
    assert held < len(counts) // 2


def test_dump_round_trips(tmp_path: Path) -> None:
    for lang in LANGS:
        scenario = generate(lang, 3)
        path = tmp_path / f"{lang}.jsonl"
        dump(scenario, path)
        lines = path.read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        assert records[0]["type"] == "scenario" and records[0]["lang"] == lang
        assert [r["type"] for r in records].count("turn") == 500
        assert [r["type"] for r in records].count("probe") == len(scenario.probes)
        last_turn = 0
        for record in records[1:]:  # each probe right after its turn
            if record["type"] == "turn":
                last_turn = record["index"]
            else:
                assert record["after"] == last_turn
        if lang == "zh":
            assert "超时" in path.read_text(encoding="utf-8")  # readable, not \\u escapes
        assert load(path) == scenario


def test_facts_at() -> None:
    scenario = generate("en", 0)
    before = {f.slot: f.value for f in facts_at(scenario, 20)}
    after = {f.slot: f.value for f in facts_at(scenario, 500)}
    assert before["db_timeout"] == "30s" and after["db_timeout"] == "60s"
    assert after["deploy_region"] == "eu-central-1" and after["favourite_language"] == "Rust"
    assert SECRET_SLOT not in after and "manager" not in before


def test_smaller_scenarios_keep_the_script() -> None:
    small = generate("zh", 5, turns=120, days=5)
    assert len(small.turns) == 120 and sorted({t.day for t in small.turns}) == [1, 2, 3, 4, 5]
    times = [datetime.fromisoformat(t.at) for t in small.turns]
    assert all(a < b for a, b in itertools.pairwise(times))
    assert len(small.probes) == len(generate("zh", 5).probes)
    assert small.probes[-1].after == 120
    _check_probes_follow_turns(small)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        generate("fr")
    with pytest.raises(ValueError):
        generate("en", turns=40)  # the script alone is longer
    with pytest.raises(ValueError):
        generate("en", turns=10, days=14)
