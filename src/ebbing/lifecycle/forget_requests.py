"""Forgetting on request: find what a user's "forget ..." names among their records, and forget it.

A request (`ebbing.ingest.forget_request`) names its target in words; the records it means are found the way a
search finds them, by calibrated relevance over the user's live and archived records, and then narrowed:

- `previous`: the user's newest record, if it was said within `previous_window` of the request;
- `entity` ("everything about Mark"): every record that names the person or thing;
- `field`, `topic`: the records that stand out for the target: calibrated relevance at least `min_relevance`
  and a strength (relevance before retention, on the ranking's scale) within `margin` of the best one; and,
  when the target names a field (a phone number, an address, a birthday, a password ...), the user's own
  records that hold a value of that field, however they word it (`lifecycle.forget_fields`);
- `this` ("off the record"): nothing stored before; the message itself is not stored either;
- `everything`: never acted on from one line of chat; it comes back ambiguous with no candidates.

When the words fit two or more different things equally (two appointments and "forget the appointment")
nothing goes and the outcome lists the candidates, so the agent can ask which.

Targets go to the trash with the reason "asked by the user" and the request's id in the event, or are purged
at once when the store is in privacy mode. Records under legal hold stay and are listed as held.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ebbing.errors import InvalidInput
from ebbing.ingest.forget_request import ForgetRequest, search_words
from ebbing.judgement.align import PEOPLE, PEOPLE_KEYS, align, tokens
from ebbing.lifecycle import forget_people
from ebbing.lifecycle.forget_fields import alternatives, field_of, holding, two_values, unsaid_which
from ebbing.lifecycle.operations import Lifecycle
from ebbing.model import LIVE_TIERS, Event, ForgetOutcome, Hit, MemoryRecord, Scope, Tier, new_id, when
from ebbing.store.base import Facts, Listing, Reads, Views, Writes

REASON = "asked by the user"
_SPECIFIC = ("num", "name", "qualifier")  # what tells two things of one kind apart

# Ranking the user's records for a target: (query, scope, how many, now) -> hits, best first, nothing counted.
Rank = Callable[[str, Scope, int, float], list[Hit]]
# P(two records are about the same attribute), older first (`ingest.sameness`, as the write path judges pairs).
SameAttribute = Callable[[MemoryRecord, MemoryRecord], float]
# A user's archived records as they are now (the parsed archive files `Memory` keeps for deep recall; shared, so
# copied before they are handed out).
Archived = Callable[[Scope], list[MemoryRecord]]
# What a request means: (records meant, candidates shown, ambiguous)
Resolved = tuple[list[MemoryRecord], list[Hit], bool]


@dataclass(frozen=True)
class ForgetConfig:
    min_relevance: float = 0.6  # a target's calibrated relevance to the request's words (0..1)
    alternatives: float = 0.85  # two matches this sure to be one attribute with different values: ask which
    margin: float = 0.25  # a target's strength is at least the best one's minus this
    considered: int = 40  # records ranked for a target
    previous_window: float = 3600.0  # "forget that" reaches back this many seconds at most
    confirm_relevance: float = 0.8  # a tentative request stands when a record it names is at least this relevant

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_relevance <= 1.0:
            raise InvalidInput("min_relevance", "must be between 0 and 1")
        if not 0.0 <= self.margin <= 1.0:
            raise InvalidInput("margin", "must be between 0 and 1")
        if self.considered < 1:
            raise InvalidInput("considered", "must be at least 1")
        if not 0.0 <= self.confirm_relevance <= 1.0:
            raise InvalidInput("confirm_relevance", "must be between 0 and 1")
        if self.previous_window < 0:
            raise InvalidInput("previous_window", "must be >= 0 seconds")


def strength(hit: Hit) -> float:
    """How strongly a hit answers the target, retention taken out: a faded record is as much what was named."""
    weight = hit.parts.get("retention", 1.0) or 1.0
    return hit.score / weight


_NOT_NAMES = frozenset("""my our the his her their a an everything all anything what dr mr mrs ms miss prof coach aunt
    auntie uncle cousin grandma grandpa mom mum dad sir madam st i""".split())


def names_in(target: str) -> list[str]:
    """The proper names a target holds ("my ex-husband Dave" -> Dave; "Aunt Carol" -> Carol; "老王" -> 老王)."""
    latin = [w.removesuffix("'s") for w in re.findall(r"[A-Za-z][\w'-]*", target)
             if w[0].isupper() and w.lower().removesuffix("'s") not in _NOT_NAMES]
    han = re.sub(r"^(?:我的|我们的|我|我家|他的|她的)", "", "".join(re.findall(r"[\u4e00-\u9fff]+", target)))
    return latin + ([han] if han and not latin else [])


_HAN_PERSON_TAIL = re.compile(r"(?:(?:老|小|阿)[\u4e00-\u9fff]|[\u4e00-\u9fff](?:总|哥|姐|叔|姨|阿姨|师傅|老师|医生))$")


_TITLES = frozenset("阿姨 叔叔 大爷 大妈 师傅 老师 医生 大夫 护士 教练 律师 房东 总".split())
_HAN_KIND = re.compile(r"(?:科技|公司|集团|平台|项目|医院|诊所|银行|网友)$")


def han_aliases(name: str) -> list[str]:
    """Shorter forms a Chinese name goes by in what the user said: "房东林阿姨" -> 林阿姨, "前夫赵磊" -> 赵磊 (a
    person's name by jieba's tagger), "星辰科技" -> 星辰, "金银通平台" -> 金银通."""
    if not re.fullmatch(r"[\u4e00-\u9fff]{3,}", name):
        return []
    import jieba.posseg

    out = [m.group(0) for m in [_HAN_PERSON_TAIL.search(name)] if m]
    out += [w.word for w in jieba.posseg.cut(name) if w.flag == "nr" and len(w.word) >= 2]
    bare = _HAN_KIND.sub("", name)
    out += [bare] if len(bare) >= 2 else []
    # a bare title or kin word ("阿姨", "老师") is everyone's, not a name
    return [a for a in dict.fromkeys(out) if a != name and a not in PEOPLE and a not in _TITLES]


def kin_alone(text: str, name: str) -> bool:
    """Does `text` speak of the relation the name comes with ("表哥张磊") by the relation alone ("表哥结婚了"), not
    naming another one ("表哥李强")?"""
    kin = next((k for k in sorted(PEOPLE, key=len, reverse=True)
                if len(k) >= 2 and name.startswith(k) and len(name) - len(k) >= 2), None)
    if kin is None or kin not in text:
        return False
    import jieba.posseg

    after = text[text.index(kin) + len(kin):]
    following = next(iter(jieba.posseg.cut(after)), None)
    return not (following and following.flag.startswith("nr") and following.word not in name)


def _mentions(text: str, name: str) -> bool:
    if re.search(r"[\u4e00-\u9fff]", name):
        return name in text
    # letters and digits bound a Latin name, not Han characters: "Kevin说他下周走" names Kevin
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text, re.I) is not None


def parts_of(words: str) -> list[str]:
    """The items of an enumerated target ("my knee surgery and the rehab" -> "my knee surgery", "the rehab");
    nothing when it names one thing."""
    parts = [p.strip() for p in re.split(r",|;|:|\band\b|&|、|和|还有|以及|及", words) if p.strip()]
    useful = [p for p in parts if re.search(r"[A-Za-z]{3,}|[\u4e00-\u9fff]{2,}", p)]
    return useful if len(useful) >= 2 else []


def kept(request: ForgetRequest, text: str) -> bool:
    """Did the user say to keep this one ("Vikram stays", "Keep my son's", "刘姐的留着")?"""
    for keep in request.keep:
        if any(_mentions(text, n) for n in names_in(keep) if not _mentions(request.target, n)):
            return True
        own = {t.key for t in tokens(keep) if t.tag in ("word", "qualifier", "name")} - \
            {t.key for t in tokens(request.target)} - {"one", "rest", "thing", "stuff", "other", "info"}
        if own & {t.key for t in tokens(text)}:
            return True  # "the guest one's fine to keep": the guest network's password stays
        if someone_else(request.target, text, owners_only=False) and not someone_else(keep, text, owners_only=False):
            return True
    return False


def choose(request: ForgetRequest, hits: Sequence[Hit], config: ForgetConfig) -> tuple[list[Hit], bool]:
    """The hits a field, topic or entity request means, and whether the words fit different things equally."""
    hits = [h for h in hits if not kept(request, h.record.text)]
    if request.kind == "entity":
        names = names_in(request.target)
        names += [alias for n in names for alias in han_aliases(n)]
        named = [h for h in hits if any(_mentions(h.record.text, n) for n in names)
                 or any(kin_alone(h.record.text, n) for n in names)]
        if named:
            return named, False
        # no record says the name: it was a description ("婆婆闹矛盾", "她出国留学"), chosen as a topic is
    names = names_in(request.target) if not re.search(r"[\u4e00-\u9fff]", request.target) else []
    strong = [h for h in hits if h.parts.get("relevance", 0.0) >= config.min_relevance
              and not someone_else(request.target, h.record.text)
              and (not names or any(_mentions(h.record.text, n) for n in names))]  # "Lily's school", not Max's
    if not strong:
        return [], False
    best = max(strength(h) for h in strong)
    chosen = [h for h in strong if strength(h) >= best - config.margin]
    return chosen, False


_OWNER_EN = re.compile(r"\b(?P<who>[A-Za-z][a-z]+)(?:\s+[A-Z][a-z]+)?(?:'s|s')\s")
_PEOPLE_WORDS = "|".join(sorted(PEOPLE, key=len, reverse=True))
# "My daughter was born on ...", "我老公手机号是 ...": the statement is about another person
_OTHER_SUBJECT = re.compile(rf"^\s*(?:(?:my|our)\s+(?:\w+\s+)?(?:{_PEOPLE_WORDS})s?\b"
                            rf"|(?:我|我们)(?:的|家)?(?:{_PEOPLE_WORDS}))", re.I)


def someone_else(target: str, text: str, *, owners_only: bool = True) -> bool:
    """Is `text` about another person's or another one's thing than the target names? "my phone number" does not
    mean "my wife's phone number is ...", nor "my work laptop" "my personal laptop" (`ingest.align` qualifiers).
    With `owners_only`, a person counts only as an owner ("my wife's cell", "我老婆的手机号"): "my daughter Lily
    starts at Brookfield" is still about the daughter's school."""
    wanted = {t.key for t in tokens(target) if t.tag == "qualifier"}
    # "use that for anything non-work" says what the record is not: no qualifier it holds
    held = {t.key for t in tokens(re.sub(r"\bnon-?\w+", " ", text, flags=re.I)) if t.tag == "qualifier"}
    if owners_only:
        owners = {m.group("who").lower() for m in _OWNER_EN.finditer(text + " ")}
        owners |= {w for w in re.findall(r"([\u4e00-\u9fff]{1,3})的", text)}
        held_people = {k for k in held & PEOPLE_KEYS
                       if any(o == k or o.startswith(k) or k.startswith(o) or o.endswith(k) for o in owners)}
    else:
        held_people = held & PEOPLE_KEYS
    people_wanted = wanted & PEOPLE_KEYS
    if held_people - people_wanted and not held_people & people_wanted:
        return True  # the record is about a person the target does not name
    if not people_wanted and re.match(r"^\s*(?:my|our|我)", target, re.I) and _OTHER_SUBJECT.match(text):
        return True  # "my date of birth" is not "My daughter was born on ..."
    other_wanted, other_held = wanted - PEOPLE_KEYS, held - PEOPLE_KEYS
    return bool(other_wanted) and bool(other_held - other_wanted) and not other_held & other_wanted


_DEFINITE = re.compile(r"^\s*(?:the|that|this)\s+(?P<head>[A-Za-z][\w'-]*)\s*$", re.I)


def instances(request: ForgetRequest, chosen: Sequence[Hit]) -> bool:
    """Does "the appointment" (one thing, named by its kind alone) fit two of them: two records that both say
    "appointment" but share no number or name (the dentist on the 14th, the dermatologist on the 21st), the newer
    not said as a change of the older? Then the words do not say which, and the agent should ask. "My divorce"
    names the user's one divorce, whose facts differ in every number and name: only "the/that/this" count."""
    if request.kind not in ("field", "topic"):
        return False
    match = _DEFINITE.match(request.target)
    if not match:
        return False
    head = {t.key for t in tokens(match.group("head")) if t.tag in ("word", "name")}
    if not head:
        return False
    naming = sorted((h.record for h in chosen if head & {t.key for t in tokens(h.record.text)}),
                    key=lambda r: r.created_at)
    if sum(1 for r in naming if head & {t.key for t in tokens(r.text) if t.tag == "name"}) >= 2:
        return False  # "the peloton" said as "the Peloton" in each: a thing's proper name, one thing
    return any(two_values(older.text, newer.text, head) for i, older in enumerate(naming) for newer in naming[i + 1:])


class RequestStore(Reads, Writes, Facts, Views, Listing, Protocol):
    """What resolving a request reads (the newest turns, facts, history, a user's records) and the audit note it
    writes."""


class Requests:
    """Acts on forget requests and `forget_matching` for one `Memory`."""

    def __init__(self, store: RequestStore, lifecycle: Lifecycle, rank: Rank, config: ForgetConfig,
                 erased: Callable[[], None], archived: Archived, same_attribute: SameAttribute | None = None) -> None:
        self.store, self.lifecycle, self.rank, self.config = store, lifecycle, rank, config
        self.same_attribute = same_attribute
        self.archived = archived
        self.erased = erased  # called after a purge: caches holding text drop it

    def resolve(self, request: ForgetRequest, scope: Scope, now: float) -> Resolved:
        """(records meant, candidates shown, ambiguous) for a request; nothing changes."""
        user_scope = Scope(scope.tenant, scope.user_id)
        if request.kind == "this":
            return [], [], False
        if request.kind == "everything":
            return [], [], True
        if request.kind == "previous":
            for record in self.store.latest(scope.tenant, scope.user_id, scope.session_id, 5):
                if _is_assistant(record):
                    continue
                if 0.0 <= now - record.created_at.timestamp() <= self.config.previous_window:
                    return [record], [Hit(record, 1.0, {"previous": 1.0})], False
                break
            return [], [], False
        limit = self.config.considered * (3 if request.kind == "entity" else 1)
        names = names_in(request.target) if request.kind == "entity" else []
        # a name alone finds every record naming it; a topic is searched without "stuff", "那件事"
        # a Chinese list's 、 stays for `parts_of` but not in the query, where it costs the vector relevance
        hits = self.rank(" ".join(names) or search_words(request.target).replace("、", ""), user_scope, limit, now)
        chosen, ambiguous = choose(request, hits, self.config)
        # "the marathon stuff: the signup, the training plan", "亏钱、割肉": each part too (a Chinese target is no name)
        if not names_in(request.target) or (request.kind == "topic" and re.search(r"[\u4e00-\u9fff]", request.target)):
            seen = {h.record.id for h in chosen}
            for part in parts_of(search_words(request.target)):
                more, _ = choose(replace(request, target=part), self.rank(part, user_scope, limit, now), self.config)
                for hit in more:
                    if hit.record.id not in seen:
                        seen.add(hit.record.id)
                        chosen.append(hit)
        ambiguous = ambiguous or self._alternatives(request, chosen, scope.tenant) or instances(request, chosen)
        if ambiguous:
            return [], chosen, True
        people = self._two_people(request, chosen, user_scope)
        if people:  # "Sam" said of a coworker and of a college friend, "my brother" of Dan and of Chris: ask which
            return [], people, True
        # the records that hold the field the target names; two of its values the user can hold at once ("my
        # address": the home and the lake house) make the request ambiguous
        chosen += self._holding_field(request, user_scope, {h.record.id for h in chosen})
        if request.kind in ("field", "topic") and alternatives(request.target, [h.record for h in chosen]):
            return [], chosen, True
        if request.kind in ("field", "topic") and field_of(request.target) is not None:
            unsaid = [r for r in unsaid_which(request.target, self._own_records(user_scope))
                      if not _is_assistant(r) and not kept(request, r.text)]
            if len(unsaid) >= 2:  # "my number" with a personal mobile and a work phone held: ask which
                seen = {r.id for r in unsaid}
                return [], [Hit(r, 1.0, {"field": 1.0}) for r in unsaid] + [h for h in chosen
                                                                              if h.record.id not in seen], True
        return [h.record for h in chosen], chosen, False

    def confirm(self, request: ForgetRequest, scope: Scope, now: float) -> Resolved | None:
        """A tentative request's resolution when it names what the user's records clearly hold ("wipe the japan
        trip planning", "那个预约取消了，你删掉吧"): a record it would take (or ask about) at least `confirm_relevance`
        relevant, or one holding the field it names; None otherwise (an errand or a remark, stored as one). The
        resolution goes on to `act`, which does not look again."""
        resolved = self.resolve(request, scope, now)
        hits = resolved[1]
        if any(h.parts.get("relevance", 0.0) >= self.config.confirm_relevance or "field" in h.parts for h in hits):
            return resolved
        return None

    def _two_people(self, request: ForgetRequest, chosen: Sequence[Hit], scope: Scope) -> list[Hit]:
        """The candidates when the target names a person by a name or a relation that two people answer to (see
        `forget_people`); nothing when it fits one, or the target says which ("Sam from work", "my older
        brother", "我大姐")."""
        if request.kind not in ("entity", "topic"):
            return []
        kin = forget_people.kin_of(request.target)
        names = names_in(request.target)
        relation = forget_people.relation_of(request.target)
        if kin is None and relation is None and (len(names) != 1 or forget_people.said_which(request.target)):
            return []
        records = [r for r in self._own_records(scope) if not _is_assistant(r) and not kept(request, r.text)]
        # what the user said counts as evidence even where it has faded to the trash: the statement that
        # introduced the second Sam may be long gone, and acting as if there were one would take his records too
        told = [r.text for r in records] + [r.text for r in self.store.scan(scope.tenant, scope.user_id)
                                            if r.tier == Tier.TRASH and not _is_assistant(r)]
        seen = {h.record.id for h in chosen}
        if kin is not None:  # "我姐的事" with a 大姐 and an 二姐; "舅舅住院那事": among the records it found
            base, described = kin
            pool = [h.record.text for h in chosen] if described else told
            meant = [] if described else [r for r in records if base in r.text]
            ask = len(forget_people.kin_orders(base, pool)) >= 2
        elif relation is not None:  # "my brother": "my older brother Dan", "my younger brother Chris"
            people = forget_people.relation_names(relation, told)
            meant = [r for r in records if any(_mentions(r.text, n) for n in people)
                     or re.search(rf"\b{relation}\b", r.text, re.I)]
            ask = len(people) >= 2
        else:  # every statement naming them, not only those the ranking put first
            meant = [r for r in records if _mentions(r.text, names[0])]
            naming = [t for t in told if _mentions(t, names[0])]
            ask = len(naming) >= 2 and forget_people.two_people(names[0], naming)
        if not ask:
            return []
        return [*chosen, *(Hit(r, 1.0, {"person": 1.0}) for r in meant if r.id not in seen)]

    def _holding_field(self, request: ForgetRequest, scope: Scope, chosen: set[str]) -> list[Hit]:
        """The user's records that hold the field the target names, worded in ways the ranking did not find."""
        if request.kind not in ("field", "topic") or field_of(request.target) is None:
            return []
        names = names_in(request.target) if not re.search(r"[\u4e00-\u9fff]", request.target) else []
        found = holding(request.target, self._own_records(scope), skip=tuple(chosen))
        return [Hit(dataclasses.replace(r), 1.0, {"field": 1.0}) for r in found
                if not _is_assistant(r) and not kept(request, r.text)
                and (not names or any(_mentions(r.text, n) for n in names))]

    def _own_records(self, scope: Scope) -> list[MemoryRecord]:
        """A user's live and archived records (a request is rare; its target may have faded to the archive)."""
        return [r for r in self.store.scan(scope.tenant, scope.user_id) if r.tier in LIVE_TIERS] + self.archived(scope)

    def matching(self, query: str, scope: Scope, now: float, *, purge: bool,
                 dry_run: bool) -> tuple[ForgetOutcome, list[Event]]:
        """`Memory.forget_matching`: a query names what to forget, as a request's target would."""
        words = re.findall(r"[\w'-]+", query)
        bare_name = bool(names_in(query)) and len(words) <= 3 and all(w[0].isupper() for w in words if w.isascii())
        kind = "entity" if bare_name else "topic"  # "Mark": every record naming him
        return self.act(ForgetRequest(kind, query, ""), scope, now, purge=purge, dry_run=dry_run)

    def _alternatives(self, request: ForgetRequest, chosen: Sequence[Hit], tenant: str) -> bool:
        """Do the words fit two different things equally? "the appointment" with a dentist's and a vet's, "my phone
        number" with a cell and a work number: two matches judged one attribute with different values (numbers,
        names or which-one words differ), neither replaced by the other. A topic's several facts about one thing
        ("my divorce": the lawyer, the mediation date) are different attributes and all go."""
        if request.kind not in ("field", "topic") or len(chosen) < 2 or self.same_attribute is None:
            return False
        described = [t for t in tokens(search_words(request.target)) if t.tag in ("word", "name", "qualifier", "num")]
        if request.kind == "topic" and field_of(request.target) is None and len(described) > 1:
            # a described topic is one story whose steps differ in names and places ("Maya's school situation":
            # bullied at one school, moved to another); a bare name or kind ("张老师", "Sam") may mean two
            return False
        if len(search_words(request.target).split()) > 3 and not re.search(r"[\u4e00-\u9fff]", request.target):
            return False  # a long description names one thing
        records = sorted((h.record for h in chosen[:6]), key=lambda r: r.created_at)
        chains = {(r.memory_id, str(r.superseded_by)) for r in self.store.facts_of(tenant, [r.id for r in records])
                  if r.superseded_by}
        for i, older in enumerate(records):
            for newer in records[i + 1:]:
                if (older.id, newer.id) in chains:
                    continue  # an old value and its successor: the same thing, both go
                pair = align(older.text, newer.text)
                differs = bool(pair.only("old", *_SPECIFIC) and pair.only("new", *_SPECIFIC))
                if differs and self.same_attribute(older, newer) >= self.config.alternatives:
                    return True
        return False

    def act(self, request: ForgetRequest, scope: Scope, now: float, *, purge: bool,
            dry_run: bool = False, resolved: Resolved | None = None) -> tuple[ForgetOutcome, list[Event]]:
        request_id = new_id(now)
        records, candidates, ambiguous = resolved or self.resolve(request, scope, now)
        # words that need not mean the memory ("wipe the japan trip planning") never forget by themselves: the
        # records they seem to name come back as candidates, for the agent to confirm with the user
        ambiguous = ambiguous or (request.tentative and bool(candidates))
        held = [r.id for r in records if r.held]
        records = [r for r in records if not r.held]
        events: list[Event] = []
        forgotten: list[MemoryRecord] = []
        if records and not dry_run and not ambiguous:
            data = {"request": request_id, "policy": "request"}
            if purge:
                self.lifecycle.purge([r.id for r in records], now, f"{REASON} (privacy mode)", data)
                self.erased()
                forgotten = records
            else:
                forgotten = [self.lifecycle.forget(r.id, now, REASON, data) for r in records]
            events = [e for r in records for e in self.store.history(scope.tenant, r.id)[-1:]]
        outcome = ForgetOutcome(request_id, request.kind, request.target, forgotten,
                                candidates if (ambiguous or dry_run) else [], ambiguous, purge and bool(forgotten),
                                dry_run, held, request.tentative)
        if not dry_run:
            note = Event(request_id, "forget_request", when(now), self.lifecycle.actor, REASON,
                         {"kind": request.kind, "forgotten": [r.id for r in forgotten], "ambiguous": ambiguous,
                          "tentative": request.tentative,
                          "candidates": [h.record.id for h in outcome.candidates], "held": held,
                          "purged": outcome.purged})
            self.store.add_events(scope.tenant, [note])
            events.append(note)
        return outcome, events


def _is_assistant(record: MemoryRecord) -> bool:
    role = record.metadata.get("role") if isinstance(record.metadata, dict) else None
    return isinstance(role, str) and role.strip().casefold() == "assistant"
