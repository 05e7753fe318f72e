"""A fact's slot: the keyword terms of its attribute, without modifiers such as "new" or "新", so
"超时阈值" and "数据库连接超时阈值" name one slot. The write path (ingest.facts) keys facts by it and recall
looks facts up by it, so it lives below both."""

from __future__ import annotations

from ebbing.text.terms import terms

MODIFIERS = frozenset("new current old previous latest now present 新 新的 现在 现在的 目前 目前的 当前 当前的 旧 "
                      "旧的 之前 之前的 原来 原来的 最新 最新的 then 那 这".split())
# Words an attribute may end with that say what kind of value it is, not what it is about (stemmed as `terms`
# stems them: "threshold", "valu"): "超时阈值" is about the timeout.
# Kept short on purpose: "phone number", "log level", "数据库配置" are not what "phone", "log", "数据库" name.
GENERIC_HEADS = frozenset(terms("threshold value") + "阈值 值 数值".split())


def slot_terms(attribute: str) -> frozenset[str]:
    return frozenset(t for t in terms(attribute) if t not in MODIFIERS)


def slot_head(attribute: str) -> str | None:
    """The attribute's head: its last keyword term ("timeout" in "database connection timeout", "超时" in
    "数据库连接超时阈值"), passing over generic trailing words such as "threshold", "value", "阈值" that
    any attribute may end with ("超时阈值" and "数据库连接超时" both head on "超时"). Two slots where one's
    terms are a subset of the other's are the same slot only if their heads agree: "database" is not
    "database connection timeout"."""
    words = [t for t in terms(attribute) if t not in MODIFIERS]
    specific = [t for t in words if t not in GENERIC_HEADS]
    return (specific or words)[-1] if words else None


def same_slot(new: frozenset[str] | set[str], new_head: str | None, old: frozenset[str] | set[str],
              old_head: str | None) -> bool:
    """One attribute names the other: "超时阈值" and "数据库连接超时阈值" are the same slot (same terms, or one's
    terms a subset of the other's with the same head term); "the database" and "the database timeout" are not."""
    if not new or not old:
        return False
    if new == old:
        return True
    return (new <= old or old <= new) and new_head is not None and new_head == old_head
