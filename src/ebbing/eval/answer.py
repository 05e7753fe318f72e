"""The optional answer-level score: an LLM answers each question from a built context, and judges the answer
against LoCoMo's gold answer, in the spirit of the LoCoMo and mem0 evaluations (short answers, dates worked out
from the memories' dates; a generous judge that accepts the same fact or date in other words or formats)."""

from __future__ import annotations

from ebbing.errors import EbbingError
from ebbing.llm.base import LLM, complete_json

ANSWER = """\
You answer a question about a long conversation between two people, {a} and {b}, using only the memories below.
Each memory starts with the date it was said, in brackets. When the question asks when something happened,
answer with a date or period worked out from the memory's date (in a memory of 8 May 2023, "yesterday" is
7 May 2023 and "last week" is the week before 8 May 2023). If the memories hold the answer only in part, give
your best short answer from what they say. Answer with a short phrase of at most 10 words, not a sentence."""

JUDGE = """\
You grade an answer to a question about a conversation. You get the question, the gold answer and a
generated answer. Label the generated answer CORRECT if it states what the gold answer states: be generous,
a different wording, extra detail, or a date or period written in another format that means the same time
is CORRECT. Label it WRONG if it contradicts the gold answer, misses its point, or says it does not know.
Answer with one JSON object only: {"label": "CORRECT"} or {"label": "WRONG"}."""


def answer(llm: LLM, speakers: tuple[str, str], context: str, question: str) -> str:
    """The model's short answer to `question` from `context` (one memory per line); "" when it fails."""
    system = ANSWER.format(a=speakers[0], b=speakers[1])
    user = f"Memories:\n{context or '(none)'}\n\nQuestion: {question}\nShort answer:"
    try:
        return llm.complete(system, user, max_tokens=64).strip()
    except EbbingError:
        return ""


def judge(llm: LLM, question: str, gold: str, generated: str) -> bool:
    """The judge's verdict; an empty answer is wrong without asking, and an unreadable verdict is wrong."""
    if not generated:
        return False
    user = f"Question: {question}\nGold answer: {gold}\nGenerated answer: {generated}"
    try:
        verdict = complete_json(llm, JUDGE, user, max_tokens=16)
    except EbbingError:
        return False
    return isinstance(verdict, dict) and str(verdict.get("label", "")).strip().upper() == "CORRECT"
