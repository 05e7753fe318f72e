"""Is a new memory a restatement of one already stored?

Embeddings alone cannot tell "I prefer tea in the morning" from "I prefer coffee in the morning"
(the default model puts them closer than most paraphrases), so a restatement needs both:
- meaning: the pair's calibrated vector z-score (see `recall.search.Background`) at least `min_z`;
- words: the same numbers, and no *substitution*: it may add or drop words ("I really prefer dark
  mode" ~ "dark mode, please, always"), but where each side has a content word the other lacks (tea
  vs coffee, Rust vs Python) they are different memories. One substitution passes only when the
  meaning is very close (z >= `swap_z`: "I prefer Rust for backend services" ~ "For backend work I
  like Rust best"); two never do. Measured on a small bilingual set of paraphrases and near-misses,
  this merged no near-miss and missed many paraphrases with synonyms ("theme" for "mode"): a missed
  merge costs a duplicate record, a wrong one loses a memory, so the rule errs on the side of keeping.
"""

from __future__ import annotations

import re
from collections.abc import Collection

# Words that say how someone feels about a thing, not what the thing is: they may differ freely.
STANCE = frozenset(
    """prefer like love enjoy better best favourit favorit alway realli pleas use want would rather much more
    most quit pretty definit actual just also still generally usual usually mostli me for my what which
    喜欢 更 最 偏好 请 用 爱 最爱 比较 还是 总是 一直 习惯 真的 非常 特别 都 给 一下 一点 觉得 感觉 最好""".split()
)
_NUMBER = re.compile(r"\d+(?:[.:]\d+)*")


def numbers(text: str) -> frozenset[str]:
    return frozenset(_NUMBER.findall(text))


def is_restatement(new_text: str, new_terms: Collection[str], old_text: str, old_terms: Collection[str],
                   z: float, min_z: float = 6.0, swap_z: float = 9.5) -> bool:
    if z < min_z or numbers(new_text) != numbers(old_text):
        return False
    new_only = {t for t in set(new_terms) - set(old_terms) if t not in STANCE}
    old_only = {t for t in set(old_terms) - set(new_terms) if t not in STANCE}
    swaps = min(len(new_only), len(old_only))
    return swaps == 0 or (swaps == 1 and z >= swap_z)
