"""A first guess at what a new memory is: its kind, salience, priority, pin and security flag.

`classify(text)` is a rule classifier over English and Chinese cue phrases; `RuleClassifier` wraps it and
`LLMClassifier` asks a chat model, falling back to the rules when the answer is unusable. A caller's
explicit values always win over these guesses.

The kind is decided by the first step that matches, and the order carries the labelling conventions
(`python -m ebbing.bench.classify` measures them against labelled files):

1. nothing but acknowledgements, greetings or emoji ("ok 👍", "收到"), or a request that opens with
   "帮我" -> temporary;
2. a pin request ("Remember this forever: ...") is cut off first, so the rest decides the kind; a request
   that names the kind ("永远记住这个决定：...") decides it;
3. an unmistakably past time ("yesterday", "two weeks ago", "back in 2019", "上周", "去年") -> episode,
   even when the story is about a decision: "last year we finally decided to drop X" is an episode;
4. how the assistant should talk to the user ("please always answer in English", "回复里别用繁体字")
   -> preference, although it is phrased as an order;
5. choices and changes ("we decided", "let's go with", "from now on", "switched to", "改成", "换成")
   -> decision;
6. health facts (allergies, conditions, medication) -> fact, so an allergy is not read as a taste;
7. a mood or a coming and going in a short message ("困死了", "我先忙了，晚上聊") -> temporary;
8. a weaker time anchor with a completed action ("this morning I missed my train", "刚才投影仪坏了")
   -> episode;
9. likes, dislikes and habits ("I prefer", "I can't stand", "我喜欢", "宁可") -> preference;
10. weak decision cues ("instead", "那就") -> decision;
11. questions, one-off requests, "right now", "today", "never mind" -> temporary;
12. an English past-tense narrative without a date ("our planning meeting ran three hours over") -> episode;
13. anything else -> fact.

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


def _rx(*patterns: str) -> re.Pattern[str]:
    """One case-insensitive pattern from alternatives. An alternative that starts or ends with an ASCII
    letter gets a word boundary there, so "token" cannot match in "tokens" nor "ago" in "Chicago"."""
    parts = []
    for p in patterns:
        first = p[3:4] if p.startswith("(?:") else p[:1]
        head = r"\b" if first.isascii() and first.isalpha() else ""
        tail = r"\b" if p[-1:].isascii() and p[-1:].isalpha() else ""
        parts.append(f"{head}(?:{p}){tail}")
    return re.compile("|".join(parts), re.IGNORECASE)


# --- text preparation -------------------------------------------------------------------------------

# Quoted names ('Today in Rust', 「今天也要早睡」) are titles, not statements about today, so cues inside
# them are ignored. An English single quote counts only where it cannot be an apostrophe.
_QUOTED = re.compile(r"「[^」]*」|『[^』]*』|“[^”]*”|\"[^\"]*\"|(?<![\w'])'[^'\n]+'(?![\w'])")
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d\U000e0020-\U000e007f]"
)


def _prepare(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("’", "'").replace("‘", "'").strip()
    return _QUOTED.sub(" ", text)


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
# "Remember this decision: ..." names the kind itself.
_NAMED_KIND = (
    (re.compile(r"\bdecision\b|决定|决策", re.IGNORECASE), Kind.DECISION),
    (re.compile(r"\bpreference\b|偏好|喜好", re.IGNORECASE), Kind.PREFERENCE),
)


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
)
_ACK_WORD = "|".join(sorted((re.escape(w) for w in _ACK_WORDS), key=len, reverse=True))
ACKNOWLEDGEMENT = re.compile(
    rf"^(?:(?:{_ACK_WORD})(?![a-z])|[哈嗯哦啊呀~～]+|\d{{3}}|[\s.,!?。，！？、~～…:：;；()（）\-])*$", re.IGNORECASE
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
    r"back in", r"earlier today", r"the other day", r"as a (?:kid|child|teenager)",
    r"when I was (?:a )?(?:kid|child|young|little|student|teenager|in)",
    r"昨天", r"昨晚", r"昨日", r"前天", r"前几天", r"前两天", r"前些天", r"前些日子", r"前阵子", r"前段时间",
    r"上周", r"上星期", r"上礼拜", r"上个?月", r"上个?季度", r"上半年", r"去年", r"前年", r"那年", r"那次",
    r"当年", r"小时候", r"刚毕业", r"大学的?时候", r"读书的?时候", r"(?:以前|之前)有一次", r"上次", r"上回",
    r"[\d一二两三四五六七八九十几多]+个?(?:年|月|天|周|星期|礼拜|小时)以?前", r"很久以前", r"多年前",
)
# Times that make a story only with a completed action: "this morning I missed my train" is an episode,
# "kinda grumpy this morning" a mood; "周一客户突然要改需求" happened, "周一开会" is a plan.
WEAK_ANCHOR = _rx(
    r"this (?:morning|afternoon|evening)", r"today", r"tonight", r"just now", rf"on (?:{_DAY})",
    rf"(?:in|on|during|since) (?:early |late |mid-?)?(?:{_MONTH})", r"on the \d{1,2}(?:st|nd|rd|th)",
    r"over (?:christmas|easter|the (?:weekend|holidays?|summer|break))", r"during (?:the|our|my)",
    r"when (?:we|I|they|he|she)", r"at the (?:meetup|conference|party|wedding|meeting|airport)",
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
_NOT_A_STORY = re.compile(r"出生|生日|expires?|until|valid|born", re.IGNORECASE)
# English completed actions: common irregular pasts, and -ed words that are not adjectives ("tired") and
# not passives or states ("is rotated", "I'm married"): see `_past_verb`.
_IRREGULAR_PAST = (
    "went came took got gave made ran met saw told said lost won broke fell left spent found felt bought sold "
    "paid sent built caught drove flew ate drank wrote thought brought began forgot hit sat stood woke wore "
    "chose became held heard knew led rode rang sang slept spoke stole swam taught threw understood had did "
    "was were died crashed"
).split()
_PAST = re.compile(rf"(?<![\w-])(?:{'|'.join(_IRREGULAR_PAST)}|[a-z]{{3,}}ed)(?![\w-])(?!\s+by\b)", re.IGNORECASE)
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
_BIOGRAPHY = _rx(r"was born", r"were born", r"born in", r"grew up", r"used to")
# Completed actions in Chinese: a verb with 了 (not 为了/除了/算了/好了) or 过 (not 过来/过去/过敏), or
# an event that "suddenly" happened.
_ZH_DONE = re.compile(r"(?<![为除算好罢])了(?![吗吧呢])|[\u4e00-\u9fff]过(?![来去敏])|突然|结果|后来|最后|差点")
_ZH_FUTURE = re.compile(r"打算|计划|准备|要去|将要|将会|会去|下周|下个月|明年|明天|以后|下次|下季度")
_EN_FUTURE = _rx(r"will", r"'ll", r"going to", r"gonna", r"next (?:week|month|year|quarter|time)", r"tomorrow",
                 r"plan(?:ning)? to", r"starting", r"from now on")
# An English narrative without a date: "Our Q2 planning meeting ran three hours over".
_NARRATIVE = re.compile(
    r"\b(?:I|we|they|he|she|it|my \w+|our \w+(?: \w+){0,2}|the \w+(?: \w+){0,2}|\w+)\s+(?:just |finally |"
    r"suddenly |accidentally |actually |never |also )?(?:"
    + "|".join(v for v in _IRREGULAR_PAST if v not in {"was", "were", "had", "did"})
    + r"|[a-z]{3,}ed)(?![\w-])(?!\s+by\b)",
    re.IGNORECASE,
)


def _past_verb(text: str, *, anchored: bool = False) -> bool:
    for match in _PAST.finditer(text):
        word = match.group(0)
        if _NOT_A_VERB.fullmatch(word) or (not anchored and _DESCRIPTIVE.fullmatch(word)):
            continue
        if _PASSIVE_OR_STATE.search(text[: match.start()]):
            continue
        return True
    return False


def _past_year(text: str) -> bool:
    this_year = datetime.now(UTC).year
    return any(int(en or zh) < this_year for en, zh in _YEAR.findall(text))


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
    return any(_past_verb(m.group(0))
               for m in _NARRATIVE.finditer(text))


# --- preference ---------------------------------------------------------------------------------------

# How the assistant should talk to, write for or treat the user: a lasting preference, though it is
# phrased as an order (as opposed to "Write a haiku", a one-off request).
INSTRUCTION = _rx(
    r"(?:please |pls )?(?:always|never) (?:answer|reply|respond|write|use|call|address|give|show|send|suggest|"
    r"recommend|include|add|format|explain|start|keep)",
    r"(?:answer|reply|respond|talk|write|speak) (?:to me )?in (?:english|chinese|mandarin|french|german|spanish|"
    r"japanese|plain|simple|short|bullet)",
    r"when(?:ever)? you (?:explain|answer|reply|respond|write|show|give|suggest|recommend|summari[sz]e)",
    r"when \w+ing\b[^,.]{0,30}\bfor me", r"in general,? (?:give|tell|show|answer|keep)",
    r"(?:don't|do not|never) (?:ever )?(?:call me|use emojis?|recommend|suggest|send me|give me|remind me)",
    r"(?:don't|do not|never) (?:book|schedule|ping|call|message|email|text|wake|bother|disturb) me",
    r"^please (?:use|avoid|stick to|keep|don't|do not|never)\b", r"(?:^|,\s*|please )avoid\b",
    r"give me [^.]{1,40}\bfirst\b", r"I'?d (?:love|like|prefer|appreciate) it if you",
    r"(?:please|just|you can|you may) call me", r"^call me",
    r"(?:I want|I'd like|I would like) (?:all |every |my |your |you to always |answers|responses|replies|dates|"
    r"numbers|code)",
    r"be (?:blunt|direct|honest|brief|concise|straight|gentle|patient) with me",
    r"(?:your|the) (?:answers|replies|responses|explanations|summaries|tone)\b", r"for me\s*[.!]?\s*$",
    r"(?:write|talk|speak|explain) (?:to|for) me", r"(?:you write|you send|you draft|you suggest|you recommend)",
    r"(?:in|for) my (?:emails?|messages?|docs|documents|code|reports?|slides|notes)",
    r"(?:请|以后|今后)?(?:一直|总是|始终|永远|都|统一)用(?:中文|英文|英语|简体|繁体|普通话)",
    r"用(?:中文|英文|英语)回复",
    r"(?:回答|回复|答复|解释|总结)[^。！!？?]{0,8}(?:请|尽量|不要|别|一律|统一|都)",
    r"(?:文档|代码|回复|回答|邮件|报告|注释|总结|翻译)[^。，,]{0,10}请", r"请(?:用|尽量|不要|别|少|多|始终|一直|务必)",
    r"(?:别|不要|不用)(?:给我|跟我|向我|再给我)(?:推荐|推|发|讲|说)",
    r"给我(?:发|写|推|做|整理|准备|推荐)?的[^。]{0,12}(?:别|不要|一律|都用|请用|统一|尽量)",
    r"(?:别|不要|不用)(?:安排|打扰|约|找|叫|打电话给|发消息给)", r"(?:请|你|就|以后|直接|可以)(?:叫我|称呼我)",
    r"^(?:叫我|称呼我)", r"(?:跟|和|对|给)我(?:说话|聊天|讲话|沟通|解释|写|讨论|介绍)",
    r"(?:讲|解释|说|写|回答|介绍|教)[^。，,]{0,6}的时候", r"(?:推荐|安排|订|规划|选)[^。，,]{0,8}的时候",
    r"优先(?:考虑|选|推荐|用|安排)",
)
_LIKE_ADVERBS = (
    r"really|just|much|absolutely|do|don't|do not|kind of|kinda|totally|also|still|generally|mostly|actually|"
    r"truly|honestly|genuinely|definitely|secretly|quite|usually|always|never|tend to|have always|'ve always"
)
# Phrasal verbs that can open "X over Y" without it being a choice between X and Y.
_NOT_A_CHOICE = r"hand|take|come|go|turn|look|think|get|move|switch|roll|run|pass|fall|keep|start|pull|put|hold|" \
                r"win|won|it|that|this|game"
PREFERENCE = _rx(
    rf"I (?:(?:{_LIKE_ADVERBS}) )*(?:prefer|like|love|enjoy|hate|dislike|adore|detest|loathe|fancy)",
    r"I (?:can't|cannot|can not) stand", r"I'?d (?:much )?rather", r"I would (?:much )?rather", r"rather than",
    r"I (?:don't|do not|never) (?:really )?(?:like|enjoy|eat|drink|smoke|watch|want|care for|do)",
    r"I (?:usually|always|normally|typically|generally|tend to|never|rarely|mostly|only)", r"I want (?!to\b)",
    r"I'?d prefer", r"not (?:a|the|much of a) (?:big |huge )?fan of", r"I'm (?:a |such a |a big |a huge )?fan of",
    r"big fan of", r"(?:not )?big on", r"I'm (?:really |so |very |totally |not |big |also )?into\b",
    r"(?:my|the) favou?rite", r"my go-?to", r"(?:is|are) my (?:weakness|thing|jam|favou?rite)",
    r"works? (?:way |much |a lot )?better for me", r"better for me", r"I work best", r"my best work",
    r"my most productive", r"I (?:find|think) \w+ (?:easier|better|nicer)", r"helps? me (?:focus|relax|sleep|"
    r"think|concentrate|unwind|wake up)", r"makes? me (?:anxious|nervous|happy|uncomfortable|sick)",
    r"the \w+er the better", r"how I roll", r"nothing beats", r"can't beat", r"there's nothing like",
    r"(?:can't|cannot) get enough", r"no contest", r"I'?m (?:a )?(?:vegetarian|vegan|pescatarian)",
    r"I'm (?:not )?a (?:morning|night) person", r"more of an? \w+ person", r"I'm an? \w+ person", r"night owl",
    r"early bird", r"(?:is|are) for \w+,? not", r"if (?:at all )?possible",
    r"^[^,.;]{1,40},\s*please\b", r",\s*(?:always|never \w+)\b", r",\s*ever\s*[.!]?\s*$",
    r"(?:every time|any day|all day long)\s*[.!]?\s*$", rf"^(?!(?:{_NOT_A_CHOICE})\b)\w+(?: \w+)? over \w+",
    r"我?(?:很|最|比较|更|特别|挺|还是|一向|真的|超)?(?:喜欢|爱吃|爱喝|爱看|爱玩|爱听)", r"不喜欢", r"不爱",
    r"偏好", r"偏向", r"偏爱", r"更愿意", r"宁愿", r"宁可", r"讨厌", r"受不了", r"接受不了", r"忍不了", r"受够",
    r"更倾向", r"倾向于", r"习惯", r"一向", r"我一般", r"一般(?:都|不|会|去|用|喝|吃|看|只|先|是)", r"平时",
    r"通常", r"总是", r"基本只", r"只(?:看|喝|吃|听|穿|用|买|坐|住|选|订|认)", r"不吃", r"不喝", r"不抽",
    r"(?:很少|从不|从来不|几乎不)(?:喝|吃|看|用|去|玩|穿|坐|点)", r"不太?能(?:吃|喝)", r"(?:吃|喝)不了",
    r"(?:吃|喝|用|看|听|住|穿)不惯", r"不想(?:坐|吃|喝|用|去)", r"没(?:什么|啥|太大|多大)?兴趣", r"感兴趣",
    r"才是正道", r"更舒服", r"更有感觉", r"比起", r"比[^。，,]{1,12}(?:多了|得多)", r"觉得[^。，,]{0,20}(?:更|比较)",
    r"才(?:好吃|好喝|好看|好听|舒服|对味|过瘾)", r"好吃", r"好喝", r"最(?:好|棒|香)的", r"最爱", r"口味",
    r"顺手", r"直接[^。]{0,10}就(?:好|行|可以)", r"尽量", r"我更容易", r"夜猫子",
    r"(?:does|do) (?:nothing|it|wonders) for me", r"that's (?:just )?my (?:rule|thing|style|way)",
)

# --- decision -----------------------------------------------------------------------------------------

DECISION = _rx(
    r"(?:we|I|they|the team|team|we've|I've|we have|I have|we've all|everyone) (?:finally |just |have |has )?"
    r"(?:decided|chose|chosen|picked|settled on|agreed to|agreed on|opted|went with|voted)",
    r"(?:we|I|they|the team|everyone|we all|all) (?:\w+ )?agreed", r"decided (?:to|on|that|against)",
    r"^decided\b", r"decision (?:is|was) (?:to|made)", r"decision\s*:", r"it'?s decided", r"final answer",
    # "Let's go with", "let's push the launch"; not "let's see", "let's grab lunch".
    r"let'?s (?!(?:see|grab|get|talk|chat|think|have|play|eat|catch|meet|hang|continue|start over|go(?! with| for))\b)"
    r"\w+",
    r"(?:going|go|goes) with", r"settled on", r"opted for", r"(?:picked|chose) \w+(?: \w+)? over", r"stick with",
    r"go ahead with", r"standardi[sz](?:e|ed|ing) on", r"switch(?:ed|ing)? (?:\w+ ){0,3}to",
    r"(?:moving|move|moved|migrat(?:e|ing|ed)) (?:\w+ ){0,3}(?:from|to)", r"roll(?:ing|ed)? (?:\w+ )?out",
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
    r"(?:I'm|I am|we're|we are) (?:done with|deleting|quitting|leaving|closing)",
    r"(?:we're|we are|I'm|I am|we've|I've) (?:not|no longer) (?:renewing|going|hiring|using|buying|continuing|"
    r"extending|moving|doing|taking|accepting|supporting|offering|shipping)",
    r"next (?:year|month|quarter|semester|spring|summer|fall|autumn|winter)\b[^.]*\b(?:I'm|I am|we're|we are|"
    r"I'll|we'll|I will|we will)\b",
    r"(?:is|are) now [^,.]+,? not",
    # Orders about a setting are decisions; orders about the text at hand ("redo that last table") are not.
    r"^(?:ok,? |so,? |please |then |alright,? )?(?:change|set|bump|raise|lower|increase|decrease|reduce|switch|"
    r"move|rename|update|make|extend|shorten|cap|limit)\b[^.?]*\bto\b",
    r"^(?:ok,? |so,? |please |then |alright,? )?(?:cap|limit|freeze|pause|disable|enable|turn (?:off|on)|"
    r"deprecate|sunset|archive|lock|double|halve|postpone|delay|cancel|schedule|rename|drop)\b"
    r"(?![^.?]*(?:\b(?:this|that|these|those)\b(?! (?:quarter|week|month|year|sprint|release|time))"
    r"|\b(?:above|below|last)\b))",
    r"(?:goes|go|going|is going|moves|changes|changed|change|bumped|raised|lowered|increased|decreased|reduced|"
    r"cut|extended|shortened) (?:\w+ ){0,3}from\b[^.]*\bto\b",
    r"决定", r"定为", r"定成", r"(?<![一确固稳肯规预约否])定了", r"定下", r"定在", r"就这么定", r"就定", r"敲定",
    r"选定", r"拍板", r"就这样吧", r"最(?:后|终)(?:买|选|定|决定|用|挑)", r"就(?:用|选|报|买|订|定|按)", r"选了",
    r"改成", r"改为", r"改用", r"改在", r"改到", r"改去", r"换成", r"换到", r"换用", r"开始用", r"替代", r"取代",
    r"设置成", r"设置为", r"设为", r"设成", r"调到", r"调成", r"调整为", r"调整到", r"缩短到", r"缩短为",
    r"延长到", r"延长为", r"提高到", r"提升到", r"降到", r"降低到", r"上调到", r"下调到", r"挪到", r"移到",
    r"推到", r"提前到", r"推迟到", r"延期到", r"迁移到", r"迁移至", r"迁到", r"搬迁到",
    r"(?:^|[，,。；;：:\s])(?:以后|今后)", r"(?:以后|今后)(?:都|就|统一|一律|每|改|不)",
    r"从(?:今天|现在|下周|下个月)(?:起|开始)", r"从[^，。,]{1,8}(?:开始|起)",
    r"(?:下个?(?:版本|月|周|季度|学期)|今年|明年|今天|明天|本月|这个月|本周|这周|下半年|年后|节后)(?:起|开始)",
    r"起改", r"不再", r"统一(?!了)", r"打算", r"准备(?:把|从|换|改|用|开始)", r"不要了", r"取消了", r"砍掉",
    r"砍了", r"暂停", r"先不(?:做|上|搞|买|招)", r"不做了", r"不买了", r"不去了",
)
# Too weak to beat a stated like or dislike: "I don't like calls; text me instead" is a preference.
WEAK_DECISION = _rx(r"instead of", r"instead", r"rather than", r"那就")

# --- health, safety, security, identity ----------------------------------------------------------------

HEALTH = _rx(
    r"allerg(?:ic|y|ies)", r"anaphyla\w*", r"epipen", r"diabet(?:es|ic)", r"insulin", r"hypertension",
    r"blood pressure", r"asthma", r"inhalers?", r"epilep(?:sy|tic)", r"seizures?", r"heart condition",
    r"pacemaker", r"celiac", r"coeliac", r"medications?", r"meds", r"prescri(?:bed|ption)", r"\d+\s?(?:mg|mcg)",
    r"blood type", r"pregnan(?:t|cy)", r"chronic", r"kidney (?:disease|stones?|failure|transplant)", r"cancer",
    r"antidepressants?", r"dialysis", r"intoleran(?:t|ce)", r"disorder", r"takes? \w+ (?:pills?|tablets?)",
    r"blood thinners?", r"aspirin", r"warfarin", r"metformin", r"ibuprofen", r"paracetamol", r"acetaminophen",
    r"statins?", r"antibiotics?", r"levothyroxine", r"lisinopril", r"sertraline", r"fluoxetine",
    r"过敏", r"糖尿病", r"胰岛素", r"血压", r"哮喘", r"癫痫", r"心脏病", r"起搏器", r"病史", r"血型", r"怀孕",
    r"孕期", r"慢性", r"抑郁症", r"不耐受", r"乳糖不耐", r"手术", r"\d+\s*毫克", r"阿司匹林", r"华法林",
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
IDENTITY = _rx(
    r"my name is", r"my name's", r"my (?:full|legal|first|last) name", r"I'm called",
    r"(?:everyone|people|friends|they|most people|my friends) (?:\w+ )?calls? me",
    r"我叫", r"我的名字", r"我姓", r"名字叫", r"(?:大家|朋友们?|别人)(?:都|一般)?叫我",
)
# "I'm Sofia Marquez": a capitalised name right after "I'm" (case matters here, so a pattern of its own).
_INTRODUCTION = re.compile(r"^(?:hi,? |hello,? )?I'?m [A-Z][a-z]+(?: [A-Z][a-z'-]+)+\b(?! (?:and|or)\b)")

# --- temporary ----------------------------------------------------------------------------------------

MOOD = _rx(
    r"(?:so|very|really|kinda|kind of|a bit|a little|super|pretty|totally|feeling|feel|I'm|I am|getting) "
    r"(?:tired|sleepy|exhausted|bored|hungry|grumpy|stressed|sick|annoyed|cranky|busy|sad|happy|excited|"
    r"nervous|anxious|cold|hot|thirsty|sore|drained|burnt out|overwhelmed|frustrated|lazy|meh|down|off|"
    r"starving|freezing|wiped|knackered|beat)",
    r"I'm (?:starving|freezing|exhausted|knackered|wiped out|beat)", r"don't mind me", r"^ugh\b", r"^meh\b",
    r"I'm feeling", r"in a (?:good|bad|great|weird) mood",
    r"好累", r"累死", r"累了", r"困", r"好烦", r"有点烦", r"烦死", r"饿", r"无聊", r"不想干活", r"心情", r"续命",
    r"头疼", r"头痛", r"郁闷", r"崩溃了", r"好开心", r"难受", r"emo", r"摸鱼",
)
# Moods are said in a few words; in a longer sentence a mood word is incidental.
SHORT = 40
REQUEST = _rx(
    r"^(?:hey,? |wait,? |ok,? |okay,? |so,? |also,? |and |quick question,? )?(?:can|could|would|will) you",
    r"^(?:hey,? |wait,? |ok,? |also,? )?(?:please |pls )?(?:help me|tell me|show me|remind me|translate|"
    r"summari[sz]e|explain|find|look up|check|draft|fix|redo|write|rewrite|generate|calculate|convert|list|"
    r"compare|proofread|book|search|recommend|suggest|name|create|plan|think of|come up with|brainstorm|"
    r"give me (?:a|an|some|the|\d+|one|two|three|four|five|ten|few|more))\b",
    r"[?？]\s*$", r"[吗呢]\s*[?？。]?\s*$", r"吧\s*[。!！~～]?\s*$", r"一下",
    r"^请?(?:你)?(?:给我|替我|为我)", r"^请?(?:翻译|总结|解释|查|写|算|推荐)",
)
# Comings and goings: "brb", "一会儿聊".
AWAY = _rx(
    r"brb", r"gtg", r"g2g", r"afk", r"ttyl", r"be right back", r"got to go", r"gotta go", r"off to",
    r"heading (?:out|to|home|off)", r"grabbing", r"stepping (?:out|away)", r"be back in",
    r"back in \d+ ?(?:min|minutes|mins|sec)", r"(?:going to|gonna) (?:grab|get|go|head|take a|bed|sleep|the gym)",
    r"(?:I'm|I am) (?:in a meeting|on my way|on a call|driving|at lunch|stuck in traffic|running late|back)",
    r"^(?:on a call|in a meeting|driving|at the gym|busy)\b", r"talk (?:to you )?later",
    r"(?:text|call|ping|message) me later", r"one sec", r"hold on", r"let me (?:think|check|see)",
    r"一会儿?(?:聊|说|见|回)", r"(?:晚上|晚点|回头|明天|下午|待会|等会)(?:聊|说|见|再聊)", r"回聊", r"先忙", r"先走",
    r"先撤", r"下班", r"去开个?会", r"吃饭去", r"去吃个?饭", r"在路上", r"来了来了", r"接个电话", r"回个电话",
    r"稍等", r"等我一下",
)
ACTIVITY = _rx(
    r"never ?mind", r"nvm", r"forget it", r"found it", r"right now", r"at the moment", r"for now", r"tonight",
    r"this (?:morning|afternoon|evening)", r"today", r"again", r"you know me", r"just kidding", r"jk",
    r"^(?:lol|lmao|haha\w*|hehe|omg|wow|ugh|hmm+)\b", r"^(?:good )?(?:morning|evening|night|afternoon)\s*[!,.]",
    r"^(?:hi|hey|hello|yo)\b\s*[!,]",
    r"^(?:that's|that is|this is|so|how|lol,? that's) (?:so )?(?:hilarious|funny|cool|great|awesome|amazing|"
    r"nice|wild|crazy|cute|sad|annoying|weird|interesting|true|fair)",
    r"一会儿?", r"待会", r"等会", r"等一下", r"等下", r"等等", r"晚点", r"改天", r"先去", r"马上", r"来了",
    r"算了", r"不用了", r"^(?:谢谢|多谢|感谢|谢啦|thanks|thank you|thx)",
    r"回来再说", r"再说吧", r"我想想", r"让我想想", r"我考虑一下", r"考虑考虑",
    r"我(?:现在)?在(?:地铁|公交|路上|车上|开会|外面|机场|高铁|飞机|排队|加班)",
    r"现在在", r"正在", r"今天", r"今晚", r"又是", r"^哈哈", r"^嘿",
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
    if _strong_past(text):
        return Kind.EPISODE
    if INSTRUCTION.search(text):
        return Kind.PREFERENCE
    if DECISION.search(text):
        return Kind.DECISION
    if HEALTH.search(text):
        return Kind.FACT
    mood = bool(MOOD.search(text))
    # "今天下雨了，好烦", "我先忙了，晚上聊": said in passing, though something happened; a stated taste
    # still wins ("我宁愿…那样太累了").
    if (mood or AWAY.search(text)) and len(text) <= SHORT and not PREFERENCE.search(text):
        return Kind.TEMPORARY
    if _weak_past(text):
        return Kind.EPISODE
    if PREFERENCE.search(text):
        return Kind.PREFERENCE
    if WEAK_DECISION.search(text):
        return Kind.DECISION
    if mood or REQUEST.search(text) or AWAY.search(text) or ACTIVITY.search(text):
        return Kind.TEMPORARY
    if _narrative(text):
        return Kind.EPISODE
    return Kind.FACT


def classify(text: str) -> Classification:
    """Kind, salience (`importance`, 0..1), priority, pin and security flag of one utterance, by rules."""
    prepared = _prepare(text)
    pin = bool(PIN.search(prepared))
    request, body = _strip_pin(prepared) if pin else ("", prepared)
    kind = next((named for cue, named in _NAMED_KIND if cue.search(request)), None) or _kind(body)
    temporary = kind is Kind.TEMPORARY
    # A question about passwords is not a secret and an aside about a headache not a medical record.
    health = bool(HEALTH.search(body)) and not temporary
    security = bool(SECURITY.search(body)) and not temporary
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
