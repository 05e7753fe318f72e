"""When two memories answer the same question differently, the newer one comes first.

People restate a changed fact in words of their own ("please ship to 12 Oak St" ... "I'm living at 45 Elm
Ave since last week"), and the write-time judge (`ingest.judge`) only retires an old value when it is sure.
So ranking resolves the rest without destroying anything: a hit moves directly above an older hit when

- it is about as relevant to the question (its score at least `score_ratio` of the older one's),
- the two are about the same thing (their own calibrated vector relevance at least `min_pair_z`),
- they were said at different times (`min_gap` apart), and
- the question does not tell them apart: it names nothing that only the older one's differing words hold
  ("where does my *sister* live" keeps the sister's record above the brother's), and the newer one's differing
  words hold no qualifier the question left out (a brother's address is no newer value of mine).

Records the judge did retire (`stale`) never rank above their successor; questions about the past
("what was my old address", "之前的地址") keep the plain ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ebbing.ingest.align import CONTENT, PEOPLE_KEYS, Alignment, align, tokens
from ebbing.recall.search import Background, Scored, is_cjk
from ebbing.store.base import Candidate


@dataclass(frozen=True)
class SuccessionConfig:
    window: int = 12  # how far down the ranking a newer competitor is looked for
    score_ratio: float = 0.7
    min_pair_z: float = 3.0
    min_pull_z: float = 4.0  # a candidate under the floor comes in only when this close to the hit it succeeds
    min_gap: float = 3600.0  # seconds


def _differing(pair: Alignment, side: str) -> set[str]:
    """Content keys in the spans where this side differs from the other."""
    out = set()
    for span in pair.spans:
        mine = span.old if side == "old" else span.new
        out |= {t.key for t in mine if t.tag in CONTENT}
    return out


_SPECIFIC = ("qualifier", "name", "num")


def competes(query_specific: set[str], older: str, newer: str) -> bool:
    """Whether `newer` answers the question in place of `older` (see the module's doc); `query_specific` holds
    the question's qualifiers, names and numbers."""
    pair = align(older, newer)
    if query_specific & _differing(pair, "old") - _differing(pair, "new"):  # "my *sister*", "*Luna's* vet"
        return False
    others = {t.key for span in pair.spans for t in span.new if t.key in PEOPLE_KEYS}
    return not (others - query_specific - {t.key for t in pair.old})  # a brother's address is not mine


def order(scored: Sequence[Scored], candidates: dict[int, Candidate], query: str, background: Background,
          config: SuccessionConfig | None = None, below: Sequence[Scored] = ()) -> list[Scored]:
    """`scored` (best first) with each newer competitor moved directly above the older hit it succeeds.
    `below` are candidates under the relevance floor: one of them comes in when it succeeds a hit (the new
    value said in other words than the question's), as long as it is close to the hit (`min_pull_z`)."""
    config = config or SuccessionConfig()
    head, tail = list(scored[: config.window]), list(scored[config.window :])
    pool = list(below[: config.window])
    if not head or len(head) + len(pool) < 2:
        return head + tail
    found = [candidates[s.key] for s in head + pool]
    vectors = np.stack([c.vector for c in found]).astype(np.float32)
    cjk = np.array([is_cjk(c.text) for c in found])
    pair_z = np.stack([background.z(vectors[i], bool(cjk[i]), vectors, cjk) for i in range(len(found))])
    born = {c.key: float(c.retention[6]) for c in found}
    index = {c.key: i for i, c in enumerate(found)}
    asked = tokens(query)
    query_specific = {t.key for t in asked if t.tag in _SPECIFIC}
    checked: dict[tuple[int, int], bool] = {}
    pulled = {s.key for s in pool}

    def succeeds(newer: Scored, older: Scored) -> bool:
        if born[newer.key] - born[older.key] < config.min_gap:
            return False
        if newer.key not in pulled and newer.score < config.score_ratio * older.score:
            return False
        least = config.min_pull_z if newer.key in pulled else config.min_pair_z
        if pair_z[index[older.key], index[newer.key]] < least:
            return False
        pair = (older.key, newer.key)
        if pair not in checked:
            checked[pair] = competes(query_specific, candidates[older.key].text, candidates[newer.key].text)
        return checked[pair]

    position = 0
    moves = 0
    while position < len(head) and moves < len(head) ** 2:
        current = head[position]
        rivals = [s for s in head[position + 1 :] + pool if succeeds(s, current)]
        if rivals:
            newest = max(rivals, key=lambda s: born[s.key])
            if newest.key in pulled:
                pool.remove(newest)
                pulled.discard(newest.key)
            else:
                head.remove(newest)
            head.insert(position, Scored(newest.key, max(newest.score, current.score),
                                         {**newest.parts, "succeeds": 1.0}))
            moves += 1
            continue  # the one moved up may have a newer rival of its own further down
        position += 1
    return head + tail
