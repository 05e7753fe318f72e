"""A first guess at what a new memory is: its kind, salience, priority, pin and security flag.

`classify(text)` is a rule classifier over English and Chinese cue phrases; `RuleClassifier` wraps it and
`LLMClassifier` asks a chat model, falling back to the rules when the answer is unusable. A caller's
explicit values always win over these guesses.

The kind is decided by the first step that matches, and the order carries the labelling conventions
(`python -m ebbing.bench.classify` measures them against labelled files):

1. nothing but acknowledgements, greetings, shrugs or emoji ("ok 👍", "收到", "随便吧，都行", "Sure, go ahead"),
   a request that opens with "帮我", or a one-off question-request ("Could you draft a reply for me?", unless
   it says "always" or "以后") -> temporary;
2. a pin request ("Remember this forever: ...") is cut off first, so the rest decides the kind; a request
   that names the kind or says it is settled ("永远记住这个决定：...", "永远记住，我们已经定了：...") decides it;
3. a short message that opens with a mood ("困死了，昨晚没睡好") -> temporary, whatever caused the mood;
4. an unmistakably past time ("yesterday", "two weeks ago", "back in 2019", "when I was 12", "上周", "去年")
   -> episode, even when the story is about a decision: "last year we finally decided to drop X" is an
   episode; only a bare one-clause switch keeps its kind ("I switched from Spotify to Apple Music last
   week" -> decision), and a change of standing state is what it leaves true ("I moved last week, my new
   address is ...", "上周搬家了，新地址是…" -> fact);
5. the user's own name ("我叫林晓雯，叫我晓雯就行") -> fact, although "call me Dan" alone is a wish;
6. how the assistant should talk to the user ("please always answer in English", "回复里别用繁体字")
   -> preference, although it is phrased as an order;
7. deciding told with its occasion ("at the offsite we finally agreed on the roadmap") -> episode;
8. choices, changes and commitments ("we decided", "let's go with", "final call:", "from now on", "switched
   to", "will be written in Rust", "we're renting the flat in Lyon, not ...", "Option 2 it is", "the trip is
   off", "改成", "换成", "放弃了", "是用 Go 写，不用 Java", "从每周 20 块涨到 30 块") -> decision;
9. health facts (allergies, conditions, medication) and access rules said of a system ("the bastion only
   accepts keys, never passwords") -> fact, so they are not read as tastes;
10. a mood or a coming and going in a short message ("困死了", "我先忙了，晚上聊") -> temporary;
11. a weaker time anchor with a completed action ("this morning I missed my train", "刚才投影仪坏了")
    -> episode;
12. likes, dislikes, habits and verdicts on things ("I prefer", "I can't stand", "a hard no for me",
    "X or nothing", "X is overrated", "long meetings drain me", "我喜欢", "宁可", "受不了", "越辣越好",
    "还是纸质书好", "三分糖，少冰") -> preference;
13. weak decision cues ("instead", "那就", "这次就去莫干山") -> decision;
14. questions, one-off requests, reminders, "right now", "today", "never mind", reactions ("interesting,
    never thought of it that way", "yesss it compiles") -> temporary, and so is a short sigh or remark on
    the weather or the thing at hand ("哎，又下雨了", "ugh, rain again", "这个链接打不开");
15. an English past-tense narrative without a date ("our planning meeting ran three hours over") -> episode;
16. an English phrase with no subject and no verb that picks one thing over another ("Tabs, not spaces",
    "Decaf only after 3pm", "Podcasts at 1.5x, audiobooks at normal speed") -> preference;
17. anything else -> fact.

Only the first `MAX_CHARS` characters are read, which keeps a pasted document as cheap as a chat line.

Priority: P0 for pinned text, health and safety, credentials and access rules, and the user's name;
P2 for temporary text; P1 otherwise.
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any, Protocol, runtime_checkable

from ebbing.errors import EbbingError
from ebbing.llm import prompts
from ebbing.llm.base import LLM, complete_json
from ebbing.model import Kind, Priority
from ebbing.text.lazy import LazyPattern, lazy


@dataclass(frozen=True)
class Classification:
    kind: Kind
    importance: float
    priority: Priority
    pin: bool
    security: bool = False  # secrets, credentials, safety-critical facts: they fade slower


# Word edges for cue phrases count ASCII letters and digits only: a regex word boundary sees none between a
# Chinese character and a Latin word ("用Vim", "通过SSH登录").
_HEAD = r"(?<![A-Za-z0-9_])"
_TAIL = r"(?![A-Za-z0-9_])"
# A pattern that ends in a group or a quantifier may or may not end on a letter: it must not stop inside a
# word ("on Sunday" in "on Sundays", "in May" in "in Mayfair").
_OPEN_TAIL = r"(?:(?<![A-Za-z])|(?![A-Za-z0-9_]))"


def _rx(*patterns: str) -> LazyPattern:
    """One case-insensitive pattern from alternatives. An alternative that starts with an ASCII letter must
    start a word, and one that ends with a letter must end one, so "token" cannot match in "tokens" nor "ago"
    in "Chicago"; an alternative that ends in a group or quantifier must not stop inside a word.

    The alternatives that start a word share one group behind one edge test, which keeps a long text cheap."""
    words: list[str] = []
    others: list[str] = []
    for p in patterns:
        first = p[3:4] if p.startswith("(?:") else p[:1]
        last = p[-1:]
        if last.isascii() and last.isalpha() and not p.endswith((r"\w", r"\b", r"\s", r"\d")):
            tail = _TAIL
        elif last in ")?*+}":
            tail = _OPEN_TAIL
        else:
            tail = ""
        (words if first.isascii() and first.isalpha() else others).append(f"(?:{p}){tail}")
    parts = [f"{_HEAD}(?:{'|'.join(words)})"] if words else []
    return lazy("|".join(parts + others), re.IGNORECASE)


# The cue tables (word lists, the alternatives of each `_rx` pattern, and a few whole patterns) live in
# cues/classify.toml, which says what each one catches, with examples. They are data, and most edits are to
# them; this module keeps the logic: how the cues combine into rules, and in what order the rules are tried.
# The file is read once, at import.
_CUES: dict[str, Any] = tomllib.loads(
    (resources.files("ebbing.ingest") / "cues" / "classify.toml").read_text(encoding="utf-8")
)
_WORDS: dict[str, Any] = _CUES["words"]
_PLACEHOLDER = lazy(r"\{([a-z_]+)\}")


def _joined(value: str | list[str]) -> str:
    """A string of the cue file; a list is one string too long for a line, split into pieces."""
    return "".join(value) if isinstance(value, list) else value


_FRAGMENTS = {name: _joined(value) for name, value in _CUES["fragments"].items()}


def _table(name: str, **derived: str) -> LazyPattern:
    """The `_rx` pattern of one cue table. "{name}" in an alternative is a shared fragment of the cue file, or
    one of `derived` (values built here); an unknown name fails at import rather than matching nothing."""
    fragments = _FRAGMENTS | derived
    return _rx(*(_PLACEHOLDER.sub(lambda m: fragments[m.group(1)], _joined(a)) for a in _CUES["tables"][name]))


def _pattern(name: str, flags: int = 0) -> LazyPattern:
    """One whole pattern of the cue file, compiled as written: unlike `_table`, no word edges are added."""
    return lazy(_joined(_CUES["patterns"][name]), flags)


# --- text preparation -------------------------------------------------------------------------------

# Quoted names ('Today in Rust', 「今天也要早睡」) are titles, not statements about today, so cues inside
# them are ignored. An English single quote counts only where it cannot be an apostrophe.
_QUOTED = lazy(
    r"「[^」]{0,120}」|『[^』]{0,120}』|“[^”]{0,120}”|\"[^\"]{0,120}\"|(?<![\w'])'[^'\n]{1,120}'(?![\w'])"
)
_EMOJI = lazy(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d\U000e0020-\U000e007f]+"
)


# The rules read this much of a text. What an utterance is shows in its first sentences, and the bound keeps
# a pasted document from costing more than a chat line: every pattern is linear in what it reads.
MAX_CHARS = 3000


# A transcript's speaker label ("Gina: Thanks, Jon!") says who spoke, not what kind of thing was said: read
# without it, or every line of a transcript looks like a statement of fact. Labels that are themselves cues
# ("Important:", "Decision:", "Note:") stay.
_SPEAKER = lazy(r"^([A-Z][\w'.-]{0,20}(?: [A-Z][\w'.-]{0,20})?)\s*:\s+(?=\S)")
_LABEL_CUES = frozenset(_WORDS["label_cues"])


def _prepare(text: str) -> str:
    """The text the rules read: normalised, at most `MAX_CHARS` long, without a speaker label, quoted names or
    emoji (an emoji at the end would hide "any day" or "for me" from the cues that want them last)."""
    label = _SPEAKER.match(text)
    if label and label.group(1).lower() not in _LABEL_CUES:
        text = text[label.end():]
    text = unicodedata.normalize("NFKC", text[: MAX_CHARS * 2])[:MAX_CHARS]
    text = text.replace("’", "'").replace("‘", "'")
    text = _EMOJI.sub(" ", _QUOTED.sub(" ", text))
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _has_han(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


# --- pin ----------------------------------------------------------------------------------------------

PIN = _table("pin")
# The pin request before a colon ("Please always remember: ..."): cut off before the kind is looked for.
_PIN_PREFIX = lazy(r"^[^:：]{0,60}[:：]\s*")
# "Remember this decision: ..." names the kind itself, and so does a request that says the matter is settled
# ("永远记住，我们已经定了：...", "Remember, we agreed: ...").
_NAMED_KIND = (
    (lazy(r"\bdecision\b|\b(?:decided|agreed|settled)\b|决定|决策|(?<![一确固稳肯规预约否])定了|敲定|拍板",
          re.IGNORECASE), Kind.DECISION),
    (lazy(r"\bpreference\b|偏好|喜好", re.IGNORECASE), Kind.PREFERENCE),
)
# A pin trigger right after the speaker's own promise to remember ("I'll remember this", "我会记住的") is an
# assistant's reply, not a request, and does not pin, unless the text also asks outright (`_ASKED`).
_PROMISE = _pattern("promise", re.IGNORECASE)
_ASKED = _pattern("asked", re.IGNORECASE)


def _pin_request(text: str) -> bool:
    """Whether the text asks the listener to keep something (see PIN), rather than promising to."""
    found = list(PIN.finditer(text))
    if not found:
        return False
    promised = any(_PROMISE.search(text[max(0, m.start() - 40):m.start()]) for m in found)
    return not promised or bool(_ASKED.search(text))


def _strip_pin(text: str) -> tuple[str, str]:
    """(the pin request, the rest) of a text that contains one."""
    head = _PIN_PREFIX.match(text)
    if head and PIN.search(head.group(0)):
        return head.group(0), text[head.end():].strip()
    return "", PIN.sub(" ", text).strip()


# --- small talk: the whole text -----------------------------------------------------------------------

_ACK_WORDS = tuple(_WORDS["ack"])
_ACK_WORD = "|".join(sorted((re.escape(w) for w in _ACK_WORDS), key=len, reverse=True))
# Atomic groups and possessive repeats: each piece is taken whole or not at all, so a long run of "哈" or
# "h" followed by a word cannot make the engine try every way of cutting the run into pieces.
ACKNOWLEDGEMENT = lazy(
    rf"^(?:(?>(?:{_ACK_WORD})(?![a-z]))|[哈嗯哦啊呀嘿嘻呵呜唔~～]++|\d{{3}}|h{{2,}}+|(?:ha){{2,}}+h?|(?:he){{2,}}+|"
    r"x++d++|lo++l++|lmf?a++o++|[\s.,!?。，！？、~～…:：;；()（）\-]++)*+$",
    re.IGNORECASE,
)
ERRAND = _pattern("errand")


def _is_small_talk(text: str) -> bool:
    bare = _EMOJI.sub("", text)
    return not bare.strip() or bool(ACKNOWLEDGEMENT.match(bare))


# --- time ---------------------------------------------------------------------------------------------

_MONTH = _FRAGMENTS["month"]
_SEASON = _FRAGMENTS["season"]
PAST_ANCHOR = _table("past_anchor")
WEAK_ANCHOR = _table("weak_anchor")
# A year as a time ("in 2019", "June 2019", "2018 年"), not as a label ("a 2016 Honda", "2016款").
_YEAR = lazy(
    rf"\b(?:in|during|around|of|by|from|until|{_MONTH}|{_SEASON})\s+((?:19|20)\d\d)\b"
    r"|(?<!\d)((?:19|20)\d\d)\s*年(?![级代款])",
    re.IGNORECASE,
)
_NOT_A_STORY = _pattern("not_a_story", re.IGNORECASE)
# English completed actions: common irregular pasts, and -ed words that are neither adjectives nor passives
# (see `_past_verb`).
_IRREGULAR_PAST = _WORDS["irregular_past"].split()
_PURE_PAST = set(_WORDS["pure_past"].split())
_PARTICIPLE = "|".join(v for v in _IRREGULAR_PAST if v not in _PURE_PAST)
_PAST = lazy(
    rf"(?<![\w-])(?:(?:{'|'.join(sorted(_PURE_PAST))})|(?:{_PARTICIPLE}|[a-z]{{3,}}ed)(?!\S*\s+by\b))(?![\w-])",
    re.IGNORECASE,
)
_NOT_A_VERB = _table("not_a_verb")
_DESCRIPTIVE = _table("descriptive")
_PASSIVE_OR_STATE = lazy(
    r"\b(?:is|are|am|be|been|being|'s|'re|'m|get|gets|getting|has|have|'ve|not|n't|to)\s+(?:\w+ly\s+)?$",
    re.IGNORECASE,
)
_BIOGRAPHY = _table("biography")
_ZH_DONE = _pattern("zh_done")
_ZH_FUTURE = _pattern("zh_future")
_EN_FUTURE = _table("en_future")
# An English narrative without a date: "Our Q2 planning meeting ran three hours over". After a pronoun the
# -ed word is a verb; after a noun it may describe the next one ("writes compressed snapshots", "the job
# exports archived invoices", "a crowded bus"), so there it counts only before a preposition, an adverb, an
# object pronoun or a determiner ("a typhoon cancelled our flight", "writes failed for 40 minutes") or at a
# clause end.
_STORY_VERB = "|".join(v for v in _IRREGULAR_PAST if v not in {"was", "were", "had", "did"})
_STORY_ADVERB = r"(?:just |finally |suddenly |accidentally |actually |never |also |eventually )?"
_AFTER_A_VERB = _FRAGMENTS["after_a_verb"]
_FUNCTION_WORD = _FRAGMENTS["function_word"]
_NARRATIVE = lazy(
    rf"\b(?:(?:I|we|they|he|she|it)\s+{_STORY_ADVERB}(?:{_STORY_VERB}|[a-z]{{3,}}ed)"
    rf"|(?:my \w+|our \w+(?: \w+){{0,2}}|the \w+(?: \w+){{0,2}}|(?!(?:{_FUNCTION_WORD})\b)\w+)\s+{_STORY_ADVERB}"
    rf"(?:{_STORY_VERB}|[a-z]{{3,}}ed{_AFTER_A_VERB}))"
    r"(?![\w-])(?!\s+by\b)",
    re.IGNORECASE,
)


def _past_verb(text: str, *, anchored: bool = False, start: int = 0) -> bool:
    """Whether `text` has a completed action from `start` on (the words before it are still read as context)."""
    for match in _PAST.finditer(text, start):
        word = match.group(0)
        if _NOT_A_VERB.fullmatch(word) or (not anchored and _DESCRIPTIVE.fullmatch(word)):
            continue
        if _PASSIVE_OR_STATE.search(text[max(0, match.start() - 30): match.start()]):
            continue
        return True
    return False


def _past_year(text: str) -> bool:
    this_year = datetime.now(UTC).year
    return any(int(en or zh) < this_year for en, zh in _YEAR.findall(text))


_SWITCHED = _table("switched")
_MORE_THAN_ONE_CLAUSE = lazy(r"[,，;；:：—]|\b(?:and|but|because|so|when|after|before|until|then)\b", re.I)


def _switch_with_a_date(text: str) -> bool:
    return bool(_SWITCHED.search(text)) and not _MORE_THAN_ONE_CLAUSE.search(text)


_CHANGED_TO = _table("changed_to")


def _strong_past(text: str) -> bool:
    if PAST_ANCHOR.search(text):
        return True
    # A year already over, unless the sentence is a plan, a birth date or an expiry.
    return _past_year(text) and not (_NOT_A_STORY.search(text) or _BIOGRAPHY.search(text)
                                     or _ZH_FUTURE.search(text) or _EN_FUTURE.search(text))


def _weak_past(text: str) -> bool:
    if not WEAK_ANCHOR.search(text):
        return False
    if _has_han(text):
        return bool(_ZH_DONE.search(text)) and not _ZH_FUTURE.search(text)
    return _past_verb(text, anchored=True) and not _EN_FUTURE.search(text)


def _narrative(text: str) -> bool:
    if _has_han(text) or _BIOGRAPHY.search(text) or _EN_FUTURE.search(text):
        return False
    # Only the verb that ends a match counts: in "The shared drive is mounted" the "-ed" word before the
    # noun describes it.
    return any(_past_verb(text[: m.end()], start=m.end() - len(m.group(0).split()[-1]))
               for m in _NARRATIVE.finditer(text))


# --- preference ---------------------------------------------------------------------------------------

INSTRUCTION = _table("instruction")
# ", never coffee" states a taste; ", never thought of it that way" is a remark.
_PAST_FORM = "|".join(_IRREGULAR_PAST)
PREFERENCE = _table("preference", past_form=_PAST_FORM)
# Tastes said without "I like" or "我喜欢" (the second held-out set showed them falling through to "fact"). Each
# table is one way of stating a taste; `_likes` reads them all together with PREFERENCE.
_VERDICT = _table("verdict")
_EFFECT_ON_ME = _table("effect_on_me")
_LEANING = _table("leaning")
_HOW_I_TAKE_IT = _table("how_i_take_it")
_STANDING_WISH = _table("standing_wish")
_TASTES = (PREFERENCE, _VERDICT, _EFFECT_ON_ME, _LEANING, _HOW_I_TAKE_IT, _STANDING_WISH)


def _likes(text: str) -> bool:
    return any(table.search(text) for table in _TASTES)


_CLAUSE_WORD = _table("clause_word")
_NOT_A_PHRASE = lazy(r"[:?？]|\d{3,}|\d[\d.,]*\s*(?:%|gb|mb|tb|ms|km|kg)\b", re.IGNORECASE)
_CHOICE_WORD = _table("choice_word")
_PREPOSITION = lazy(r"\b(?:at|in|on|for|with|by|from|to|after|before|during|under)\b", re.IGNORECASE)
_SUBORDINATE = lazy(r"\b(?:whenever|when|if|unless|because|as long as|while|since)\b", re.IGNORECASE)
_COUNT = _table("count")
TERSE_MAX = 70


def _terse_wish(text: str) -> bool:
    """An English phrase without a subject or verb (see `_CLAUSE_WORD`), at most `TERSE_MAX` characters."""
    if len(text) > TERSE_MAX or _has_han(text) or _NOT_A_PHRASE.search(text):
        return False
    # Only the main phrase must be verbless: "Vegetarian restaurants whenever we eat out" has a clause after
    # "whenever".
    head = _SUBORDINATE.split(text, maxsplit=1)[0]
    if len(re.findall(r"[A-Za-z]+", text)) < 2 or _CLAUSE_WORD.search(head):
        return False
    if _CHOICE_WORD.search(text):
        return True
    parts = [part.split() for part in re.split(r"[,;—–]", text.rstrip(".!"))]
    if len(parts) >= 2 and all(1 <= len(words) <= 3 for words in parts) and not _COUNT.search(text):
        return True  # "Short meetings, clear agendas"; "Two kids, one dog" has counts and is no wish
    return sum(bool(_PREPOSITION.search(" ".join(words))) for words in parts) >= 2


# --- decision -----------------------------------------------------------------------------------------

DECISION = _table("decision")
_DECIDED = _table("decided")
_COMMITMENT = _table("commitment")
_PLAN_STATE = _table("plan_state")
WEAK_DECISION = _table("weak_decision")

# --- health, safety, security, identity ----------------------------------------------------------------

HEALTH = _table("health")
SECURITY = _table("security")
# Advice about secrets in general ("Never commit credentials to the repo", "不要把密码提交到仓库") names no
# secret and no one's access: it is not security-critical by that alone. Advice opens with a rule word, says
# nothing about the speaker, and every credential word in it is bare (not "the API token for billing", "our
# VPN password", "公司 VPN 的账号密码").
_ADVICE = _pattern("advice", re.IGNORECASE)
_OWNED = lazy(r"\b(?:the|my|our|your|his|her|their|this|that|these|those|its)\s+(?:[\w-]+\s+){0,3}$|的\s*$",
              re.IGNORECASE)


def _security_advice(text: str) -> bool:
    if not _ADVICE.search(text) or _FIRST_PERSON.search(text) or "[secret:" in text or re.search(r"我们|公司", text):
        return False
    return all(_OWNED.search(text[max(0, m.start() - 40):m.start()]) is None for m in SECURITY.finditer(text))


NAME = _table("name")
IDENTITY = _table("identity")
_FIRST_PERSON = lazy(r"\b(?:I|I'm|I'd|I've|I'll|me|my|mine|myself)\b|我", re.IGNORECASE)
# "I'm Sofia Marquez": a capitalised name right after "I'm" (case matters here, so a pattern of its own).
# A greeting may come first: "Hi, I'm ...", "Morning! I'm ...", "Good afternoon all, I'm ...".
_INTRODUCTION = lazy(r"^(?i:(?:hi|hello|hey|(?:good )?(?:morning|afternoon|evening))(?: there| all| everyone)?"
                     r"[,!.]* )?I'?m [A-Z][a-zà-öø-ÿ]+(?: [A-Z][a-zà-öø-ÿ'-]+)+\b(?! (?:and|or)\b)")

# --- temporary ----------------------------------------------------------------------------------------

MOOD = _table("mood")
# Moods are said in a few words; in a longer sentence a mood word is incidental.
SHORT = 40
LONG = 100  # characters: a message this long usually says more than one thing
REQUEST = _table("request")
# A question that asks for something once ("Could you draft a reply to this email for me?") is a request,
# though "for me" or "you draft" would otherwise read as a standing wish; a standing word keeps it one
# ("Could you always answer in English?").
_ONE_OFF = lazy(
    r"^(?:(?:hey|hi|ok|okay|so|also|wait|quick question|btw|and),? )*(?:can|could|would|will) you\b[^?]*\?\s*$"
    r"|^(?:你)?(?:能不能|能否|可不可以|可以)[^？?]*(?:[？?]|吗\s*[？?]?)\s*$",
    re.IGNORECASE,
)
STANDING = _table("standing")
AWAY = _table("away")
ASIDE = _table("aside")
ACTIVITY = _table("activity")


# --- classification -----------------------------------------------------------------------------------

BASE_IMPORTANCE = {
    Kind.FACT: 0.6, Kind.DECISION: 0.7, Kind.PREFERENCE: 0.6, Kind.TEMPORARY: 0.15,
    Kind.EPISODE: 0.45, Kind.SUMMARY: 0.6,
}


def _kind(text: str) -> Kind:
    """The kind of a text whose pin request, if any, is already cut off (see the module docstring)."""
    if _is_small_talk(text) or ERRAND.search(text):
        return Kind.TEMPORARY
    # "Could you draft a reply to this email for me?" asks once, though "for me" reads as a wish.
    if _ONE_OFF.search(text) and not STANDING.search(text):
        return Kind.TEMPORARY
    # A short message that opens with a mood is about now, whatever caused it ("困死了，昨晚没睡好").
    if len(text) <= SHORT and (opening := MOOD.search(text)) and opening.start() <= 2:
        return Kind.TEMPORARY
    if _strong_past(text):
        if _switch_with_a_date(text):
            return Kind.DECISION
        return Kind.FACT if _CHANGED_TO.search(text) else Kind.EPISODE
    # The user's own name, with or without what to call them ("我叫林晓雯，叫我晓雯就行"), is a fact, although
    # "call me ..." alone is a standing wish and so is "我讨厌别人叫我…".
    if NAME.search(text) or _INTRODUCTION.search(text):
        return Kind.FACT
    if INSTRUCTION.search(text):
        return Kind.PREFERENCE
    # "At the offsite we finally agreed on the roadmap": deciding, told with its occasion, is a story.
    if _DECIDED.search(text) and _weak_past(text) and not _switch_with_a_date(text):
        return Kind.EPISODE
    if DECISION.search(text) or _COMMITMENT.search(text) or _PLAN_STATE.search(text):
        return Kind.DECISION
    # Health facts, and access rules stated about a system rather than the user's own habits ("the bastion
    # only accepts keys, never passwords" is how the system is, "I never reuse passwords" a habit).
    if HEALTH.search(text) or (SECURITY.search(text) and not (_FIRST_PERSON.search(text) or REQUEST.search(text))):
        return Kind.FACT
    mood = bool(MOOD.search(text))
    # "今天下雨了，好烦", "我先忙了，晚上聊": said in passing, though something happened; a stated taste
    # still wins ("我宁愿…那样太累了").
    if (mood or AWAY.search(text)) and len(text) <= SHORT and not _likes(text):
        return Kind.TEMPORARY
    if _weak_past(text):
        return Kind.EPISODE
    if _likes(text):
        return Kind.PREFERENCE
    if WEAK_DECISION.search(text):
        return Kind.DECISION
    # A long message that also tells what happened ("Thanks, Mel! ... I shared my own journey and the
    # struggles I had") is kept for the story, not dropped for the thanks, the mood or the question at its end.
    if len(text) > LONG and _narrative(text):
        return Kind.EPISODE
    if mood or REQUEST.search(text) or AWAY.search(text) or ACTIVITY.search(text):
        return Kind.TEMPORARY
    if len(text) <= SHORT and ASIDE.search(text):
        return Kind.TEMPORARY
    if _narrative(text):
        return Kind.EPISODE
    if _terse_wish(text):
        return Kind.PREFERENCE
    return Kind.FACT


def classify(text: str) -> Classification:
    """Kind, salience (`importance`, 0..1), priority, pin and security flag of one utterance, by rules."""
    prepared = _prepare(text)
    pin = _pin_request(prepared)
    request, body = _strip_pin(prepared) if pin else ("", prepared)
    kind = next((named for cue, named in _NAMED_KIND if cue.search(request)), None) or _kind(body)
    temporary = kind is Kind.TEMPORARY
    # A question about passwords is not a secret and an aside about a headache not a medical record.
    health = bool(HEALTH.search(body)) and not temporary
    security = bool(SECURITY.search(body)) and not temporary and not _security_advice(body)
    identity = bool(IDENTITY.search(body) or _INTRODUCTION.search(body)) and not temporary
    importance = BASE_IMPORTANCE[kind]
    if temporary and _is_small_talk(body):
        importance = 0.05  # "ok thanks" is worth nothing later
    importance += 0.3 if pin else 0.0
    importance += 0.3 if health or security else 0.2 if identity else 0.0
    if pin or health or security or identity:
        priority = Priority.P0
    elif temporary:
        priority = Priority.P2
    else:
        priority = Priority.P1
    return Classification(kind, round(min(importance, 1.0), 3), priority, pin, security)


# --- classifiers --------------------------------------------------------------------------------------


@runtime_checkable
class Classifier(Protocol):
    def classify(self, text: str) -> Classification: ...


class RuleClassifier:
    """The rules above: no model, no I/O, the same answer every time."""

    name = "rules"

    def classify(self, text: str) -> Classification:
        return classify(text)


_KINDS = {k.value: k for k in (Kind.FACT, Kind.PREFERENCE, Kind.DECISION, Kind.TEMPORARY, Kind.EPISODE)}


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "false", "no"}:
        return value.strip().lower() in {"true", "yes"}
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def _as_salience(value: Any) -> float | None:
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    # Models asked for 0..1 sometimes answer on a 0..10 or 0..100 scale; the scale is plain from the value.
    for scale in (1, 10, 100):
        if value <= scale:
            return round(float(value) / scale, 3)
    return None


def _as_priority(value: Any) -> Priority | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2:
        return Priority(f"P{value}")
    if isinstance(value, str):
        text = value.strip().upper()
        text = f"P{text}" if text in {"0", "1", "2"} else text
        return Priority(text) if text in {"P0", "P1", "P2"} else None
    return None


class LLMClassifier:
    """Asks a chat model with `prompts.CLASSIFY` and maps its JSON answer to a `Classification`.

    The answer is validated field by field: a missing or invalid salience, priority or pin is replaced by
    the rules' guess, and an answer without a valid kind (no JSON at all, a failing server, a kind outside
    the five) falls back to the rules entirely. A pinned memory is always P0. The security flag is taken
    from the rules unless the answer has a boolean `security`: the prompt does not ask for it, and the
    secret detectors elsewhere key off the same vocabulary.
    """

    def __init__(self, llm: LLM, *, fallback: Classifier | None = None) -> None:
        self.llm = llm
        self.fallback = fallback or RuleClassifier()
        self.name = f"llm:{llm.name}"
        self.fallbacks = 0  # answers that were unusable: the benchmark reports them

    def classify(self, text: str) -> Classification:
        rules = self.fallback.classify(text)
        try:
            answer = complete_json(self.llm, prompts.CLASSIFY, text, max_tokens=128)
        except EbbingError:
            self.fallbacks += 1
            return rules
        raw_kind = answer.get("kind") if isinstance(answer, dict) else None
        kind = _KINDS.get(raw_kind.strip().lower()) if isinstance(raw_kind, str) else None
        if kind is None:
            self.fallbacks += 1
            return rules
        assert isinstance(answer, dict)
        salience = _as_salience(answer.get("salience", answer.get("importance")))
        priority = _as_priority(answer.get("priority"))
        pin = _as_bool(answer.get("pin"))
        security = _as_bool(answer.get("security"))
        pin = rules.pin if pin is None else pin
        return Classification(
            kind=kind,
            importance=rules.importance if salience is None else salience,
            priority=Priority.P0 if pin else priority or rules.priority,
            pin=pin,
            security=rules.security if security is None else security,
        )
