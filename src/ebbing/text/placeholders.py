"""What a secret's placeholder means, as opposed to how it is written.

The secret guard (`ingest.guard`) writes `[secret:password#61f0]` where a secret was. The tag after `#` is a keyed
hash under a key each store draws at random, so the same sentence reads differently in every store. Its meaning
is the kind alone: embedded with the tag, "the wifi password is [secret:password#61f0]" would get another vector
in every store, and which records a search or a forget request finds would change from store to store (a
replay of the same history came out differently run to run). So texts are embedded with their tags left out.
"""

from __future__ import annotations

import re

# A placeholder as written, with its tag or (once untagged) without: one token to whoever reads text.
PLACEHOLDER = r"\[secret:[\w-]+(?:#[0-9a-f]{4})?\]"
_TAGGED = re.compile(r"\[secret:([\w-]+)#[0-9a-f]{4}\]")


def untagged(text: str) -> str:
    """`text` with every placeholder's tag left out: "[secret:password#61f0]" -> "[secret:password]"."""
    return _TAGGED.sub(r"[secret:\1]", text) if "[secret:" in text else text
