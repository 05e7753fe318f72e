"""Keyword terms for English and Chinese text.

SQLite's unicode61 tokenizer treats a run of Chinese characters as one token, so Chinese is segmented
here with jieba (search mode, which also yields the shorter words inside long ones) and English words
are stemmed with Snowball. The index and the queries go through the same function, so a term found in
a query is spelled exactly as in the index, and keyword coverage can be computed on these terms.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from typing import Any

import snowballstemmer

# Han, Hiragana/Katakana, Hangul: scripts written without spaces between words.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_RUN = re.compile(rf"([{_CJK}]+)|([^\W_]+)")
_ALNUM_SPLIT = re.compile(r"\d+|[^\W\d_]+")

STOPWORDS = frozenset(
    """a am an and are as at be but by can could did do does for from had has have he her his how i if
    in into is it its me my of on or our she so that the their them then there these they this to
    was we were what when where which who why will with would you your about just also than too very
    not no yes been being get got go going make made know think want need like really much many some
    any one
    的 了 是 我 你 他 她 它 们 我们 你们 吗 呢 吧 啊 和 与 在 有 也 就 都 而 及 着 把 被
    这 那 这个 那个 一个 什么 怎么 为什么 哪 哪个 么 之 还 又 个 很 太 请 从 到 给 对 让""".split()
)


_STEMMER = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball is pure Python; words repeat, so caching makes stemming nearly free."""
    return str(_STEMMER.stemWord(word))


@functools.cache
def _jieba() -> Any:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def segment(text: str) -> list[str]:
    """`text` cut into words by jieba's precise mode, every character kept (so the words join back into it)."""
    return list(_jieba().cut(text))


def _han_words(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [w for w in _jieba().cut_for_search(run) if w.strip()]


def terms(text: str) -> list[str]:
    """Index terms of `text`, in order, stop words removed (duplicates kept: they count for BM25)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    for match in _RUN.finditer(normal):
        han, word = match.groups()
        if han:
            out.extend(w for w in _han_words(han) if w not in STOPWORDS)
            continue
        if word in STOPWORDS:
            continue
        parts = _ALNUM_SPLIT.findall(word)
        out.append(stem(word) if len(parts) == 1 and not word.isdigit() else word)
        if len(parts) > 1:  # "30s" is also "30", "gpt4o" also "gpt" and "4"
            out.extend(p for p in parts if p not in STOPWORDS and (len(p) > 1 or p.isdigit()))
    return out


def query_terms(text: str) -> list[str]:
    """Distinct terms of a query, in first-seen order."""
    return list(dict.fromkeys(terms(text)))


def match_expression(words: list[str]) -> str:
    """An FTS5 MATCH expression that matches any of the words (each quoted, so no operator leaks in)."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
