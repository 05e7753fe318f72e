"""Choosing what goes into an agent's context (the sections `recall.context` fits to the token budget) and a
fact's timeline: the reads that combine ranked hits with the facts table."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from ebbing.clock import iso
from ebbing.model import LIVE_TIERS, Hit, Kind, MemoryRecord, Scope, expired, role_is_assistant
from ebbing.recall.context import Context, ContextConfig, asks_about_decisions, build_context, render_line
from ebbing.recall.ranking import asks_about_history
from ebbing.retention.base import RecordBatch, RetentionPolicy, retention_row
from ebbing.store.base import FactRow, Facts, Reads, Views
from ebbing.text.slots import slot_terms
from ebbing.text.terms import query_terms
from ebbing.text.tokens import TokenCounter

_PREFERENCES = re.compile(r"\b(?:prefer\w*|likes?|dislikes?|style|tone|format(?:ting)?|habits?|wants?|"
                          r"how (?:should|do|to) (?:you |i |it )?(?:answer|reply|respond|write|talk))\b|"
                          r"偏好|喜欢|不喜欢|风格|习惯|格式|语气|怎么回答|如何回答", re.IGNORECASE)

# (query, scope, limit, now, goal) -> ranked hits, nothing counted
Rank = Callable[[str, Scope, int, float, str | None], list[Hit]]


def asks_about_preferences(query: str) -> bool:
    """Whether the query is about the user's preferences or how to answer them (style, tone, format)."""
    return bool(_PREFERENCES.search(query))


def timeline_line(chain: list[FactRow]) -> str:
    """A slot's values on one line, oldest first: "timeout: 30s (until 2026-03-03) → 60s (because ...)"."""
    parts = []
    for position, row in enumerate(chain):
        notes = [f"because {row.reason}"] if row.reason and position else []
        if row.valid_to is not None:
            notes.append(f"until {datetime.fromtimestamp(row.valid_to, tz=UTC):%Y-%m-%d}")
        parts.append(row.value + (f" ({'; '.join(notes)})" if notes else ""))
    return f"{chain[-1].attribute}: " + " → ".join(parts)


def _coverage(wanted: frozenset[str] | set[str], slot: set[str]) -> float:
    return len(wanted & slot) / len(wanted) if wanted else 0.0


class AssemblyStore(Reads, Facts, Views, Protocol):
    """What a context and a timeline read besides ranked hits: facts, essentials, kinds, a session's turns."""


class Assembly:
    def __init__(self, store: AssemblyStore, tenant: str, config: ContextConfig, tokens: TokenCounter,
                 composite: RetentionPolicy, rank: Rank) -> None:
        self.store, self.tenant, self.config, self.tokens = store, tenant, config, tokens
        self.composite, self.rank = composite, rank

    def context(self, query: str, scope: Scope, session: str | None, budget: int, goal: str | None,
                now: float) -> Context:
        """The sections of `Memory.context`, fitted to `budget` tokens; the caller counts the records used."""
        hits = self.rank(query, scope, 40, now, goal)
        relevant = [h.record for h in hits if not h.parts.get("stale")]
        rank = {r.id: position for position, r in enumerate(relevant)}
        superseded = self._superseded(scope.user_id)
        essentials = self._essentials(scope.user_id, rank, budget)
        preferences = self._preferences(query, scope.user_id, rank, superseded, budget, now)
        facts = [r for r in relevant if r.kind in (Kind.FACT, Kind.DECISION, Kind.PREFERENCE)]
        facts += self._slot_facts(query, scope.user_id, {r.id for r in facts})
        if asks_about_decisions(query):
            have = {r.id for r in facts}
            facts += [r for r in self.store.live_of_kind(self.tenant, scope.user_id, Kind.DECISION.value, 200)
                      if r.id not in have and r.id not in superseded and not role_is_assistant(r.metadata)
                      ][: self.config.decisions_asked_max]
        history: dict[str, str] = {}
        if asks_about_history(query):
            history = self._history_lines([h.record for h in hits if h.parts.get("stale")])
        carriers = [r for h in hits if (r := h.record).id in history]
        stories = [r for r in relevant if r.kind in (Kind.SUMMARY, Kind.EPISODE)]
        recent = self.store.session_turns(self.tenant, scope.user_id, session, unconsolidated=False, limit=20) \
            if session else []
        # What has passed its explicit expiry is out of every section, as it is out of search.
        essentials, preferences, facts, recent = ([r for r in records if not expired(r, now)] for records in
                                                  (essentials, preferences, facts, recent))
        return build_context([
            ("pinned", "Always remember", essentials),
            ("preferences", "Preferences", preferences),
            ("facts", "Current facts", facts),
            ("history", "History", carriers),
            ("summaries", "Earlier conversations", stories),
            ("recent", "Recent turns", recent),
        ], budget, self.tokens, render=lambda r: history.get(r.id) or render_line(r),
            oldest_first=("facts",))  # chosen by rank, read in time order: a changed value is read last

    def timeline(self, user: str | None, asked: str, now: float) -> list[dict[str, Any]]:
        """The history of the slot `asked` names or asks about, oldest first (`Memory.timeline`)."""
        wanted = slot_terms(asked) or frozenset(query_terms(asked))
        rows = self.store.user_facts(self.tenant, user)
        best = max(rows, default=None, key=lambda r: (_coverage(wanted, set(r.slot.split())), r.valid_from))
        if best is None or _coverage(wanted, set(best.slot.split())) == 0:
            hits = self.rank(asked, Scope(self.tenant, user), 5, now, None)
            facts = self.store.facts_of(self.tenant, [h.record.id for h in hits])
            if not facts:
                return []
            by_id = {f.memory_id: f for f in facts}
            best = next(by_id[h.record.id] for h in hits if h.record.id in by_id)
        chain = [r for r in self.store.timeline(self.tenant, best.root) if set(r.slot.split()) & set(best.slot.split())]
        return [{"id": r.memory_id, "subject": r.subject, "attribute": r.attribute, "value": r.value,
                 "reason": r.reason, "valid_from": iso(r.valid_from), "valid_to": iso(r.valid_to),
                 "current": r.valid_to is None, "supersedes": r.supersedes, "superseded_by": r.superseded_by,
                 "judgement": self._judgement(r.memory_id, r.superseded_by) if r.superseded_by else None}
                for r in chain]

    def _judgement(self, memory_id: str, by: str) -> dict[str, Any] | None:
        """The verdict, score and signals with which `by` retired `memory_id` (None for the rules alone)."""
        for event in reversed(self.store.history(self.tenant, memory_id)):
            if event.type == "supersede" and event.data.get("superseded_by") == by:
                judgement = event.data.get("judgement")
                return dict(judgement) if isinstance(judgement, dict) else None
        return None

    def _line_cost(self, record: MemoryRecord) -> int:
        return self.tokens.count(render_line(record)) + 1  # its line break

    def _essentials(self, user: str | None, rank: dict[str, int], budget: int) -> list[MemoryRecord]:
        """Pinned and P0 records in the order and number `ContextConfig` describes."""
        config = self.config
        found = self.store.essentials(self.tenant, user, 200)  # by importance, then newest
        relevant = sorted((r for r in found if r.id in rank), key=lambda r: rank[r.id])
        pinned = [r for r in found if r.id not in rank and r.pinned]
        short = [r for r in found if r.id not in rank and not r.pinned
                 and self._line_cost(r) <= config.essential_short_tokens]
        cap, used, out = int(config.essentials_share * budget), 0, []
        for record in relevant + pinned + short:
            cost = self._line_cost(record)
            if used + cost <= cap or (record.pinned and record.id in rank):
                out.append(record)
                used += cost
        return out

    def _superseded(self, user: str | None) -> set[str]:
        """Records all of whose facts have a newer value."""
        rows = self.store.user_facts(self.tenant, user)
        current = {f.memory_id for f in rows if f.valid_to is None}
        return {f.memory_id for f in rows if f.valid_to is not None} - current

    def _preferences(self, query: str, user: str | None, rank: dict[str, int], superseded: set[str], budget: int,
                     now: float) -> list[MemoryRecord]:
        config = self.config
        asked = asks_about_preferences(query)
        share = config.preferences_asked_share if asked else config.preferences_share
        most = config.preferences_asked_max if asked else config.preferences_max
        found = [r for r in self.store.live_of_kind(self.tenant, user, Kind.PREFERENCE.value, 500)
                 if r.id not in superseded and self._line_cost(r) <= config.preference_line_tokens]
        if not found or most == 0:
            return []
        retention = self.composite.score(RecordBatch.from_rows([retention_row(r) for r in found]), now)
        kept = {r.id: float(score) for r, score in zip(found, retention, strict=True)}
        found.sort(key=lambda r: (r.id not in rank, rank.get(r.id, 0), -kept[r.id], -r.created_at.timestamp()))
        cap, used, out = int(share * budget), 0, []
        for record in found:
            cost = self._line_cost(record)
            if used + cost <= cap:
                out.append(record)
                used += cost
                if len(out) >= most:
                    break
        return out

    def _slot_facts(self, query: str, user: str | None, have: set[str]) -> list[MemoryRecord]:
        """Live records of the current facts whose slot shares terms with the query, best covered first."""
        wanted = set(query_terms(query)) | slot_terms(query)
        if not wanted or self.config.facts_from_table == 0:
            return []
        scored = []
        for row in self.store.current_facts(self.tenant, user):
            slot = set(row.slot.split())
            shared = len(slot & wanted)
            if shared and row.memory_id not in have:
                scored.append((-shared, -shared / len(slot), -row.valid_from, row.memory_id))
        out: list[MemoryRecord] = []
        for *_, memory_id in sorted(scored):
            record = self.store.get(self.tenant, memory_id)
            if record is not None and record.tier in LIVE_TIERS and record.id not in have:
                out.append(record)
                have.add(record.id)
                if len(out) >= self.config.facts_from_table:
                    break
        return out

    def _history_lines(self, stale: list[MemoryRecord]) -> dict[str, str]:
        """One timeline line per superseded slot, keyed by the id of the superseded record that carries it."""
        lines: dict[str, str] = {}
        roots: set[str] = set()
        by_id: dict[str, list[FactRow]] = {}
        for row in self.store.facts_of(self.tenant, [r.id for r in stale]):
            by_id.setdefault(row.memory_id, []).append(row)
        for record in stale:
            for row in by_id.get(record.id, []):
                if row.valid_to is None or row.root in roots:
                    continue
                roots.add(row.root)
                slot = set(row.slot.split())
                chain = [r for r in self.store.timeline(self.tenant, row.root) if set(r.slot.split()) & slot]
                if len(chain) > 1:
                    lines[record.id] = "- " + timeline_line(chain)
                    break
        return lines
