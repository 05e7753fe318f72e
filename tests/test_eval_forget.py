"""The scoring of `ebbing eval forget` (`ebbing.eval.forget.summarise`), on outcomes built by hand."""

from __future__ import annotations

from ebbing.eval.forget import Case, Outcome, summarise


def _ambiguous(candidates: list[str], gone: list[str], forgotten: list[str] | None = None) -> Outcome:
    case = Case("c", "en", "ambiguous", "entity", [{"key": f"m{i}", "text": "x"} for i in range(1, 5)],
                {"text": "forget everything about Sam", "role": "user"}, ["m1", "m2", "m3"])
    return Outcome(case, "entity", False, 3 - len(gone), forgotten or [], [], True, candidates, gone)


def test_an_ambiguous_case_is_asked_when_every_target_still_there_is_offered() -> None:
    assert summarise([_ambiguous(["m1", "m2", "m3"], [])])["ambiguous_asked"] == 1
    assert summarise([_ambiguous(["m1", "m2"], [])])["ambiguous_asked"] == 0  # m3 not offered
    assert summarise([_ambiguous(["m1", "m2"], ["m3"])])["ambiguous_asked"] == 1  # m3 was in the trash already
    report = summarise([_ambiguous(["m1", "m2", "m3"], [], forgotten=["m1"])])
    assert report["ambiguous_asked"] == 0 and report["ambiguous_forgot"] == 1
