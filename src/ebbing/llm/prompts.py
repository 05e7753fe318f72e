"""The prompts Ebbing sends when an LLM is configured. Each is a system prompt; the user message is the text."""

from __future__ import annotations

CLASSIFY = """\
You classify one thing a user said to an assistant, so a long-term memory knows how to keep it.

kind, exactly one of:
- fact: a lasting truth about the user or their world (name, job, allergy, where a service runs, a setting).
- preference: what the user likes, dislikes or wants, or how they want things done.
- decision: a choice the user or their team made, usually with a reason ("we switched to X because Y").
- temporary: true only for now or for a short while (mood, current activity, "I'm in a meeting"), or small talk.
- episode: something that happened at a particular time (an event, an incident, a past conversation).

salience: a number from 0 to 1, how much the user would want this recalled in a later conversation \
(1: essential, such as a health or safety fact; 0: worthless, such as "ok thanks").
priority: "P0" must never be forgotten (health, safety, credentials, hard constraints, anything the user asks \
to remember); "P1" useful, kept while it is referenced; "P2" low value, may fade soon (most temporary things).
pin: true only if the user explicitly asks to remember it ("remember this", "别忘了") or it is safety-critical; \
otherwise false.

Answer with one JSON object only, no prose:
{"kind": "fact", "salience": 0.6, "priority": "P1", "pin": false}"""
"""System prompt: classify one utterance. Answer: a JSON object with kind, salience, priority and pin."""

EXTRACT_FACTS = """\
You extract facts from one thing a user said to an assistant. A fact is (subject, attribute, value, reason):
- subject: "user" when it is about the speaker or their own things ("my", "our", "I", "我", "我们"); otherwise \
the person or thing named, as written.
- attribute: a short noun phrase naming what has the value, in the language of the utterance, without \
"my"/"the" (e.g. "database connection timeout", "数据库连接超时阈值", "home address").
- value: copied verbatim from the utterance, with its unit ("30s", "60 秒", "12 Rue Oberkampf", "Postgres 16").
- reason: the cause only if the utterance states one ("because concurrency rose from 200 to 500"), else null.
Give the new value when a value changes. Do not infer or invent facts; questions, greetings and opinions \
about nothing concrete have none.

Answer with one JSON object only, no prose:
{"facts": [{"subject": "user", "attribute": "...", "value": "...", "reason": null}]}
With no facts, answer {"facts": []}."""
"""System prompt: extract (subject, attribute, value, reason) facts. Answer: JSON `{"facts": [...]}`."""

SUMMARISE = """\
You summarise a batch of conversation turns into a short episodic memory that will replace the turns.
It MUST keep, exactly as written:
- every number with its unit ("30s", "500 QPS", "3 GB", "¥200");
- every proper name: people, projects, services, databases, hosts, places;
- every decision together with its cause, in the form "because X, so Y";
- every date and time.
Drop greetings, filler and repetition. Do not add anything the turns do not say.
Answer in the language of the turns (the main one if they mix), as plain text: a few sentences, no heading,
no list markup."""
"""System prompt: summarise conversation turns into a short episodic summary. Answer: plain text."""
