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
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from ebbing.errors import EbbingError
from ebbing.llm import prompts
from ebbing.llm.base import LLM, complete_json
from ebbing.model import Kind, Priority


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


def _rx(*patterns: str) -> re.Pattern[str]:
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
    return re.compile("|".join(parts + others), re.IGNORECASE)


# --- text preparation -------------------------------------------------------------------------------

# Quoted names ('Today in Rust', 「今天也要早睡」) are titles, not statements about today, so cues inside
# them are ignored. An English single quote counts only where it cannot be an apostrophe.
_QUOTED = re.compile(
    r"「[^」]{0,120}」|『[^』]{0,120}』|“[^”]{0,120}”|\"[^\"]{0,120}\"|(?<![\w'])'[^'\n]{1,120}'(?![\w'])"
)
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d\U000e0020-\U000e007f]+"
)


# The rules read this much of a text. What an utterance is shows in its first sentences, and the bound keeps
# a pasted document from costing more than a chat line: every pattern is linear in what it reads.
MAX_CHARS = 3000


# A transcript's speaker label ("Gina: Thanks, Jon!") says who spoke, not what kind of thing was said: read
# without it, or every line of a transcript looks like a statement of fact. Labels that are themselves cues
# ("Important:", "Decision:", "Note:") stay.
_SPEAKER = re.compile(r"^([A-Z][\w'.-]{0,20}(?: [A-Z][\w'.-]{0,20})?)\s*:\s+(?=\S)")
_LABEL_CUES = frozenset({
    "important", "note", "notes", "reminder", "remember", "update", "decision", "decided", "fyi", "todo", "ps",
    "warning", "tip", "rule", "policy", "preference", "fact", "summary", "goal", "task", "plan", "next", "done",
    "q", "a", "question", "answer", "re", "edit", "nb", "caution", "attention", "heads up", "verdict",
    "conclusion", "outcome", "result", "status", "consensus", "final", "bottom line", "takeaway", "action",
    "action item", "lesson", "context", "background", "reason", "why", "problem", "issue", "bug", "fix", "error",
    "idea", "proposal", "change", "correction", "agreed", "agreement", "resolution", "ruling",
    "request", "ask", "instructions", "instruction", "deadline", "due", "meeting", "schedule", "log", "info",
    "p.s", "ps.", "fyi.", "n.b", "remark", "comment", "observation", "finding", "findings", "results",
})


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

# Explicit requests to keep something. Bare "remember" is not one ("I remember that trip", "Remember the
# key is in the safe"): it needs please/always, this/it, or forever/permanently. "记住了" and "记不住" are
# an acknowledgement and a complaint; "别忘了带伞" is a one-off reminder, so "别忘了" pins only before a
# colon or "这"; "睡眠对我很重要" states a value, so "很重要" pins only as "这很重要" or before a colon.
PIN = _rx(
    r"always remember", r"never forget", r"(?:don'?t|do not) (?:ever )?forget (?:this|that|it)",
    r"don'?t forget\s*:", r"remember (?:this|it)", r"(?:please|do|and) (?:always )?remember",
    r"remember\b[^.!?]{0,40}\b(?:forever|permanently|for good)",
    r"(?:note|write|save|keep) (?:this|it) (?:down|in mind)\b", r"make a note of (?:this|it|that)",
    r"this is important", r"important\s*:", r"keep in mind", r"for future reference",
    r"永远记住", r"永久记住", r"一定要记住", r"牢记", r"记住(?![了不])", r"别忘了\s*[:，,这]", r"不要忘[记了]",
    r"千万别忘", r"这很重要", r"这点很重要", r"很重要\s*[:!！]", r"记下来", r"记好了",
)
# The pin request before a colon ("Please always remember: ..."): cut off before the kind is looked for.
_PIN_PREFIX = re.compile(r"^[^:：]{0,60}[:：]\s*")
# "Remember this decision: ..." names the kind itself, and so does a request that says the matter is settled
# ("永远记住，我们已经定了：...", "Remember, we agreed: ...").
_NAMED_KIND = (
    (re.compile(r"\bdecision\b|\b(?:decided|agreed|settled)\b|决定|决策|(?<![一确固稳肯规预约否])定了|敲定|拍板",
                re.IGNORECASE), Kind.DECISION),
    (re.compile(r"\bpreference\b|偏好|喜好", re.IGNORECASE), Kind.PREFERENCE),
)


# The speaker promising to remember ("I'll remember this", "Sure, I will make a note of it", "我会记住的",
# "anything I should keep in mind") is an assistant's reply, not a request to the listener: a pin trigger
# right after such a promise does not pin, unless the text also asks outright ("please remember", "请记住",
# "I want you to remember").
_PROMISE = re.compile(r"(?:\b(?:I|we)(?:'ll|'ve|'d| will| shall| should| can| could| would| must| need to|"
                      r" am going to|'m going to)?"
                      r"|我(?:们)?(?:会|也会|一定会|都会|已经))"
                      r"\s*(?:always |definitely |certainly |surely |make sure to |try to |also )?$", re.IGNORECASE)
_ASKED = re.compile(r"\bplease\b|\bpls\b|\b(?:want|need) you to\b|\byou (?:must|should|need to)\b|请|希望你|你要|你得|"
                    r"麻烦你|帮我", re.IGNORECASE)


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

_ACK_WORDS = (
    "ok", "okay", "okey", "okie", "k", "kk", "thanks", "thank you", "thank u", "thx", "ty", "tysm", "got it",
    "sure", "cool", "nice", "great", "awesome", "perfect", "alright", "all right", "fine", "yes", "yeah",
    "yep", "yup", "no", "nope", "nah", "lol", "lmao", "rofl", "haha", "hahaha", "hehe", "hmm", "hm", "wow",
    "good morning", "good night", "good evening", "good afternoon", "morning", "night", "hi", "hello",
    "hey", "bye", "goodbye", "see you", "see ya", "cya", "sounds good", "sounds great", "np", "no problem",
    "you're welcome", "welcome", "good", "noted", "understood", "right", "exactly", "agreed", "done",
    "a lot", "so much", "very much", "one", "again", "that helped", "makes sense", "oh", "ah", "i see",
    "a bunch", "there", "all", "everyone", "guys", "man", "mate", "dude", "too", "u", "you", "buddy",
    "好", "好的", "好滴", "好嘞", "好吧", "好哒", "收到", "谢谢", "多谢", "谢啦", "谢了", "感谢", "辛苦了",
    "辛苦啦", "辛苦", "嗯", "哦", "噢", "哈", "嘿", "呵呵", "行", "行吧", "可以", "明白", "明白了", "知道了",
    "懂了", "了解", "晚安", "早安", "早上好", "早", "午安", "在吗", "在不在", "来了", "拜拜", "再见", "没问题",
    "对", "对的", "是的", "不是", "不用", "没事", "牛", "厉害", "棒", "赞", "好耶", "ok的", "嗯嗯", "哈哈",
    "谢谢你", "谢谢您", "你好", "您好", "大家好", "哈喽", "嗨", "早啊", "晚上好", "下午好", "中午好",
    "好的呢", "ok了", "没关系", "不客气", "了解了", "好主意", "太好了", "真棒", "妥", "妥了", "安排",
    "you're a lifesaver", "lifesaver", "you rock", "you're the best", "you're awesome", "legend", "amazing",
    "brilliant", "帮大忙了", "帮了大忙", "太感谢了", "感谢感谢",
    # fillers and "it works now" after a fix
    "now", "then", "indeed", "true", "fair", "fair enough", "of course", "ofc", "dokie", "dokey", "okie dokie",
    "okey dokey", "roger", "roger that", "copy", "copy that", "will do", "on it", "all good", "no worries",
    "that worked", "it worked", "that works", "it works", "works now", "works", "that did it", "that fixed it",
    "fixed it", "problem solved", "solved", "makes sense now", "got it now", "oh i see", "i see now", "oops",
    "whoops", "omg", "oh my", "yay", "woohoo", "neat", "sweet", "love it", "love that", "bless you", "cheers",
    "嘿嘿", "嘻嘻", "好叭", "好滴呀", "可以的", "行的", "成", "没毛病", "搞定", "搞定了", "好了", "可以了",
    "that makes sense", "that's fine", "that's great", "that's perfect", "that's it", "that's right", "that's ok",
    "it's fine", "it's ok", "all set", "i'm good", "i'm fine", "i'm ok", "i'm okay", "we're good", "ha",
    "fair point", "good point", "true that", "good call", "good to know", "nice one", "my bad", "sorry",
    "笑死", "笑死我了", "绝了", "离谱", "无语", "无语了", "啊这", "好家伙", "牛啊", "牛哇", "原来如此", "懂了懂了",
    "有道理", "说得对", "说的对", "对哦", "也是", "确实", "原来是这样", "不好意思", "抱歉", "sorry啊",
    # Go-aheads and shrugs: permission or indifference about the matter at hand ("Sure, go ahead", "随便吧，都行").
    "go ahead", "go for it", "sure thing", "please do", "feel free", "by all means", "why not", "works for me",
    "sounds like a plan", "whatever works", "either is fine", "either works", "up to you", "your call",
    "随便", "随便吧", "都行", "都可以", "都行吧", "无所谓", "你定", "你决定", "听你的", "看你", "看你的", "也行",
    "还行", "这也行", "这都行", "也可以", "嗯哼", "嗯呐",
    # Short answers, wishes and progress notes with nothing to keep ("not sure", "good luck", "差不多了").
    "not yet", "no idea", "not sure", "not really", "maybe", "probably", "i guess", "idk", "dunno", "no clue",
    "same", "same here", "me too", "+1", "good luck", "congrats", "congratulations", "well done", "happy new year",
    "happy birthday", "happy holidays", "merry christmas", "back to work", "almost done", "almost there",
    "nearly done", "nearly there", "back", "i'm back", "back again", "good catch", "nice catch", "good find",
    "well spotted", "just checking in", "checking in", "just saying", "just wondering", "just curious",
    "one more thing", "one last thing", "one more question", "quick question", "another question",
    "next question", "moving on", "anyway", "anyways",
    "睡了", "睡了睡了", "去睡了", "你猜", "我知道了", "发错了", "打错了", "说错了", "看错了", "先这样", "那先这样",
    "先这样吧", "那就先这样", "就先这样", "加油", "新年快乐", "生日快乐", "节日快乐", "恭喜", "恭喜恭喜", "还没",
    "还没有", "你说得对", "你说的对", "快到了", "到了", "我到了", "不知道", "不确定", "不清楚", "可能吧", "也许吧",
    "差不多了", "快好了", "同上", "我也是", "同意",
    # Forms of address that close a thank-you or an ok ("多谢老哥", "thanks man").
    "老哥", "兄弟", "哥们", "哥们儿", "老铁", "大佬", "大哥", "老弟", "姐妹", "宝子", "亲",
)
_ACK_WORD = "|".join(sorted((re.escape(w) for w in _ACK_WORDS), key=len, reverse=True))
# Atomic groups and possessive repeats: each piece is taken whole or not at all, so a long run of "哈" or
# "h" followed by a word cannot make the engine try every way of cutting the run into pieces.
ACKNOWLEDGEMENT = re.compile(
    rf"^(?:(?>(?:{_ACK_WORD})(?![a-z]))|[哈嗯哦啊呀嘿嘻呵呜唔~～]++|\d{{3}}|h{{2,}}+|(?:ha){{2,}}+h?|(?:he){{2,}}+|"
    r"x++d++|lo++l++|lmf?a++o++|[\s.,!?。，！？、~～…:：;；()（）\-]++)*+$",
    re.IGNORECASE,
)
# "帮我…", "麻烦你…", "把上面的表格…": requests about this conversation, however they go on.
ERRAND = re.compile(
    r"^(?:麻烦|请|能不能|能否|可以|可不可以)?(?:你|您)?帮(?:我|忙)"
    r"|^(?:请|麻烦)?把(?:上面|刚才|刚刚|这段|那段|下面|以上|这篇|那篇|这句|这封|这份)"
)


def _is_small_talk(text: str) -> bool:
    bare = _EMOJI.sub("", text)
    return not bare.strip() or bool(ACKNOWLEDGEMENT.match(bare))


# --- time ---------------------------------------------------------------------------------------------

_DAY = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTH = r"january|february|march|april|may|june|july|august|september|october|november|december"
_SEASON = r"summer|winter|spring|autumn|fall"
# Times that are over by themselves: a sentence anchored there tells a story.
PAST_ANCHOR = _rx(
    r"yesterday", rf"last (?:night|week|weekend|month|year|time|quarter|sprint|christmas|easter|{_SEASON}|{_DAY}|"
    rf"{_MONTH})", r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|several|many|\d+) "
    r"(?:\w+ )?(?:minutes?|hours?|days?|weeks?|months?|years?|decades?) ago", r"ages ago", r"long ago",
    # "back in 2019", "back in college"; "back in an hour" is a promise.
    r"back in(?! (?:an?|a few|a couple of|\d+|one|two|three|five|ten|fifteen|twenty|thirty|half an?) "
    r"(?:\w+ )?(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|moments?|bit|jiffy|days?|weeks?|tick)|"
    r" \d{1,2}\s*[.!]*\s*$)",
    r"earlier today", r"earlier this (?:week|month|year|morning|afternoon)", r"the other day",
    r"this past (?:week|weekend|month|year)",
    r"as an? (?:kid|child|teenager|teen|student|boy|girl|toddler|undergrad)",
    r"when (?:I|we|he|she|they) (?:was|were) (?:an? )?(?:\d+|kids?|child|children|young|little|small|students?|"
    r"teenagers?|teens?|in|at|still)",
    r"at (?:the )?age (?:of )?\d+", r"^at \d{1,2}(?:,| I| we| my| he| she)",
    r"昨天", r"昨晚", r"昨日", r"前天", r"前几天", r"前两天", r"前些天", r"前些日子", r"前阵子", r"前段时间",
    r"上周", r"上星期", r"上礼拜", r"上个?月", r"上个?季度", r"上半年", r"去年", r"前年", r"那年", r"那次",
    r"当年", r"小时候", r"刚毕业",
    r"(?:大学|小学|初中|高中|中学|上学|读书|念书|读研|读博)(?:的?时候|时(?![间候])|那会儿?)",
    r"(?:\d+|[一二两三四五六七八九十]+)岁(?:那年|的时候|时)", r"(?:以前|之前)有一次", r"上次", r"上回",
    r"[\d一二两三四五六七八九十几多]+个?(?:年|月|天|周|星期|礼拜|小时)以?前", r"很久以前", r"多年前",
)
# Times that make a story only with a completed action: "this morning I missed my train" is an episode,
# "kinda grumpy this morning" a mood; "周一客户突然要改需求" happened, "周一开会" is a plan.
WEAK_ANCHOR = _rx(
    r"this (?:morning|afternoon|evening)", r"today", r"tonight", r"just now", rf"on (?:{_DAY})",
    rf"(?:in|on|during|since) (?:early |late |mid-?)?(?:{_MONTH})", r"on the \d{1,2}(?:st|nd|rd|th)",
    r"over (?:christmas|easter|the (?:weekend|holidays?|summer|break))", r"during (?:the|our|my)",
    r"when (?:we|I|they|he|she)",
    r"at the (?:meetup|conference|party|wedding|meeting|airport|offsite|off-site|retro|standup|all-hands|"
    r"workshop|dinner|interview|reunion|funeral|game|concert|hackathon|kickoff|launch)",
    r"今天(?:早上|上午|下午|中午|晚上)?", r"今早", r"刚才", r"刚刚", r"(?:周|星期|礼拜)[一二三四五六日天]",
    r"[一二三四五六七八九十]{1,2}月份?", r"\d{1,2}\s*月", r"国庆", r"春节", r"过年", r"元旦", r"中秋", r"期间",
    r"的时候", r"那天", r"当时", r"第一次", r"双十一", r"暑假", r"寒假", r"周末", r"上午", r"下午", r"晚上",
)
# A year as a time ("in 2019", "June 2019", "2018 年"), not as a label ("a 2016 Honda", "2016款").
_YEAR = re.compile(
    rf"\b(?:in|during|around|of|by|from|until|{_MONTH}|{_SEASON})\s+((?:19|20)\d\d)\b"
    r"|(?<!\d)((?:19|20)\d\d)\s*年(?![级代款])",
    re.IGNORECASE,
)
# Birth dates, expiry dates and background told as "我是 2015 年入职的" (when something began, not a story).
_NOT_A_STORY = re.compile(r"出生|生日|expires?|until|valid|born|是[^，。,]{0,6}年[^，。,]{0,8}的", re.IGNORECASE)
# English completed actions: common irregular pasts, and -ed words that are not adjectives ("tired") and
# not passives or states ("is rotated", "I'm married"): see `_past_verb`.
_IRREGULAR_PAST = (
    "went came took got gave made ran met saw told said lost won broke fell left spent found felt bought sold "
    "paid sent built caught drove flew ate drank wrote thought brought began forgot hit sat stood woke wore "
    "chose became held heard knew led rode rang sang slept spoke stole swam taught threw understood had did "
    "was were died crashed"
).split()
# Simple pasts that are no participles: "the landlord came by" is an event, "a site hosted by Netlify" is not.
_PURE_PAST = set(
    "went came ran saw ate drank flew drove wrote began forgot woke wore chose became rode rang sang spoke stole "
    "swam threw broke fell gave took knew was were did".split()
)
_PARTICIPLE = "|".join(v for v in _IRREGULAR_PAST if v not in _PURE_PAST)
_PAST = re.compile(
    rf"(?<![\w-])(?:(?:{'|'.join(sorted(_PURE_PAST))})|(?:{_PARTICIPLE}|[a-z]{{3,}}ed)(?!\S*\s+by\b))(?![\w-])",
    re.IGNORECASE,
)
_NOT_A_VERB = _rx(
    "need", "speed", "seed", "feed", "breed", "bed", "red", "shed", "indeed", "based", "used", "tired", "bored",
    "interested", "married", "excited", "worried", "scared", "related", "advanced", "limited", "detailed",
    "beloved", "naked", "wicked", "sacred", "hundred", "kindred", "talented", "skilled", "experienced",
    "dedicated", "unlimited", "unrelated",
)
# Participles that mostly describe ("a podcast called X", "hosted on Netlify"): verbs only next to a time.
_DESCRIPTIVE = _rx(
    "allowed", "required", "called", "named", "located", "hosted", "managed", "enabled", "disabled",
    "preferred", "automated", "registered", "built", "made", "left",
)
_PASSIVE_OR_STATE = re.compile(
    r"\b(?:is|are|am|be|been|being|'s|'re|'m|get|gets|getting|has|have|'ve|not|n't|to)\s+(?:\w+ly\s+)?$",
    re.IGNORECASE,
)
# Biography ("was born in", "grew up in", "used to") is what the labels call a fact.
_BIOGRAPHY = _rx(r"was born", r"were born", r"born in", r"grew up", r"used to",
                 r"(?:was|were) (?:founded|established|incorporated|built)")
# Completed actions in Chinese: a verb with 了 (not 为了/除了/算了/好了) or 过 (not 过来/过去/过敏), or
# an event that "suddenly" happened.
_ZH_DONE = re.compile(
    r"(?<![为除算好罢])了(?![吗吧呢])|[\u4e00-\u9fff]过(?![来去敏])|突然|结果|后来|最后|差点"
    r"|没(?!有|事|问题|关系|什么|啥|法|想到|空|错)(?=[\u4e00-\u9fff])"  # "春节我们没回老家": what did not happen
)
_ZH_FUTURE = re.compile(r"打算|计划|准备|要去|将要|将会|会去|下周|下个月|明年|明天|以后|下次|下季度")
_EN_FUTURE = _rx(r"will", r"'ll", r"going to", r"gonna",
rf"next (?:week|month|year|quarter|time|sprint|semester|{_SEASON}|{_DAY}|{_MONTH})",
                 r"tomorrow",
                 r"plan(?:ning)? to", r"starting", r"from now on")
# An English narrative without a date: "Our Q2 planning meeting ran three hours over". After a pronoun the
# -ed word is a verb; after a noun it may describe the next one ("writes compressed snapshots", "the job
# exports archived invoices", "a crowded bus"), so there it counts only before a preposition, an adverb, an
# object pronoun or a determiner ("a typhoon cancelled our flight", "writes failed for 40 minutes") or at a
# clause end.
_STORY_VERB = "|".join(v for v in _IRREGULAR_PAST if v not in {"was", "were", "had", "did"})
_STORY_ADVERB = r"(?:just |finally |suddenly |accidentally |actually |never |also |eventually )?"
_AFTER_A_VERB = (
    r"(?=\s+(?:to|for|on|in|at|up|out|off|down|back|over|away|with|from|into|about|after|before|around|through|"
    r"again|twice|once|together|home|last|yesterday|\d+|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"several|many|half|\w+ly|me|us|him|her|them|it|everything|nothing|our|my|his|"
    r"their|its|your|the|a|an|this|that)\b|\s*(?:[,.;:!?]|$))"
)
_FUNCTION_WORD = (
    r"a|an|the|every|each|any|some|no|very|more|most|less|too|so|is|are|was|were|be|been|being|of|with|to|for|"
    r"in|on|at|by|from|and|or|but|not|well|all"
)
_NARRATIVE = re.compile(
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


# A change of habit or supplier told with its date is still a change: "I switched from Spotify to Apple Music
# last week", "上个月把套餐换成了联通的". One clause only: a longer story around it is an episode.
_SWITCHED = _rx(
    r"switched (?:\w+ ){0,4}(?:from|to|over)", r"changed (?:\w+ ){0,3}(?:from|to)", r"换成了?", r"改成了?",
    r"改用了?", r"换到了?",
    r"(?<![交兑转替轮])换了(?![\d一二两三四五六七八九十几好]+\s*(?:个|次|任|届|批|轮))",
)
_MORE_THAN_ONE_CLAUSE = re.compile(r"[,，;；:：—]|\b(?:and|but|because|so|when|after|before|until|then)\b", re.I)


def _switch_with_a_date(text: str) -> bool:
    return bool(_SWITCHED.search(text)) and not _MORE_THAN_ONE_CLAUSE.search(text)


# A change of the user's standing state, told with when it happened ("I moved last week. My new address is ...",
# "we switched to Linear last sprint", "上周搬家了，新地址是…"): what it leaves true is a fact, not a story.
_CHANGED_TO = _rx(
    r"(?:switched|changed|migrated|upgraded) (?:\w+ ){0,3}(?:to|over to)",
    r"(?:my|our) new \w+(?: \w+)? (?:is|are)", r"(?:i'm|i am|we're|we are) now", r"(?:now|currently) (?:at|in|with|on)",
    r"换成", r"改成", r"新(?:的)?(?:地址|号码|手机号|电话|邮箱|工作|公司)", r"现在(?:在|住|用|是)",
)


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

# How the assistant should talk to, write for or treat the user: a lasting preference, though it is
# phrased as an order (as opposed to "Write a haiku", a one-off request).
INSTRUCTION = _rx(
    r"(?:please |pls )?(?:always|never) (?:answer|reply|respond|write|use|call|address|give|show|send|suggest|"
    r"recommend|include|add|format|explain|start|keep)",
    r"(?:answer|reply|respond|talk|write|speak) (?:to me )?in (?:english|chinese|mandarin|french|german|spanish|"
    r"japanese|plain|simple|short|bullet)",
    r"when(?:ever)? you (?:explain|answer|reply|respond|write|show|give|suggest|recommend|summari[sz]e|compare|"
    r"list|describe|review|present|format|translate|cite|quote|draft|plan|book|schedule|pick|choose|refer|talk|"
    r"mention|send|propose|outline|walk me|teach|quiz|correct|edit|rewrite|proofread)",
    # Conditions on the user's own turns are standing rules: "... when I ask about finance", "only if I ask".
    r"(?:when(?:ever)?|if|unless|every time|each time|any time|anytime) I (?:ask|write|send|message|mention|"
    r"share|paste|type|talk|bring up|say)",
    r"^(?:please )?keep (?:your |the |my |all |any |it |things )?(?:answers|replies|responses|explanations|"
    r"summaries|messages|emails|code|comments|examples|tone|it|things)\b",
    r"when \w+ing\b[^,.]{0,30}\bfor me", r"in general,? (?:give|tell|show|answer|keep)",
    r"^(?:please )?(?:give|send|show|tell) me [^.]{1,40}(?:,\s*not\b|\binstead\b)",
    r"(?:don't|do not|never) (?:ever )?(?:call me|use emojis?|recommend|suggest|send me|give me|remind me)",
    r"(?:don't|do not|never) (?:book|schedule|ping|call|message|email|text|wake|bother|disturb) me",
    r"(?:don't|do not|never) (?:ever )?(?:book|schedule|plan|arrange|set up|put)\b[^.]{0,30}\bfor me\b",
    r"(?:get|cut) (?:straight )?to the (?:point|chase)",
    r"skip (?:the|all the|any) (?:pleasantries|small talk|intro|introductions?|preamble|fluff|theory|history|jargon)",
    r"^please (?:use|avoid|stick to|keep|don't|do not|never)\b", r"(?:^|,\s*|please )avoid\b",
    r"give me [^.]{1,40}\bfirst\b", r"I'?d (?:love|like|prefer|appreciate) it if you",
    r"(?:please|just|you can|you may) call me", r"^call me",
    r"(?:I want|I'd like|I would like) (?:all |every |my |your |you to always |answers|responses|replies|dates|"
    r"numbers|code)",
    r"be (?:blunt|direct|honest|brief|concise|straight|gentle|patient) with me",
    r"(?:your|the) (?:answers|replies|responses|explanations|summaries|tone)\b",
    r"(?:write|talk|speak|explain) (?:to|for) me", r"(?:you write|you send|you draft|you suggest|you recommend)",
    r"(?:in|for) my (?:emails?|messages?|docs|documents|code|reports?|slides|notes)",
    r"(?:请|以后|今后)?(?:一直|总是|始终|永远|都|统一)用(?:中文|英文|英语|简体|繁体|普通话)",
    r"用(?:中文|英文|英语)回复", r"(?:回答|回复|答复|解释|总结)(?:里|中|时|的时候)",
    r"(?:回答|回复|答复|解释|总结)[^。！!？?]{0,8}(?:请|尽量|不要|别|一律|统一|都)",
    r"(?:文档|代码|回复|回答|邮件|报告|注释|总结|翻译)[^。，,]{0,10}请", r"请(?:用|尽量|不要|别|少|多|始终|一直|务必)",
    r"(?:别|不要|不用)(?:给我|跟我|向我|再给我)(?:推荐|推|发|讲|说)",
    r"给我(?:发|写|推|做|整理|准备|推荐)?的[^。]{0,12}(?:别|不要|一律|都用|请用|统一|尽量)",
    r"(?:别|不要|不用)(?:安排|打扰|约|找|叫|打电话给|发消息给)",
    r"(?:别|不要)(?:给我)?(?:发|打)(?:语音|视频|电话)", r"(?:请|你|就|以后|直接|可以)(?:叫我|称呼我)",
    r"^(?:叫我|称呼我)", r"(?:跟|和|对|给)我(?:说话|聊天|讲话|沟通|解释|写|讨论|介绍)",
    r"(?:讲|解释|说|写|回答|回复|答复|汇报|介绍|教)[^。，,]{0,6}的时候", r"(?:推荐|安排|订|规划|选)[^。，,]{0,8}的时候",
    r"优先(?:考虑|选|推荐|用|安排)",
    # The style of the answers: "short answers please, no fluff", "no jargon".
    r"no (?:fluff|filler|jargon|small talk|preamble|waffle|pleasantries|disclaimers|emojis?|padding)\b",
)
_LIKE_ADVERBS = (
    r"really|just|much|absolutely|do|don't|do not|kind of|kinda|totally|also|still|generally|mostly|actually|"
    r"truly|honestly|genuinely|definitely|secretly|quite|usually|always|never|tend to|have always|'ve always"
)
# ", never coffee" states a taste; ", never thought of it that way" is a remark.
_PAST_FORM = "|".join(_IRREGULAR_PAST)
# Phrasal verbs that can open "X over Y" without it being a choice between X and Y.
_NOT_A_CHOICE = r"hand|take|come|go|turn|look|think|get|move|switch|roll|run|pass|fall|keep|start|pull|put|hold|" \
                r"win|won|it|that|this|game"
PREFERENCE = _rx(
    rf"I (?:(?:{_LIKE_ADVERBS}) )*(?:prefer|like|love|enjoy|hate|dislike|adore|detest|loathe|fancy)",
    r"I (?:can't|cannot|can not) stand", r"I'?d (?:much )?rather", r"I would (?:much )?rather", r"rather than",
    r"I (?:don't|do not|never) (?:really )?(?:like|enjoy|eat|drink|smoke|watch|want|care for|do)",
    r"I (?:usually|always|normally|typically|generally|tend to|never|rarely|mostly|only)", r"I want (?!to\b)",
    r"I'?d prefer", r"not (?:a|the|much of a) (?:big |huge )?fan of", r"I'm (?:a |such a |a big |a huge )?fan of",
    r"big fan of", r"(?:not )?big on", r"I'm (?:(?:really|so|very|totally|not|big|also|just) )*into\b",
    r"(?:my|the) favou?rite", r"my go-?to", r"(?:is|are) my (?:weakness|thing|jam|favou?rite)",
    r"works? (?:way |much |a lot )?better for me", r"better for me", r"I work best", r"my best work",
    r"my most productive", r"I (?:find|think) \w+ (?:easier|better|nicer)", r"helps? me (?:focus|relax|sleep|"
    r"think|concentrate|unwind|wake up|fall asleep|wind down|calm down|get going|stay focused|switch off)",
    r"I find (?:\w+ ){1,3}(?:much |way |a lot |far |so |really )?(?:easier|better|nicer|harder|clearer|"
    r"more (?:readable|comfortable|relaxing|fun|useful)|annoying|boring|relaxing|soothing|calming|distracting)",
    r"(?:is|are|'s) (?:what|all|the only thing) I (?:ever |usually |always |really )?(?:drink|eat|use|wear|"
    r"listen to|read|watch|order|buy|play|cook)", r"makes? me (?:anxious|nervous|happy|uncomfortable|sick)",
    # What things do to the user: "bright offices make me so much more productive", "morning runs clear my head".
    r"makes? me (?:so |much |way |a lot |far |really )*(?:more|less|feel|happier|calmer|sleepy|sleepier|hungry|"
    r"productive|focused|relaxed|tired|miserable|cranky)\b",
    r"(?:clears?|calms?|relax(?:es)?|energi[sz]es?|motivates?|inspires?|soothes?|bores?|stresses?) (?:me|my (?:head|"
    r"mind|nerves))\b",
    r"the \w+er the better", r"how I roll", r"nothing beats", r"can't beat", r"there's nothing like",
    r"(?:can't|cannot) get enough", r"no contest", r"I'?m (?:a )?(?:vegetarian|vegan|pescatarian)",
    r"I'm (?:not )?a (?:morning|night) person", r"I'm an? \w+ person", r"night owl",
    r"more of an? (?:\w+ ){1,2}?(?:person|drinker|fan|type|reader|eater|guy|girl)\b",
    r"early bird", r"(?:is|are) for \w+(?: \w+)?,? (?:not|no)\b", r"if (?:at all )?possible",
    r"^[^,.;]{1,40},\s*please\b", r",\s*ever\s*[.!]?\s*$",
    # ", always" and ", never coffee" state a taste, unless the sentence is about a thing ("Our API only returns
    # JSON, never XML") or the words after "never" are a remark ("never thought of it that way").
    r"^(?!(?:the|our|their|its|his|her|all|every|each|this|that)\b)[^.;]*,\s*(?:always|never (?!mind\b|(?:"
    + _PAST_FORM + r"|been|seen|heard|[a-z]+ed)\b)\w+)\b",
    r"(?:every time|any day|all day long)\s*[.!]?\s*$", rf"^(?!(?:{_NOT_A_CHOICE})\b)\w+(?: \w+)? over \w+",
    r"我?(?:很|最|比较|更|特别|挺|还是|一向|真的|超)?(?:喜欢|爱吃|爱喝|爱看|爱玩|爱听)", r"不喜欢", r"不爱",
    r"偏好", r"偏向", r"偏爱", r"更愿意", r"宁愿", r"宁可", r"讨厌", r"受不了", r"接受不了", r"忍不了", r"受够",
    r"更倾向", r"倾向于", r"习惯", r"一向", r"我一般", r"一般(?:都|不|会|去|用|喝|吃|看|只|先|是)", r"平时",
    r"通常", r"总是", r"基本只", r"只(?:看|喝|吃|听|穿|用|买|坐|住|选|订|认)", r"不吃", r"不喝", r"不抽",
    r"(?:很少|从不|从来不|几乎不)(?:喝|吃|看|用|去|玩|穿|坐|点)", r"不(?:太|怎么|大)?能(?:吃|喝)", r"(?:吃|喝)不了",
    r"(?:吃|喝|用|看|听|住|穿)不惯", r"不想(?:坐|吃|喝|用|去)", r"没(?:什么|啥|太大|多大)?兴趣", r"感兴趣",
    r"才是正道", r"更舒服", r"更有感觉", r"比起", r"比[^。，,]{1,12}(?:多了|得多)", r"觉得[^。，,]{0,20}(?:更|比较)",
    r"才(?:好吃|好喝|好看|好听|舒服|对味|过瘾)", r"好吃", r"好喝", r"最(?:好|棒|香)的", r"最爱", r"口味",
    r"顺手", r"直接[^。]{0,10}就(?:好|行|可以)", r"尽量", r"我更容易", r"夜猫子",
    r"(?:does|do) (?:nothing|it|wonders) for me", r"that's (?:just )?my (?:rule|thing|style|way)",
    # Verdicts said of oneself: "a hard no for me", "not my cup of tea", "drives me crazy", "easiest for me".
    r"for me\s*[.!]?\s*$", r"(?:a )?(?:hard|firm|big) (?:no|pass|yes)\b", r"deal-?breakers?", r"no-go",
    r"(?:is|are|'s|'re) (?:just )?not for me", r"(?:a )?must(?:-have)? for me", r"(?:not )?my cup of tea",
    r"(?:is|are|'s|'re) (?:just )?my (?:comfort food|guilty pleasure|happy place|kind of \w+|type|style|scene|vibe)",
    r"(?:isn't|aren't|is not|are not|not) (?:really |just |exactly )?my (?:thing|scene|style|type|vibe|jam|kind of)",
    r"that's (?:just )?my (?:routine|habit|ritual|jam|vibe|preference|default|style)",
    r"my (?:\w+ )?(?:routine|ritual)\s*[.!]?\s*$",
    r"(?:easiest|easier|clearer|clearest|simplest|simpler|nicer|nicest|quicker|faster|more comfortable|"
    r"most comfortable|more readable) for me",
    r"(?:is|are) a (?:pain|nightmare|drag|chore|joy|treat) (?:to|for me)", r"(?:tastes?|smells?) [^.,;]{1,30} to me",
    r"feels? (?:\w+ )?(?:better|nicer|worse) than", r"hands down", r"(?:any|every) (?:day|time) of the week",
    r"(?:a|such a) sucker for", r"(?:can't|cannot|could never) (?:live|do|function) without", r"I swear by",
    r"(?:I'm|I am) (?:obsessed with|hooked on|addicted to|picky about)",
    r"(?:drives?|driving) me (?:crazy|nuts|mad|insane|bonkers|up the wall|round the bend)",
    r"gets? on my nerves", r"(?:bugs?|annoys?|irritates?|frustrates?|grosses|freaks) me\b", r"(?:puts|turns) me off",
    r"(?:kills?|ruins?|wrecks?|boosts?) my (?:productivity|focus|mood|day|sleep|concentration|appetite)",
    r"I'?d (?:pick|choose|take|go for) (?:\w+ ){1,4}over\b", r"just (?:text|email|message|ping|dm|slack) me",
    # How the user works best: "I can't focus in open offices", "I'm more productive with music on".
    r"I (?:can't|cannot|can never) (?:focus|sleep|work|concentrate|think|relax|function)",
    r"I (?:focus|sleep|think|work|concentrate|do) (?:much |way |a lot |far )?(?:better|best)",
    r"my most (?:productive|focused|creative)",
    r"I'm (?:more|most|less|much more) (?:productive|focused|creative|comfortable|relaxed) (?:with|when|in|at|if)",
    r"I'm (?:happiest|most relaxed|most comfortable|at my best)",
    r"不(?:太|怎么|大|咋|常|爱)(?:吃|喝|抽|看|用|玩|听|穿|去|坐|喜欢|习惯|碰|感冒)", r"(?:吃|喝)不下",
    r"(?:看|听)不下去",
    r"(?:吃|喝)[^，。,]{0,4}不太?行", r"不加(?:糖|奶|冰|辣|葱|香菜)", r"我(?:吃|喝|用|穿|睡|看|听)[^，。,]{0,6}"
    r"(?:一定要|必须|非得|都要|总要)", r"(?:最|特别|真)怕", r"(?<![恐哪不])怕(?:冷|热|辣|吵|晒|麻烦|疼|黑|狗|虫)",
    r"能不[^，。,]{1,6}就不", r"离不开", r"(?:是|算)我的(?:最爱|菜|命)", r"不是我的菜",
    # "开会烦死了" is a verdict on meetings; "烦死了，又堵车" and "我烦死了" are moods.
    r"(?<=[^\s，,。！!？?我])(?:烦|讨厌|受不了)死了",
    r"我是[^，。,！!]{1,6}[党派]", r"我是[^，。,！!]{0,8}(?:控|迷|粉|依赖者|爱好者|发烧友)(?=\s*[，。,！!]|\s*$)",
    # Wishes about form: "数字最好用阿拉伯数字", "要是能附上出处，我会更放心", "美式就好".
    r"最好(?:用|别|不要|能|都|每|是|加|附|标|写|给|带|先|少|多|直接|简短|控制)",
    r"(?:我会|会让我)(?:更|比较)?(?:放心|安心|舒服|开心|满意|踏实|省心)", r"(?:要是|如果|假如)能[^。]{0,30}"
    r"(?:就好|更好|会更|最好)", r"(?:(?!你|一下|再)[^，。,！!？?]){1,10}就(?:好|行|可以)了?(?=\s*[，。,！!]|\s*$)",
    r"有事(?:直接|请|就|先)",
)
# Tastes said without "I like" or "我喜欢" (the second held-out set showed them falling through to "fact"). Each
# table is one way of stating a taste; `_likes` reads them all together with PREFERENCE.

# Verdicts on things: "X is overrated", "morning meetings are the worst", "a waste of perfectly good chips",
# "pineapple on pizza is a crime", "noise-cancelling headphones are a lifesaver", "cats > dogs".
_VERDICT = _rx(
    r"(?:is|are|'s|'re) (?:\w+ly |just |simply |so |by far |easily )?(?:overrated|underrated|overhyped|"
    r"(?:a|an|such a|a total|a complete|an absolute|a huge|a criminal) waste of)\b",
    r"(?:is|are|'s|'re) (?:\w+ly |just |simply |by far |easily )?the (?:worst|best)(?=\s*(?:[.!,;:—–-]|$|for me\b|"
    r"thing\b|part\b|ever\b))",
    r"(?:worst|best|ideal|perfect|work best|works best) for me\b",
    r"(?:is|are) (?:\w+ly )?(?:a crime|a sin|criminal|non-negotiable|a must|the way to go|overkill|unbearable)\b",
    r"(?:is|are) (?:a |an |such a |an absolute )?(?:lifesaver|godsend|game[- ]changer|must-have|life-changer)\b",
    r"(?:is|are) (?:just )?(?:perfect|ideal) for\b", r"(?:is|are|'s) (?:way |much |far |a lot |so much )?(?:better|"
    r"worse|nicer) than\b", r"works (?:much |way |far )?better\b",
    r"(?:looks?|sounds?|tastes?|feels?|reads?|smells?) (?:so |way |a lot |much |far )*(?:better|nicer|worse|"
    r"cleaner|prettier|uglier)\b", r"(?:feels?|looks?|sounds?|seems?) [^.,;]{1,30} to me\b",
    r"favou?rites?", r"pet peeves?", r"my idea of (?:a |an )?(?:perfect|good|great|fun|ideal|heaven|hell)\b",
    r"my (?:best|favou?rite|preferred|ideal) (?:time|day|place|way|spot|season)\b", r"\bbeats (?:everything|"
    r"anything|all|any)\b", r"(?<=[A-Za-z\u4e00-\u9fff])\s*>+\s*(?=[A-Za-z\u4e00-\u9fff])",
    # "甜豆腐脑才是正宗的", "开车听播客最舒服", "辣的越辣越好", "还是纸质书好".
    r"才是(?:正道|正宗|王道|真爱|最好|最棒|灵魂|精髓|对的|yyds)",
    r"最(?:舒服|惬意|享受|过瘾|安心|放松|合适|顺手)(?!的时候)",
    r"越[^，。,；;]{1,6}越(?:好|棒|香|过瘾|舒服|爽)", r"还是(?!不|没)[^，。,；;！!？?]{1,10}(?:比较|更)?"
    r"(?:好|香|舒服|靠谱|方便|顺手|踏实)(?:吃|喝|看|用|听|穿)?(?:一些|一点|点)?\s*[。!！~～]?\s*$",
)
# What things do to the user: "bright offices make me more productive", "morning runs clear my head", "long
# meetings drain me", "I get cranky if I skip breakfast", "周末不想被打扰".
_EFFECT_ON_ME = _rx(
    r"makes? me (?:so |much |way |a lot |far |really )*(?:more|less|feel|happier|calmer|sleepy|sleepier|hungry|"
    r"productive|focused|relaxed|tired|miserable|cranky)\b",
    r"(?:clears?|calms?|relax(?:es)?|energi[sz]es?|motivates?|inspires?|soothes?|bores?|stresses?) (?:me|my (?:head|"
    r"mind|nerves))\b",
    r"(?:drains?|exhaust|exhausts|energi[sz]es?|recharges?) me\b", r"(?:wears?|stress(?:es)?) me out\b",
    r"puts? me to sleep", r"keeps? me (?:awake|up|going|sane|focused)", r"suits? me (?:better|best|fine|well|"
    r"perfectly)\b", r"I'm (?:much |a lot |far |way )?(?:happier|calmer|better off) (?:with|when|in|at|if|without)\b",
    r"I get (?:so |really |pretty |super )?(?:cranky|grumpy|anxious|nervous|bored|restless|hangry|carsick|seasick)"
    r" (?:if|when|without|after|on|in)\b",
    r"不(?:想|喜欢|希望|愿意)被", r"I (?:hate|dislike|can't stand|don't like|do not like) being\b",
)
# Leanings, refusals and tolerances: "I gravitate toward sci-fi", "I avoid flying", "Vim keybindings or nothing",
# "I won't touch anything with mayo", "芹菜一口都不碰", "fish is fine, but no shellfish please", "I don't mind".
_LEANING = _rx(
    r"I (?:\w+ly )?(?:gravitate|lean|veer) (?:toward|towards|to)\b", r"I (?:\w+ly )?(?:avoid|steer clear of|"
    r"stay away from|shy away from|stick to|favou?r)\b", r"^prefer\b", r"(?:a )?stickler for",
    r"I'm (?:all|big|really) about\b", r"I'm not (?:great|good|big|the best) (?:with|at)\b",
    r"\bor (?:nothing|bust|go home|I walk|I'm out|don't bother)\s*[.!]?\s*$",
    r"I (?:won't|wouldn't|never|don't|do not) (?:ever )?touch\b", r"(?<![别请])不(?:碰|沾)(?![到上了过着])",
    r"(?:is|are|'s) (?:fine|ok|okay|great)\b[^.;]{0,20}\bbut\b", r"\bno \w+ please\b",
    r"(?:is|are|'s|'re) (?:fine|ok|okay|great) (?:anytime|any time|whenever|by me|with me)\b",
    r"I (?:don't|do not|wouldn't|would not) mind\b",
    r"I (?:just |really |honestly |simply )?(?:can't|cannot) do\b(?! (?:it|that|this|anything|much|more|a lot)\b)",
    r"I'?d (?:always |probably |happily |definitely )?(?:skip|pick|choose|go for|opt for)\b",
    r"不(?:太|怎么|大)能", r"(?:接受度|容忍度)", r"(?:只|就)想(?!问|说|知道|确认|看看|了解|请)",
)
# How the user takes things: "奶茶要三分糖，少冰", "房间要朝南的", "吃面我要多放醋", "吃饭我偏清淡", "老样子",
# "酒店一定要有浴缸", "我听歌主要听爵士", "打车的话选舒适型".
_HOW_I_TAKE_IT = _rx(
    r"(?:[一二三五七半全无零]|\d)分?糖|半糖|(?:微|中|特|不)辣(?![椒条])|(?:少|去|免|多)(?:冰|糖|盐|油|辣)(?![箱块])",
    r"(?<![是还只])要[^，。,；;的]{1,6}的(?=\s*(?:[，。,！!；;]|$))",
    r"(?:多|少|不)(?:放|加)(?:醋|盐|糖|辣|葱|香菜|蒜|油|酱|冰|奶)", r"偏(?:清淡|甜|咸|辣|酸|淡|软|硬)",
    r"老样子|老规矩",
    r"一定要有|必须(?:要)?有|得有|最好有", r"主要(?:听|看|喝|吃|用|玩|穿|读|买)",
    r"的话[，,]?\s*(?:我)?(?:一般|都|就|只|还是)?(?:选|要|用|订|点|坐|买|喝|吃)",
)
# Standing wishes about answers and the user's time that carry no "please always": "send summaries as bullet
# points" (said of answers in general, not "put this in a table"), "no calls before 10", "let me sleep in on
# weekends", "回复我的时候先说结论", "文档里少用缩写", "说话直接点，别绕弯子", "开会别超过半小时", "PPT 别用花哨的模板".
_STANDING_WISH = _rx(
    # How to make things for the user from now on ("if you ever make mockups for me, dark theme please") and a
    # habit held everywhere ("I use dark mode everywhere").
    r"(?:if|when|whenever) you (?:ever )?(?:make|write|draft|send|prepare|create|build|give|show|design)\b[^.]{0,80}"
    r"\bplease\b", r"I use [^.,;]{1,30} everywhere\b",
    r"^(?!.*\b(?:this|that|these|those|it|above|below)\b).*\b(?:as|in) (?:bullet(?: points)?|bullets|a table|"
    r"tables|plain text|a numbered list|numbered lists)\b",
    r"^no (?:calls|meetings|messages|texts|emails|pings|work|screens|coffee|caffeine|alcohol|sugar)\b"
    r"(?= (?:before|after|during|on|at|in|past)\b)",
    r"^(?:please )?let me (?!know\b|think\b|check\b|see\b|look\b|explain\b|try\b|ask\b|get back\b)\w+"
    r"[^.]{0,30}\b(?:on weekends|at weekends|on (?:\w+days)|every (?:day|morning|evening|night|week|weekend)|"
    r"in the (?:mornings|evenings))\b",
    r"先(?:说|讲|给|写)(?:结论|重点|答案|要点)", r"(?<![至最很])少用(?!户)|多用(?![途户于])",
    r"(?:说话|回答|回复|讲|写|解释)[^，。,]{0,3}(?:直接|简单|简短|短|通俗|详细|具体|慢)一?点",
    r"别(?:绕弯子|啰嗦|废话|兜圈子|客套)", r"(?:别|不要|最好不|尽量不)超过", r"(?:别|不要)(?:再)?用(?!了)",
)
_TASTES = (PREFERENCE, _VERDICT, _EFFECT_ON_ME, _LEANING, _HOW_I_TAKE_IT, _STANDING_WISH)


def _likes(text: str) -> bool:
    return any(table.search(text) for table in _TASTES)


# A phrase with no subject and no verb that picks one thing over another ("Tabs, not spaces", "Decaf only after
# 3pm", "Podcasts at 1.5x speed, audiobooks at normal speed") is a terse taste or standing wish. Facts come as
# clauses ("The staging Redis lives at 10.2.14.9"), so a pronoun, an auxiliary, a determiner, a past form or a
# common present-tense verb marks a clause; so do a colon or a long number, which label data ("Gate: B12").
# A verbless phrase without a choice in it ("Software engineer at Spotify", "Two kids, both in school") is no
# wish: it needs a word of choice or two parallel parts ("mornings for deep work, afternoons for calls",
# "cold showers in the morning, hot ones at night").
_CLAUSE_WORD = _rx(
    r"am|is|are|was|were|be|been|being|has|have|had|do|does|did|can|could|will|would|shall|should|may|might|must",
    r"I|we|they|he|she|it|you|me|us|him|them|my|our|his|her|their|its|your|there|here|this|that|these|those",
    r"(?:^|(?<=[,;—–] ))the", r"who|what|where|when|why|how|which", r"\w+'(?:s|re|m|ve|ll|d)", r"\w+n't",
    r"[a-z]+(?<!e)ed",
    r"lives|runs|takes|requires|accepts|uses|works|starts|ends|costs|needs|goes|comes|sits|holds|contains|includes|"
    r"supports|hosts|stores|keeps|expires|belongs|reports|means|leads|owns|handles|sends|gets|makes|pays|turns|"
    r"opens|closes|serves|lasts|allows|sleeps|knows|says|wants|seems|looks|feels|stays|moves|connects",
)
_NOT_A_PHRASE = re.compile(r"[:?？]|\d{3,}|\d[\d.,]*\s*(?:%|gb|mb|tb|ms|km|kg)\b", re.IGNORECASE)
_CHOICE_WORD = _rx(
    r"only", r"not", r"never", r"always", r"no", r"nothing", r"over", r"everywhere", r"please", r"instead",
    r"first", r"ever", r"whenever", r"extra", r"lots of", r"plenty of", r"light on", r"heavy on", r"easy on", r"every",
    r"each", r"rather", r"than", r"or", r"without", r"max", r"at (?:most|least)",
)
_PREPOSITION = re.compile(r"\b(?:at|in|on|for|with|by|from|to|after|before|during|under)\b", re.IGNORECASE)
_SUBORDINATE = re.compile(r"\b(?:whenever|when|if|unless|because|as long as|while|since)\b", re.IGNORECASE)
_COUNT = _rx(r"\d", r"one|two|three|four|five|six|seven|eight|nine|ten|both|single|married|divorced")
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

DECISION = _rx(
    r"(?:we|I|they|the team|team|we've|I've|we have|I have|we've all|everyone) (?:finally |just |have |has )?"
    r"(?:decided|chose|chosen|picked|settled on|agreed to|agreed on|opted|went with|voted)",
    r"(?:we|I|they|the team|everyone|we all|all) (?:\w+ )?agreed", r"decided (?:to|on|that|against)",
    r"^decided\b", r"decision (?:is|was) (?:to|made)", r"decision\s*:", r"it'?s decided", r"final answer",
    r"final (?:call|decision|verdict|word|pick|choice|plan)", r"^verdict\s*:",
    r"(?:it's|that's|it is|that is) (?:settled|final|a done deal)", r"done deal",
    r"(?:is|are) (?:now )?(?:final|settled|locked in|official)\b", r"made up (?:my|our|their) minds?",
    r"(?:my|our) minds? (?:is|are) made up",
    r"(?:we|I|they|the team)(?: have|'ve)? (?:scrapped|ditched|abandoned|shelved|axed|nixed|binned|canned)",
    r"(?:went|go|going) all[- ]in on", r"pull(?:ed|ing)? the plug on", r"green-?lit",
    # "Let's go with", "let's push the launch"; not "let's see", "let's grab lunch".
    # "Let's keep it short", "let's move on" are about this conversation.
    r"let'?s (?!(?:see|grab|get|talk|chat|think|have|play|eat|catch|meet|hang|continue|start over|go(?! with| for)|"
    r"keep it|make it|wrap|move on|call it|take a|try again|do this|do it|leave it|circle back|pick (?:this|it) up|"
    r"focus on (?:this|that)|look at)\b)"
    r"\w+",
    r"(?:going|go|goes) with", r"settled on", r"opted for", r"(?:picked|chose) \w+(?: \w+)? over", r"stick with",
    r"go ahead with", r"standardi[sz](?:e|ed|ing) on", r"switch(?:ed|ing)? (?:\w+ ){0,3}to",
    r"(?:moving|move|moves|moved|migrat(?:e|es|ing|ed)) (?:\w+ ){0,3}(?:from|to)",
    # Settings and plans stated as the new state: "budget is capped at $15k", "bedtime is now 8:30".
    r"(?:is|are|'s|will be) (?:now )?(?:capped|frozen|raised|lowered|reduced|increased|moved|pushed|postponed|"
    r"delayed|rescheduled) (?:at|to|until|for|back)",
    rf"(?:is|are) now (?:(?:at )?\d{{1,2}}(?::\d\d| ?[ap]m)|on (?:{_DAY})s?|every|only|due|mandatory|required|"
    r"optional|banned|weekly|monthly|daily|biweekly)\b",
    r"(?:taking|accepting|declining|turning down|took|accepted|declined|turned down) (?:the|that|this|their) "
    r"(?:\w+ ){0,2}(?:offer|job|deal|position|role|apartment|flat|house|contract)",
    r"^no more\b(?! than)", r"(?:that's|this is|it's|is) (?:the|our|my) new (?:rule|policy|plan|normal|default)\b",
    r"^new (?:rule|policy|plan)\s*:", r"roll(?:ing|ed)? (?:\w+ )?out",
    r"from now on", r"from here on", r"going forward", r"moving forward", r"from today", r"for good",
    r"from (?:this|next) (?:week|month|quarter|year|sprint|release)",
    r"starting (?:in|from|next|on|this|today|tomorrow|monday|january|may)", r"no longer",
    r"(?:drop|dropping|dropped|end|ending) support", r"vote (?:went|is|was) for", r"voted (?:for|to)",
    r"approved the", r"signed off on", r"I plan to", r"we plan to",
    r"(?:we're|we are|we'll|we will|I'm|I am|I'll|I will) (?:now )?(?:dropping|stopping|switching|moving|"
    r"going with|adopting|sunsetting|deprecating|retiring|replacing|selling|cancell?ing|quitting|"
    r"standardi[sz]ing|consolidating|hiring|outsourcing)",
    r"(?:we|they|the team)(?:'ll| will| are going to|'re going to) (?!be\b)\w+", r"we(?:'re| are) going to use",
    r"(?:we|I)(?:'ll| will) (?:use|go|switch|move|stick|adopt)", r"I'll (?:take|go with|pick|choose|book|buy)",
    r"(?:I'm|I am|we're|we are|I'll|we'll) (?:going back to|moving to|starting)",
    r"(?:I'm|I am|we're|we are) (?:going to|gonna) (?:stop|start|quit|switch|move|use|learn|buy|sell|cancel|drop|"
    r"keep|go with|hire|rent|build|rewrite|migrate|launch|skip|leave|retire|replace|adopt)\b",
    r"(?:I'm|I am|we're|we are) (?:done with|deleting|quitting|leaving|closing)",
    r"(?:we're|we are|I'm|I am|we've|I've) (?:not|no longer) (?:renewing|going|hiring|using|buying|continuing|"
    r"extending|moving|doing|taking|accepting|supporting|offering|shipping)",
    r"next (?:year|month|quarter|semester|spring|summer|fall|autumn|winter)\b[^.]{0,80}\b(?:I'm|I am|we're|we are|"
    r"I'll|we'll|I will|we will)\b",
    r"(?:is|are) now [^,.]{0,60},? not",
    # Orders about a setting are decisions; orders about the text at hand ("redo that last table") are not.
    r"^(?:ok,? |so,? |please |then |alright,? )?(?:change|set|bump|raise|lower|increase|decrease|reduce|switch|"
    r"move|rename|update|make|extend|shorten|cap|limit)\b[^.?]{0,80}\bto\b",
    r"^(?:ok,? |so,? |please |then |alright,? )?(?:cap|limit|freeze|pause|disable|enable|turn (?:off|on)|"
    r"deprecate|sunset|archive|lock|double|halve|postpone|delay|cancel|schedule|rename|drop)\b"
    r"(?![^.?]{0,80}(?:\b(?:this|that|these|those)\b(?! (?:quarter|week|month|year|sprint|release|time))"
    r"|\b(?:above|below|last)\b))",
    r"(?:goes|go|going|is going|moves|changes|changed|change|bumped|raised|lowered|increased|decreased|reduced|"
    r"cut|extended|shortened) (?:\w+ ){0,3}from\b[^.]{0,60}\bto\b",
    r"决定", r"定为", r"定成", r"(?<![一确固稳肯规预约否])定了", r"定下", r"定在", r"就这么定", r"就定", r"敲定",
    r"选定", r"拍板", r"就这样吧", r"最(?:后|终)(?:买|选|定|决定|用|挑)", r"就(?:用|选|报|买|订|定|按)", r"就叫(?!我)",
    r"选了",
    r"改成", r"改为", r"改用", r"改在", r"改到", r"改去", r"换成", r"换到", r"换用", r"开始用", r"替代", r"取代",
    r"设置成", r"设置为", r"设为", r"设成", r"调到", r"调成", r"调整为", r"调整到", r"缩短到", r"缩短为",
    r"延长到", r"延长为", r"提高到", r"提升到", r"降到", r"降低到", r"上调到", r"下调到", r"挪到", r"移到",
    r"推到", r"提前到", r"推迟到", r"延期到", r"迁移到", r"迁移至", r"迁到", r"搬迁到",
    r"(?:^|[，,。；;：:\s])(?:以后|今后)", r"(?:以后|今后)(?:都|就|统一|一律|每|改|不|用|按|走|由|交|放)",
    # Keeping one thing, or leaving it for later: "兴趣班只保留钢琴", "年假留到年底一起休".
    r"只(?:保留|留下|留)", r"(?:这次|今年|明年|以后|今后|下次)[^，。,]{0,8}按",
    r"(?:卖|辞|扔|关|停)掉", r"报了[^，。,]{0,6}(?:班|课|名|团)",
    r"(?:今年|这次|明年|下次|以后|今后|这个月|下个月)[^，。,]{0,6}(?:就|都|也)?不[^，。,]{1,8}了",
    r"(?:我们|咱们|我)(?:就|也|都|今年|这次)?不(?:参加|去|来|做|买|租|办|搞|招|接|报|考|学|续|投|签|玩|搬|回|出)"
    r"[^，。,？?]{0,10}了",
    r"(?<!是)用[^，。,的]{1,15}(?:重写|重构|重做|来写|来做|来实现)",
    r"换(?:个|一个|一家|辆|套)(?!话题|说法|思路|角度|问题|方式问)",
    r"交给[^，。,]{1,6}(?:负责|来做|来管|处理|跟进|主导)",
    # Going back to what was there: "还是用旧版本吧", "改回原来的方案".
    r"还是(?:用|选|去|买|按|走|定)[^，。,？?]{1,12}吧", r"(?:改|换|切|退|回滚)回",
    r"(?:留|攒|拖|放)到[^，。,]{1,8}(?:再|一起)",
    r"从(?:今天|现在|下周|下个月)(?:起|开始)", r"从[^，。,]{1,8}(?:开始|起)",
    r"(?:下个?(?:版本|月|周|星期|礼拜|季度|学期)[一二三四五六日天]?|今年|明年|今天|明天|后天|本月|这个月|本周|这周|下半年|"
    r"年后|节后|(?:周|星期)[一二三四五六日天])(?:起|开始)",
    # What the coming period is about: "这个季度的重点是降本增效", "接下来我们专注做企业客户".
    r"(?:这个?|本|下个?|今年|明年)(?:季度|月|周|年|阶段)?的?(?:重点|主要目标|目标|优先级)(?:是|放在)",
    r"(?:接下来|之后|今后|往后|下半年|明年)[^，。,]{0,6}(?:专注|主攻|聚焦|集中精力)", r"报名了|报了名",
    r"起改", r"不再", r"统一(?!了)", r"打算", r"准备(?:把|从|换|改|用|开始|辞职|离职|跳槽|买|卖|搬|报|考|学|转|退)",
    r"不要了", r"取消了", r"不(?:续|租|考|学|干|报|办|搬|装)(?:费|约|租|了)?了", r"砍掉", r"砍了", r"暂停",
    r"先不(?:做|上|搞|买|招)", r"不做了", r"不买了", r"不去了",
    # Dropping, replacing and handing over: "我们放弃了自研推送", "我换了一家健身房", "客服改由外包团队接".
    r"不再?(?:做|搞|用(?!担心|管|急|谢|客气)|买|招|续|投)[^，。,！!？?吗]{1,10}了", r"放弃(?:了|掉)", r"弃用",
    r"停用", r"转用", r"改走", r"改由", r"转由", r"退(?:掉|订|租)", r"转(?:学|岗|行|专业)",
    r"(?<![交兑转替轮])换了(?!一下|吗|吧|呢)", r"(?:租|买|订|签|拿|盘)下(?:来)?了",
    r"先(?:用|买|租|试|上)[^，。,]{1,10}[，,](?:等|看|回头|以后|之后)",
    r"(?:下个?版本|新版本?|以后|今后|明年|下个?月|下周)[^，。,]{0,6}(?:去掉|移除|删掉|下掉|加上|取消|上线|不再?支持)",
    # A change of amount: "零花钱从每周 20 块涨到 30 块", "从 3 次提高到 5 次". The verb is one or two characters
    # ("涨到", "提高到"), so "主从同步延迟飙到了 40 秒" (a lag that rose) is no change of plan.
    r"(?<!主)从[^。，,；;]{1,15}(?:涨|加|增|减|降|升|提|调|改|换|缩|延|扩|砍|压|挪|搬)[^。，,；;到]?到",
    # Commitments about what comes next: "往后都走公司邮箱", "接下来统一用 pnpm", "从此不再加班".
    r"(?:往后|接下来|后面|之后)(?:都|就|统一|一律)(?:用|改|按|走|放|交|由|不)", r"从此",
    # A choice stated with the option it beat: "这个服务是用 Go 写，不用 Java".
    r"是用[^，。,；;]{1,15}[，,]?\s*(?:不用|而不是|不是)",
)
# Events that get planned, moved and called off.
_EVENT = (
    r"offsite|off-site|wedding|party|standup|stand-up|retro|launch|release|kickoff|kick-off|trip|conference|"
    r"workshop|ceremony|reception|celebration|all-hands|holiday|vacation|honeymoon|reunion|move|meeting|dinner|"
    r"deal|event|demo|sale|migration|rollout"
)
# Deciding in the past tense: with a time anchor it is told as a story ("At the offsite we finally agreed").
_DECIDED = _rx(r"decided", r"agreed", r"chose", r"picked", r"settled on", r"opted", r"voted")
# Choices and arrangements in English that carry no "decide" (the second held-out set showed cue-less decisions
# falling through to "fact"): commitments about what will be done.
_COMMITMENT = _rx(
    # A design choice in the future passive: "the new service will be written in Rust", "will be hosted on Fly".
    r"(?:will|'ll|is going to|are going to|is gonna|are gonna) be (?:\w+ly )?(?:written|built|rewritten|"
    r"implemented|hosted|deployed|run|handled|managed|owned|led|done|stored|kept|shipped|released|launched|"
    r"split|merged|replaced|migrated|moved|powered|served|priced|billed|paid|held|scheduled) "
    r"(?:in|on|with|by|using|via|through|from|to|as|at|under|inside|over)\b",
    r"(?:will|'ll|is going to|are going to) be (?:turned (?:off|on)|shut down|switched (?:off|on)|retired|removed|"
    r"deprecated|discontinued|closed|cancell?ed|postponed|phased out|sunset|archived|deleted|dropped)\b",
    # An arrangement in the present progressive: "we're renting the flat in Lyon", "our team is adopting TypeScript".
    r"(?:we're|we are|I'm|I am|we'll be|I'll be|(?:the |our )?(?:team|company|org|department|school|family)(?:'s| is))"
    r" (?:now |officially |definitely )?(?:adopting|switching|dropping|opening|closing|renting|leasing|freezing|"
    r"pausing|postponing|delaying|skipping|scrapping|ditching|shelving|launching|capping|limiting|banning|"
    r"splitting|merging|rewriting|migrating|keeping(?! (?:an eye|track|up|busy|it down|quiet|warm))|"
    r"sticking (?:with|to)|going ahead with|pushing back|raising|lowering|doubling|halving|extending|"
    r"renewing|upgrading|downgrading|converting|relocating)\b",
    r"(?:the team|team)(?:'s| is) going to\b",
    r"(?:going|go) (?:fully )?(?:remote|hybrid|public|open[- ]source|paperless|\w+-first)\b",
    # A choice named with the option it beat: "we're renting the flat in Lyon, not the one in Grenoble".
    r"(?:we're|we are|I'm|I am|we'll|I'll|will)(?: \w+){1,3}[^.;?!]{0,60},\s*not\b",
    # A commitment already made: "I've signed up for the Berlin marathon", "we've booked the venue".
    r"(?:I've|I have|we've|we have|I just|we just) (?:\w+ly )?(?:signed up|registered|enrolled|committed|"
    r"subscribed) (?:for|to|in)\b",
    r"(?:I've|I have|we've|we have) (?:just |finally |already )?(?:booked|reserved)\b",
    r"(?:putting|put) (?:\w+ ){0,3}(?:on the market|up for sale|on hold|on ice|on pause)\b",
    # Moving a date or a thing: "we're pushing the launch to April", "the new dashboard replaces the weekly report".
    rf"(?:push|pushing|bring|bringing|brought) (?:the |our |my )?(?:\w+ )?(?:{_EVENT}|deadline|date|call)s? "
    r"(?:to|back|forward|out)\b",
    r"(?:replaces|will replace|is replacing|are replacing|supersedes)\b",
    r"(?:switch|switching|change|changing) (?:schools|jobs|teams|banks|providers|plans|offices|carriers|doctors|"
    r"dentists|gyms|careers|vendors|suppliers)\b",
    # A conclusion said in the present: "OK, we skip the team lunch this month", "the contract goes to Vendor B".
    r"^(?:ok|okay|so|fine|alright|right|then),? (?:we|I)(?: just)? (?:skip|ship|go|take|use|keep|drop|cancel|"
    r"launch|wait|postpone|stay|move|pick|book|pay|split|sell|buy|hire|try)\b",
    r"(?:contract|deal|job|project|role|position|award|bid|tender)s? (?:goes|go) to\b",
)
# How a plan now stands: "the offsite will be in Lisbon", "the trip is off", "launch date is locked", "the budget
# stays at $40k", "that's the plan", "effective immediately", "Option 2 it is", "Fine, the blue one then".
_PLAN_STATE = _rx(
    rf"(?:{_EVENT})s? (?:will be|'ll be|is going to be|are going to be|is gonna be) (?:held |happening )?"
    r"(?:in|at|on)\b",
    r"(?:our|the) new \w+(?: \w+)? (?:will be|is going to be|'ll be)\b",
    rf"(?:{_EVENT})s? (?:is|are) (?:now |officially )?(?:off|cancelled|canceled|called off|on hold|a go|confirmed|"
    r"postponed|on)\b(?! (?:to|by|the|a|an|my|our|at|in)\b)",
    rf"(?:date|dates|deadline|plan|budget|price|schedule|timeline|venue|scope|{_EVENT})s? (?:is|are) (?:now )?"
    r"(?:locked(?: in)?|set in stone|confirmed|fixed|frozen|final)\b",
    r"(?:sunset|deprecation|end-of-life|eol|cutoff|cut-off|go-live|launch|release|due) date (?:is|will be)\b",
    r"(?:budget|price|limit|cap|rate|fee|rent|salary|deadline|timeout|threshold|quota|allowance|bedtime|curfew)s?"
    r"\b[^.;]{0,30}\b(?:stays?|remains?) (?:at|the same|unchanged|as is|where it is|fixed)\b",
    r"(?:is|are) going away\b", r"(?:slips?|slipping) to\b", r"(?:goes|go|going) (?:up|down) to\b",
    r"(?:that's|that is|this is|here's|here is) (?:the|our|my) (?:plan|deal|call|decision)\b",
    r"(?:priority|priorities|focus|goal|goals|theme) (?:for|this|next) [^.,]{1,20}\b(?:is|are)\b",
    r"until further notice", r"effective (?:immediately|today|now|from|as of)\b", r"as of (?:today|now|next)\b",
    r"(?:hiring|spending|budget|code|feature|deploy|deployment|release|merge) freeze\b",
    r"(?:^|,\s*)plan [a-d]\s*[:—–-]",
    r"^(?:fine|ok|okay|alright|right|so),? (?:the )?[\w' -]{1,25} then\s*[.!]?\s*$",
    # "Option 2 it is", "Thai it is, then": the idiom that closes a choice ("that's how it is" is no choice).
    r"^(?:(?:ok|okay|alright|fine|so|right|then),? )?(?!(?:that|this|it|here|there|how|what|where|who|why|when|"
    r"whatever|such|as|because|if)\b)[\w'&.-]+(?: [\w'&.-]+){0,3} it is\s*(?:[—–:,.!;-]|$)",
)
# Too weak to beat a stated like or dislike: "I don't like calls; text me instead" is a preference.
WEAK_DECISION = _rx(
    r"instead of", r"instead", r"rather than", r"那就",
    # "这次团建就去莫干山": a plan settled on, unless "马上就去" or "我这就去" (said in passing).
    r"(?<![上这早也才都])就(?:去|办|住|租|搬|请|找|这么办|交给)",
)

# --- health, safety, security, identity ----------------------------------------------------------------

HEALTH = _rx(
    r"allerg(?:ic|y|ies)", r"anaphyla\w*", r"epipen", r"diabet(?:es|ic)", r"insulin", r"hypertension",
    r"blood pressure", r"asthma", r"inhalers?", r"epilep(?:sy|tic)", r"seizures?", r"heart condition",
    r"pacemaker", r"celiac", r"coeliac", r"medications?", r"meds", r"prescri(?:bed|ption)", r"\d+\s?(?:mg|mcg)",
    r"blood type", r"pregnan(?:t|cy)", r"chronic", r"kidney (?:disease|stones?|failure|transplant)", r"cancer",
    r"antidepressants?", r"dialysis", r"intoleran(?:t|ce)", r"disorder", r"takes? \w+ (?:pills?|tablets?)",
    r"blood thinners?", r"aspirin", r"warfarin", r"metformin", r"ibuprofen", r"paracetamol", r"acetaminophen",
    r"statins?", r"antibiotics?", r"levothyroxine", r"lisinopril", r"sertraline", r"fluoxetine",
    r"adhd", r"autis(?:m|tic)", r"migraines?", r"bipolar", r"ptsd", r"(?:clinical |severe |mild )?depression",
    r"(?:my |a )?(?:therapist|psychiatrist)", r"stents?",
    r"过敏", r"糖尿病", r"胰岛素", r"血压", r"哮喘", r"癫痫", r"心脏病", r"起搏器", r"病史", r"血型", r"怀孕",
    r"孕期", r"慢性", r"抑郁症", r"(?:轻度|中度|重度)抑郁", r"焦虑症", r"偏头痛", r"心理(?:咨询|医生|治疗)",
    r"精神科", r"心脏支架", r"不耐受", r"乳糖不耐", r"手术", r"\d+\s*毫克", r"阿司匹林", r"华法林",
    r"二甲双胍", r"布洛芬", r"抗生素", r"降压药", r"(?:吃|服|用|开|拿|备|抹|涂|停)药", r"药(?:物|片|丸|膏)",
    r"[的种]药(?![店企厂房])", r"(?:吃|服)(?:一|两|二|三|半|\d+)(?:片|粒|颗|支)",
)
# Secrets, credentials and who may get in. A bare "token" or "access" is not enough ("tokens counted",
# "access to a car"); they count in phrases such as "api token" or "admin access".
SECURITY = _rx(
    r"passwords?", r"passcodes?", r"passphrases?", r"pin code", r"api[ _-]?keys?", r"api tokens?",
    r"access tokens?", r"auth tokens?", r"bearer tokens?", r"refresh tokens?", r"secret keys?", r"private keys?",
    r"ssh keys?", r"ssh (?:access|login)", r"can ssh", r"credentials?", r"2fa", r"mfa", r"otp",
    r"recovery (?:codes?|phrase)", r"seed phrase", r"(?:admin|root|sudo|write|production|prod) (?:access|rights|"
    r"account|password)", r"sudo", r"only [\w ,]{1,40}\b(?:have|has|can|get) (?:\w+ )?access",
    r"(?:grant|revoke|remove)s? (?:\w+ )?access", r"access (?:rights|control|list)", r"permissions?",
    r"1password", r"lastpass", r"bitwarden", r"keychain", r"vault", r"passport (?:number|no)",
    r"social security", r"ssn", r"credit card", r"card number", r"bank account", r"iban", r"\[secret:",
    r"log ?in (?:as|with)",
    r"(?:alarm|door|gate|safe|lock|garage|entry|access|security|wifi|wi-fi) (?:codes?|pins?|passwords?)",
    r"combination (?:to|for|of) the",
    r"密码", r"口令", r"密钥", r"私钥", r"令牌", r"权限", r"验证码", r"门禁", r"保险柜", r"身份证", r"护照号?",
    r"卡号", r"医保卡", r"社保卡", r"银行卡", r"(?:管理员|root|admin)(?:账号|密码|权限)",
    r"(?:只有|只能|仅|才能|允许)[^。，,]{0,12}(?:登录|登陆|访问)", r"(?:SSH|远程)\s*登[录陆]",
)
# Advice about secrets in general ("Never commit credentials to the repo", "不要把密码提交到仓库") names no
# secret and no one's access: it is not security-critical by that alone. Advice opens with a rule word, says
# nothing about the speaker, and every credential word in it is bare (not "the API token for billing", "our
# VPN password", "公司 VPN 的账号密码").
_ADVICE = re.compile(r"^(?:(?:so|also|and|tip|general(?:ly)?|in general|as a rule|pro tip)[,:]?\s+)?"
                     r"(?:never|don'?t|do not|avoid|always|make sure|be sure|be careful|you should|"
                     r"(?:it'?s|it is) (?:a )?(?:good|best|bad|common) (?:practice|idea)|best practice|"
                     r"不要|别|切勿|千万不要|永远不要|绝不要|务必|一定要|最好)", re.IGNORECASE)
_OWNED = re.compile(r"\b(?:the|my|our|your|his|her|their|this|that|these|those|its)\s+(?:[\w-]+\s+){0,3}$|的\s*$",
                    re.IGNORECASE)


def _security_advice(text: str) -> bool:
    if not _ADVICE.search(text) or _FIRST_PERSON.search(text) or "[secret:" in text or re.search(r"我们|公司", text):
        return False
    return all(_OWNED.search(text[max(0, m.start() - 40):m.start()]) is None for m in SECURITY.finditer(text))


# The user saying their name ("my name is", "我叫"); IDENTITY adds what others call them.
NAME = _rx(
    r"my name is", r"my name's", r"my (?:full|legal|first|last) name", r"I'm called",
    r"我叫(?![了过着他她它你们车人外醒])", r"我的名字", r"我姓", r"名字叫",
)
IDENTITY = _rx(
    r"my name is", r"my name's", r"my (?:full|legal|first|last) name", r"I'm called",
    r"(?:everyone|people|friends|they|most people|my friends) (?:\w+ )?calls? me",
    r"我叫(?![了过着他她它你们车人外醒])", r"我的名字", r"我姓", r"名字叫", r"(?:大家|朋友们?|别人)(?:都|一般)?叫我",
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I'd|I've|I'll|me|my|mine|myself)\b|我", re.IGNORECASE)
# "I'm Sofia Marquez": a capitalised name right after "I'm" (case matters here, so a pattern of its own).
# A greeting may come first: "Hi, I'm ...", "Morning! I'm ...", "Good afternoon all, I'm ...".
_INTRODUCTION = re.compile(r"^(?i:(?:hi|hello|hey|(?:good )?(?:morning|afternoon|evening))(?: there| all| everyone)?"
                           r"[,!.]* )?I'?m [A-Z][a-zà-öø-ÿ]+(?: [A-Z][a-zà-öø-ÿ'-]+)+\b(?! (?:and|or)\b)")

# --- temporary ----------------------------------------------------------------------------------------

_MOOD_WORD = (
    r"tired|sleepy|exhausted|bored|hungry|grumpy|stressed|sick|annoyed|cranky|busy|sad|happy|excited|nervous|"
    r"anxious|cold|hot|thirsty|sore|drained|burnt out|burned out|overwhelmed|frustrated|lazy|meh|down|off|"
    r"starving|freezing|wiped|knackered|beat|fried|wrecked|shattered|dead|toast|spent|done|zonked|wired|"
    r"hangry|jet-?lagged|hungover|miserable|fed up|over it"
)
MOOD = _rx(
    rf"(?:so|very|really|kinda|kind of|a bit|a little|super|pretty|totally|completely|absolutely|utterly|"
    rf"feeling|feel|I'm|I am|getting) (?:\w+ly )?(?:{_MOOD_WORD})",
    r"(?:my )?(?:brain|head|back|feet|eyes)(?:'s| is| are| feels?) (?:\w+ )?(?:fried|mush|pounding|spinning|"
    r"killing me|exploding|dead|done|aching|sore|melting)",
    r"I'm (?:starving|freezing|exhausted|knackered|wiped out|beat)", r"don't mind me", r"^ugh\b", r"^meh\b",
    r"I'm feeling", r"in a (?:good|bad|great|weird) mood",
    r"^(?:tired|sleepy|exhausted|bored|hungry|grumpy|stressed|sick|cranky|starving|freezing|knackered|hungover|"
    r"jet-?lagged|wiped|so tired|so sleepy)\b",
    r"好累", r"累死", r"累了", r"困(?![难境扰惑])", r"好烦", r"有点烦", r"烦死", r"饿", r"无聊", r"不想干活",
    r"心情", r"续命", r"头疼", r"头痛", r"郁闷", r"崩溃了", r"好开心", r"难受", r"emo", r"摸鱼",
    r"(?:整个人|人)(?:都|已经|快)?(?:麻|废|傻|懵|晕|蒙|裂开|不行|不好)了", r"[累困饿烦]了", r"麻了", r"懵了",
    r"裂开", r"心累", r"头大", r"刚(?:睡醒|起床|醒)", r"不舒服", r"脑子(?:还)?(?:没转|不转|转不动|不够用|一团浆糊|懵)",
    r"(?:头|肚子|胃|牙)(?:好|有点|太|超)?(?:疼|痛|晕)",
    r"(?:好|太|真|超|有点|特别|巨|贼)(?:忙|累|困|饿|烦|冷|热|闷|无聊)(?![闹情门心衷爱点度水碌])",
    r"(?:累|困|饿|热|冷|烦|笑|气|忙|吓)死(?:我|人)?了", r"(?:要|快)(?:累|困|饿|热|冷)死",
)
# Moods are said in a few words; in a longer sentence a mood word is incidental.
SHORT = 40
LONG = 100  # characters: a message this long usually says more than one thing
REQUEST = _rx(
    r"^(?:hey,? |wait,? |ok,? |okay,? |so,? |also,? |and |quick question,? )?(?:can|could|would|will) (?:you|u|ya)\b",
    # Questions in Chinese that end in a particle rather than a question mark: "这题怎么做啊".
    r"(?:怎么|什么|啥|哪|为什么|为啥|多少|几点|几个)[^，。,！!]{0,10}[啊呀呐]\s*$",
    r"^(?:hey,? |wait,? |ok,? |also,? )?(?:please |pls )?(?:help me|tell me|show me|remind me|translate|"
    r"summari[sz]e|explain|find|look up|check|draft|fix|redo|write|rewrite|generate|calculate|convert|list|"
    r"compare|proofread|book|search|recommend|suggest|name|create|plan|think of|come up with|brainstorm|"
    r"give me (?:a|an|some|the|\d+|one|two|three|four|five|ten|few|more))\b",
    r"[?？]\s*$", r"[吗呢]\s*[?？。]?\s*$", r"吧\s*[。!！~～]?\s*$", r"一下",
    r"^请?(?:你)?(?:给我|替我|为我)", r"^请?(?:翻译|总结|解释|查|写|算|推荐)",
    # Near-term reminders: "Don't forget to buy milk", "明天提醒我交房租", "记得带伞".
    r"^(?:and |also |oh,? |btw,? |hey,? )?(?:don't|do not) forget to\b", r"提醒我(?!的)",
    r"(?<![我还都])记得(?:要|去|把|带|给|交|买|吃|关|回|打|发|拿|喝|锁|看|充)", r"^别忘了(?![:：，,这])",
)
# A question that asks for something once ("Could you draft a reply to this email for me?") is a request,
# though "for me" or "you draft" would otherwise read as a standing wish; a standing word keeps it one
# ("Could you always answer in English?").
_ONE_OFF = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so|also|wait|quick question|btw|and),? )*(?:can|could|would|will) you\b[^?]*\?\s*$"
    r"|^(?:你)?(?:能不能|能否|可不可以|可以)[^？?]*(?:[？?]|吗\s*[？?]?)\s*$",
    re.IGNORECASE,
)
STANDING = _rx(
    r"always", r"never", r"whenever", r"every time", r"each time", r"from now on", r"going forward",
    r"in (?:the )?future", r"by default", r"in general", r"(?:when|if|unless) I",
    r"以后", r"今后", r"一直", r"总是", r"每次", r"始终", r"永远", r"默认", r"往后",
)
# Comings and goings: "brb", "一会儿聊".
AWAY = _rx(
    r"brb", r"gtg", r"g2g", r"afk", r"ttyl", r"be right back", r"got to go", r"gotta go", r"off to",
    r"heading (?:out|to|home|off)", r"grabbing", r"stepping (?:out|away)", r"be back in",
    r"back in \d+ ?(?:min|minutes|mins|sec|\s*[.!]*\s*$)",
    r"(?:going to|gonna) (?:grab|get|go|head|take a|bed|sleep|the gym)",
    r"(?:I'm|I am) (?:in a meeting|in the middle of|on my way|on a call|driving|at lunch|stuck in traffic|"
    r"running late|back)",
    r"^(?:on a call|in a meeting|driving|at the gym|busy|stuck in traffic|on my way|running late|on the (?:train|bus)|"
    r"at work|at lunch)\b", r"talk (?:to you )?later",
    r"(?:text|call|ping|message) me later", r"one sec",
    # Pauses, sign-offs and arrivals: "gimme a sec", "hang on, someone's at the door", "I'm logging off for the
    # night", "刚到家", "我先吃个饭".
    r"(?:gimme|give me) (?:a|one|two) (?:secs?|seconds?|minutes?|mins?|moments?)\b", r"(?:just |one |a )sec\b",
    r"(?:one|just a|a) moment\b", r"(?:hold|hang) on", r"hang tight", r"hold that thought",
    r"(?:let me|lemme) (?:think|check|see|look)", r"(?:someone's|somebody's|someone is) at the door", r"doorbell",
    r"(?:logging|signing) off\b", r"calling it a (?:day|night)\b", r"(?:heading|going|off) to bed\b",
    r"刚(?:到家|到公司|下班|回来|回家|到)(?![^，。,]*的时候)", r"^我?先(?:吃|去|睡|走|撤|忙|下|洗|回)",
    r"一会儿?(?:聊|说|见|回)", r"(?:晚上|晚点|回头|明天|下午|待会|等会)(?:聊|说|见|再聊)", r"回聊", r"先忙", r"先走",
    r"先撤", r"下班", r"去开个?会", r"吃饭去", r"去吃个?饭", r"在路上", r"来了来了", r"接个电话", r"回个电话",
    r"稍等", r"等我(?:一下|一会儿?|[\d一二两三四五六七八九十几半]+\s*(?:分钟|秒|小时))", r"talk soon",
    r"be right there", r"omw", r"get back to you",
    r"in a (?:bit|sec|second|minute|min|moment)\b",
    r"running (?:\d+ ?(?:min|mins|minutes) |a (?:bit|little) |a few (?:min|mins|minutes) )?late",
    r"先(?:下线|溜|睡|闪)", r"(?:will |'ll )?(?:reply|respond|get back to you|answer|text you|call you) later",
    r"^(?:just )?(?:landed|got home|got back|got in|woke up|arrived)\b",
    r"(?:I'm|I am) on the (?:train|bus|plane|tram|subway|metro|ferry|phone|road)\b",
    r"(?:bad|no|weak|terrible) (?:signal|reception|connection)\b",  # "I'm on the train, bad signal"
    r"(?:I'm|I am) (?:at|in) the (?:dentist|doctor|gym|office|airport|station|hospital|store|shop|supermarket|bank|"
    r"vet|hairdresser|barber|pharmacy|car|train|bus|cafe|pub)\b",
    r"晚点回你?", r"(?:^|我|正)在忙", r"忙完(?:再|了)",
)
# Sighs and remarks on the weather or the day ("哎，又下雨了", "ugh, rain again"): asides when they are short.
ASIDE = _rx(
    r"^(?:哎|唉|哎呀|哎哟|唉呀|哇|哇塞|天哪|天啊|我去|卧槽|我靠|啊啊|呜呜|救命)",
    r"^(?:ugh+|argh|urgh|ouch|oof|sigh|phew|yikes|aw+|oh no|oh man|oh well|damn|dang|geez|jeez|welp|whew|bah|"
    r"bleh|blah|gah)\b",
    r"又(?:是|[^，。,！!？?]{1,6}了)", r"(?:下|在下)(?:雨|雪)了",
    r"(?:好|太|真|超)(?:热|冷|闷|晒|卡|慢)(?![闹情门心衷爱点度水])",
    r"(?:rain|snow|raining|snowing|pouring) again",
    # Things that do not work just now: "这个链接打不开", "电脑死机了".
    r"打不开|连不上|登不上|进不去|加载不出来|卡住了|卡死了|死机了|崩了|挂了",
    # Exclamations about the thing at hand: "这个有点难啊", "这个 bug 好诡异".
    r"[啊呀哇耶]\s*[!！~～。]*\s*$", r"^这(?:个|也|都|次)?[^，。,]{0,10}(?:好|太|真|有点|挺)",
    r"so (?:hot|cold|humid|windy|rainy) (?:today|out|outside)",
)
ACTIVITY = _rx(
    r"never ?mind", r"nvm", r"forget it", r"found it", r"right now", r"at the moment", r"for now", r"tonight",
    r"this (?:morning|afternoon|evening)", r"today", r"again", r"you know me", r"just kidding", r"jk",
    r"^(?:lol|lmao|haha\w*|hehe|omg|wow|ugh|hmm+)\b", r"^(?:good )?(?:morning|evening|night|afternoon)\s*[!,.]",
    r"^(?:hi|hey|hello|yo)\b\s*[!,]",
    r"^(?:(?:ha|haha|lol|oh|wow|omg|man)[,!]? )?(?:that's|that is|this is|so|how) (?:so )?(?:hilarious|funny|cool|"
    r"great|awesome|amazing|nice|wild|crazy|cute|sad|annoying|weird|interesting|true|fair|frustrating|awkward|"
    r"strange|odd|bizarre|unfortunate|a relief|a shame|a pity|good news|bad news|a bummer)",
    r"一会儿?", r"待会", r"等会", r"等一下", r"等下", r"等等", r"晚点", r"改天", r"先去", r"马上",
    r"(?<![下起出回进上过])来了",
    r"算了", r"不用了", r"^(?:谢谢|多谢|感谢|谢啦|thanks|thank you|thx)",
    r"^(?:sorry|oops|whoops|my bad)\b", r"I meant\b", r"typo",
    r"回来再说", r"再说吧", r"^(?:我|让我|等我)?(?:想想|看看|瞧瞧|试试|查查|找找)\s*[。.~～!！]?\s*$", r"让我想想",
    r"我考虑一下", r"考虑考虑",
    r"我(?:现在)?在(?:地铁|公交|路上|车上|开会|外面|机场|高铁|飞机|排队|加班)",
    r"现在在(?![^，。,]{0,8}(?:工作|上班|住|读|上学|生活|定居))", r"正在", r"今天", r"今晚", r"又是", r"^哈哈", r"^嘿",
    # Reactions to what was just said and cheers for what just worked: "interesting, never thought of it that
    # way", "huh, didn't know that", "yesss it compiles", "woohoo, green build".
    r"^(?:interesting|huh|aha|ooh+|whoa|fascinating|TIL|ye+s{2,}|ya+y+|woo+(?:hoo+)?|whoo+|hooray|wahoo)\b",
    r"(?:never|hadn't|had not|didn't|did not|wouldn't have|would never have) (?:have )?thought (?:of|about) "
    r"(?:it|that|this)\b", r"(?:didn't|did not|never) know (?:that|this)\b",
    r"^(?:学到了|涨知识了|长见识了|没想到还能这样|原来还能这样)",
    # Interjections, corrections and hand-offs: "ahh that's frustrating", "wait no, the other file", "let me know
    # when you're done".
    r"^(?:a+h+|o+h+|u+gh+|ooh+)\b", r"^(?:wait|no wait|scratch that)\b", r"^(?:please )?let me know\b",
    # A state that will not last: "my laptop is about to die", "I'll be offline for an hour", "我手机快没电了".
    r"(?:is|'s|am|I'm|are|'re) (?:just )?about to\b", r"battery(?:'s| is)? (?:low|dying|almost dead|at \d+)",
    r"快没电|没电了|电量不足", r"(?:I'll|I will) be (?:offline|away|out|afk|unavailable|late|busy|back)\b",
    # Questions in Chinese without a question mark: "现在几点了", "这个怎么办".
    r"(?:几点|多少钱|怎么办|咋办|什么意思|啥意思|在哪儿?|哪里|干嘛|干啥|干什么|是啥|是什么|咋了|怎么了)(?:了|呢|啊|呀)?\s*$",
    # How the thing at hand is doing: "that didn't work either", "the page is still loading".
    r"(?:that|it|this) (?:still )?(?:didn't|doesn't|did not|does not|won't) work\b",
    r"(?:is|'s|are) still (?:loading|running|compiling|building|downloading|uploading|installing|processing|"
    r"syncing|deploying|spinning)\b",
)


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
