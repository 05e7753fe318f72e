"""Two statements side by side: which words they share and where they differ, and what the differences are.

The update judge (`ingest.judge`) and the read-time ordering (`recall.succession`) ask the same questions
of a pair of texts in English or Chinese: do they differ in a value (a number, a name, a place, a version,
an amount), in whose or which thing they are about (my sister / my brother, the work laptop / the personal
one, 妈妈 / 爸爸), or only in wording? This module answers with an alignment of the two token sequences
(difflib over normalised tokens: Snowball stems for English, jieba words for Chinese, numbers in digits
whether written "8", "八" or "eight"), so the answer rests on what differs, not on one phrasing.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from ebbing.text.placeholders import PLACEHOLDER
from ebbing.text.terms import STOPWORDS, stem

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LETTER = rf"(?:(?![{_HAN}])[^\W\d_])"
# A secret's placeholder ("[secret:code#2eb0]") is one value: its tag is a keyed hash of the secret, so two tags
# are two values. Read as letters and digits, the random tag gave random numbers and words to every judgement.
_TOKEN = re.compile(rf"(?P<secret>{PLACEHOLDER})|(?P<num>\d+(?:[.:,/-]\d+)*)"
                    rf"|(?P<han>[{_HAN}]+)|(?P<word>{_LETTER}+(?:'{_LETTER}+)?)")
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000}
_CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万]+")
_EN_NUMBERS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_EN_NUMBERS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "hundred": "100",
                    "half": "0.5", "noon": "12", "midnight": "0"})

# Words that say whose thing or which one of several a statement is about. A pair that differs in one of
# these is about two things (my sister / my brother), however alike the rest is. A short list of kin, roles,
# places of use and environments in both languages; it is one signal among several (`judge`).
PEOPLE = frozenset(
    """sister brother mother mom mum father dad parent wife husband partner girlfriend boyfriend son daughter kid
    child children baby grandma grandmother grandpa grandfather aunt uncle cousin niece nephew friend roommate
    neighbour neighbor colleague coworker boss manager intern client customer teammate
    妈妈 母亲 妈 老妈 爸爸 父亲 爸 老爸 哥哥 弟弟 姐姐 妹妹 哥 弟 姐 妹 老婆 老公 妻子 丈夫 媳妇 对象 男朋友 女朋友
    儿子 女儿 大女儿 小女儿 大儿子 小儿子 孩子 宝宝 爷爷 奶奶 外公 外婆 姥姥 姥爷 叔叔 阿姨 舅舅 姑姑 表哥 表姐 表妹
    表弟 朋友 室友 邻居 同事 老板 领导 经理 客户 实习生 组长""".split())
QUALIFIERS = PEOPLE | frozenset(
    """work personal home office private company school older younger elder eldest youngest big little
    first second third other staging production prod dev test qa backup primary secondary main side
    left right front back upstairs downstairs morning evening weekday weekend summer winter
    公司 家里 家 单位 办公室 学校 个人 工作 私人 测试 生产 线上 线下 开发 预发 备用 主 副 老 大 小 第一 第二 另一
    周末 工作日 早上 晚上 夏天 冬天""".split())
# Stemmed once, so they compare with the stems tokens carry.
_QUALIFIER_KEYS = frozenset(stem(w) if w.isascii() else w for w in QUALIFIERS)
PEOPLE_KEYS = frozenset(stem(w) if w.isascii() else w for w in PEOPLE)

# Words that say a value changed or is new. Also one signal among several, never the gate.
CHANGE_CUES = frozenset(
    """now new newly changed change changes switched switch moved move moving relocated updated update
    instead anymore longer replaced replace became become becomes started start starting stopped stop quit
    actually correction corrected turns turned since from pushed postponed moved rescheduled upgraded downgraded
    promoted hired joined left sold bought got traded swapped dropped went going
    改 改成 改为 改到 换 换成 换了 变成 变为 搬 搬到 搬家 现在 如今 目前 新 最新 不再 已经 开始 以后 从此
    之后 更正 其实 调整 调到 延到 推迟 提前 升级 降级 卖 买 辞职 入职 跳槽 离职 转 取消 不用 不吃 戒""".split())
_CUE_KEYS = frozenset(stem(w) if w.isascii() else w for w in CHANGE_CUES)


# Words that say how someone feels about a thing or how sure they are, not what the thing is: two sayings may
# differ in these freely ("I really prefer dark mode" ~ "dark mode, please, always").
_STANCE = frozenset("""prefer like love enjoy better best favourit favorit alway realli pleas use want would
    rather much more most quit pretty definit actual just also still generally usual usually mostli me for my
    what which
    喜欢 更 最 偏好 请 用 爱 最爱 比较 还是 总是 一直 习惯 真的 非常 特别 都 给 一下 一点 觉得 感觉 最好
    favorit favourit prefer honest honestly basic basically definit totally
    absolut absolutely generally typically normally usually mostly def probabl probably guess think feel
    喜欢 偏好 讨厌 不喜欢 受不了 爱 最爱 更 最 比较 真的 非常 特别 确实 其实 基本 基本上 一般 通常 平时 总是 一直
    还是 觉得 感觉 请 麻烦 记得 记住 哈 哈哈 啦 呀 嘛""".split())
_FUNCTION_EN = frozenset("""im ive id ill its theres thats dont doesnt didnt cant wont isnt arent wasnt
    i'm i've i'd i'll it's there's that's don't doesn't didn't can't won't isn't aren't wasn't
    s t m re ve d ll hey hi oh btw fyi ok okay yeah yep so well anyway though""".split())


# Words after which a number names one thing among several (an identifier), in the stemmed form tokens carry.
_IDENTIFIERS = frozenset(stem(w) for w in """number no id ticket issue room case order item step note option
    flight gate seat table bus line platform apartment apt unit suite building floor locker pr""".split())


@functools.cache
def _posseg() -> Any:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg


def chinese_number(text: str) -> str | None:
    """"三" -> "3", "十二" -> "12", "两千五" -> "2500"; None when it is not a number."""
    if not text or any(ch not in _CN_DIGITS and ch not in _CN_UNITS for ch in text):
        return None
    if all(ch in _CN_DIGITS for ch in text):
        return "".join(str(_CN_DIGITS[ch]) for ch in text) if len(text) > 1 else str(_CN_DIGITS[text])
    total, section, digit = 0, 0, None
    last_unit, zero = 1, False
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
            zero = zero or digit == 0
        else:
            unit = _CN_UNITS[ch]
            if unit == 10_000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
            last_unit, zero = unit, False
    if digit is not None:  # "两千五" is 2500 and "一万二" 12000, but "一百零八" is 108
        section += digit * (last_unit // 10 if last_unit >= 100 and not zero else 1)
    return str(total + section)


@dataclass(frozen=True)
class Token:
    key: str  # what is compared: a stem, a Chinese word, a number in digits
    surface: str
    tag: str  # "num", "name", "qualifier", "cue", "stance", "function", "word"


_UNITS = frozenset("""月 号 日 点 点半 块 块钱 元 岁 年 个 天 周 号楼 层 楼 分 分钟 小时 次 斤 公斤 米 公里 千米 倍
    成 折 人 台 辆 只 套 间 室 期 版 代 级 名 位 家 本 张 杯 度 寸 英寸 G T 核""".split())


def _han_tokens(run: str) -> list[Token]:
    out = []
    for piece in _posseg().cut(run):
        word, flag = piece.word, piece.flag
        lead = _CN_NUMBER.match(word)
        number = chinese_number(lead.group()) if lead else None
        rest = word[lead.end():] if lead else word
        if number is not None and (not rest or rest in _UNITS):  # "三", "十二", "三月", "八号", "两千块"
            out.append(Token(number, word, "num"))
            if rest:
                out.append(Token(rest, rest, "function"))
        elif word in _QUALIFIER_KEYS:
            out.append(Token(word, word, "qualifier"))
        elif word in _CUE_KEYS:
            out.append(Token(word, word, "cue"))
        elif word in _STANCE:
            out.append(Token(word, word, "stance"))
        elif word in STOPWORDS or flag in ("uj", "ul", "uz", "ug", "ud", "uv", "y", "e", "o", "c", "p", "x"):
            out.append(Token(word, word, "function"))
        elif flag in ("nr", "ns", "nt", "nz", "nrt", "nrfg", "eng"):
            out.append(Token(word, word, "name"))
        else:
            out.append(Token(word, word, "word"))
    return out


def tokens(text: str) -> list[Token]:
    """The text as comparable tokens, in order."""
    return list(_tokens(text))


@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[Token, ...]:
    """Cached: ranking compares the same few texts again and again."""
    normal = unicodedata.normalize("NFKC", text)
    out: list[Token] = []
    for match in _TOKEN.finditer(normal):
        secret, number, han, word = match.group("secret", "num", "han", "word")
        if secret is not None:
            out.append(Token(secret, secret, "num"))
        elif number is not None:
            # "note number 5", "room 101", "ticket 4521": a number after such a word says which one, not a value
            which = bool(out) and out[-1].key in _IDENTIFIERS
            out.append(Token(number.replace(",", ""), number, "qualifier" if which else "num"))
        elif han is not None:
            out.extend(_han_tokens(han))
        else:
            assert word is not None
            lower = word.casefold()
            base, _, clitic = lower.partition("'")
            base = base if clitic else lower
            key = stem(base)
            if base in _EN_NUMBERS:
                out.append(Token(_EN_NUMBERS[base], word, "num"))
            elif key in _QUALIFIER_KEYS or base in _QUALIFIER_KEYS:
                out.append(Token(key, word, "qualifier"))
            elif key in _CUE_KEYS or base in _CUE_KEYS:
                out.append(Token(key, word, "cue"))
            elif key in _STANCE or base in _STANCE:
                out.append(Token(key, word, "stance"))
            elif base in STOPWORDS or base in _FUNCTION_EN:
                out.append(Token(key, word, "function"))
            elif _is_name(word, match.start(), normal):
                out.append(Token(key, word, "name"))
            else:
                out.append(Token(key, word, "word"))
    return tuple(out)


def _is_name(word: str, start: int, text: str) -> bool:
    """A capitalised or mixed-case Latin word not opening a sentence ("Neovim", "iPhone", "PostgreSQL"), or
    any Latin word inside Chinese text (product and place names there are written in Latin letters)."""
    if re.search(rf"[{_HAN}]", text):
        return True
    if any(ch.isupper() for ch in word[1:]) or any(ch.isdigit() for ch in word):
        return True
    if not word[0].isupper():
        return False
    before = text[:start].rstrip()
    return bool(before) and before[-1] not in ".!?:;\"'(“‘-—"


@dataclass(frozen=True)
class Span:
    """One place where the two texts differ: the old side's tokens and the new side's."""

    old: tuple[Token, ...]
    new: tuple[Token, ...]

    def tags(self) -> set[str]:
        return {t.tag for t in self.old + self.new}


@dataclass
class Alignment:
    old: list[Token]
    new: list[Token]
    spans: list[Span] = field(default_factory=list)
    shared: int = 0  # content tokens both texts hold, in order

    def only(self, side: str, *tags: str) -> set[str]:
        """Keys that one side (`"old"` or `"new"`) holds and the other does not, of the given tags."""
        mine = self.old if side == "old" else self.new
        theirs = {t.key for t in (self.new if side == "old" else self.old)}
        return {t.key for t in mine if t.tag in tags and t.key not in theirs}

    def keys(self, side: str, *tags: str) -> set[str]:
        return {t.key for t in (self.old if side == "old" else self.new) if t.tag in tags}


CONTENT = ("word", "name", "num", "qualifier")


@functools.lru_cache(maxsize=4096)
def align(old_text: str, new_text: str) -> Alignment:
    """Cached (ranking compares the same pairs of hits search after search): treat the result as read-only."""
    old, new = tokens(old_text), tokens(new_text)
    return align_tokens(old, new)


def align_tokens(old: Sequence[Token], new: Sequence[Token]) -> Alignment:
    matcher = SequenceMatcher(None, [t.key for t in old], [t.key for t in new], autojunk=False)
    result = Alignment(list(old), list(new))
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            result.shared += sum(1 for t in old[a0:a1] if t.tag in CONTENT)
        else:
            span = Span(tuple(old[a0:a1]), tuple(new[b0:b1]))
            if span.tags() - {"function"}:
                result.spans.append(span)
    return result
