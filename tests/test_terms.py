from __future__ import annotations

import pytest

from ebbing.text.terms import match_expression, query_terms, terms


@pytest.mark.parametrize(("text", "expected"), [
    ("我的数据库连接超时阈值是 30s", {"数据库", "超时", "阈值", "30s", "30"}),
    ("超时阈值", {"超时", "阈值"}),
    ("Connection timeouts were raised", {"connect", "timeout", "rais"}),
    ("ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ", {"fullwidth", "text"}),
    ("GPT-4o 和 Claude 🎉", {"gpt", "4o", "claud"}),
])
def test_terms_cover_english_and_chinese(text: str, expected: set[str]) -> None:
    assert expected <= set(terms(text))


def test_stop_words_and_noise_are_dropped() -> None:
    assert terms("the a of 的 是 我") == []
    assert "s" not in terms("30s")


def test_match_expression_quotes_every_term() -> None:
    assert match_expression(query_terms('say "hi" OR NEAR(x) NOT')) == '"say" OR "hi" OR "near" OR "x"'
