"""A rule-based first guess at what a new memory is: its kind, salience, priority and pin.

English and Chinese cue phrases; the first rule that matches decides the kind. A caller's explicit
values always win over these guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ebbing.model import Kind, Priority


@dataclass(frozen=True)
class Classification:
    kind: Kind
    importance: float
    priority: Priority
    pin: bool
    security: bool = False  # secrets, credentials, safety-critical facts: they fade slower


def _cues(*phrases: str) -> re.Pattern[str]:
    parts = [rf"\b{re.escape(p)}\b" if p.isascii() else re.escape(p) for p in phrases]
    return re.compile("|".join(parts), re.IGNORECASE)


PIN = _cues("always remember", "remember this", "don't forget", "do not forget", "never forget",
            "永远记住", "一定要记住", "记住这", "请记住", "别忘了", "不要忘记", "很重要")
CRITICAL = _cues("allergic", "allergy", "password", "passcode", "api key", "token", "medication",
                 "过敏", "密码", "密钥", "药物", "病史")
ACKNOWLEDGEMENT = re.compile(
    r"^\s*(ok(ay)?|k|thanks?( you)?|thx|got it|sure|cool|nice|great|yes|no|yep|nope|lol|haha+|👍|🙏|"
    r"好的?|好滴|收到|谢谢|多谢|嗯+|哦+|哈哈+|行|可以|明白了?|知道了)[\s.!。！~～]*$",
    re.IGNORECASE,
)
TEMPORARY = _cues("today", "right now", "at the moment", "tonight", "this morning", "so tired", "brb",
                  "今天", "现在", "刚才", "今晚", "好累", "待会")
DECISION = _cues("we decided", "i decided", "decided to", "let's go with", "we will use", "we'll use",
                 "change it to", "change to", "changed to", "switch to", "switched to", "from now on",
                 "我决定", "我们决定", "决定用", "改成", "改为", "换成", "定了", "以后都")
PREFERENCE = _cues("i prefer", "i like", "i love", "i hate", "i dislike", "i enjoy", "favourite", "favorite",
                   "rather than", "我喜欢", "我更喜欢", "我爱", "我讨厌", "我不喜欢", "偏好", "最喜欢", "习惯用")
EPISODE = _cues("yesterday", "last week", "last month", "last year", "we talked", "happened",
                "昨天", "上周", "上个月", "去年", "那次", "发生了")

BASE_IMPORTANCE = {
    Kind.FACT: 0.6, Kind.DECISION: 0.7, Kind.PREFERENCE: 0.6, Kind.TEMPORARY: 0.2,
    Kind.EPISODE: 0.4, Kind.SUMMARY: 0.6,
}


def classify(text: str) -> Classification:
    if ACKNOWLEDGEMENT.match(text):
        kind = Kind.TEMPORARY
    elif DECISION.search(text):
        kind = Kind.DECISION
    elif PREFERENCE.search(text):
        kind = Kind.PREFERENCE
    elif EPISODE.search(text):
        kind = Kind.EPISODE
    elif TEMPORARY.search(text):
        kind = Kind.TEMPORARY
    else:
        kind = Kind.FACT
    pin = bool(PIN.search(text))
    critical = bool(CRITICAL.search(text))
    importance = BASE_IMPORTANCE[kind] + (0.3 if pin or critical else 0.0)
    if pin or critical:
        priority = Priority.P0
    elif kind is Kind.TEMPORARY:
        priority = Priority.P2
    else:
        priority = Priority.P1
    return Classification(kind, round(min(importance, 1.0), 3), priority, pin, critical)
