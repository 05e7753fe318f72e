"""Keep secrets out of stored memories: find credentials in incoming text and swap them for placeholders.

`guard(text)` finds passwords, API keys, AWS keys, JWTs, PEM private keys and card numbers (English and
Chinese contexts) and replaces each with `[secret:<kind>#<tag>]`. The tag is the first 4 hex digits of
sha256(domain + value): the same value always gets the same tag, so a memory can still say "the same
password as before" without holding it. It also flags `low_information` text (acknowledgements, filler,
emoji) that is not worth remembering.

The rules lean towards precision on ordinary prose (a UUID, a commit sha, "password reset link" or a
16-digit order number that fails Luhn are left alone), because redacting prose loses memories for good.

`SecretBox` wraps Fernet so a caller can keep the original values encrypted beside the redacted text.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from ebbing.errors import EbbingError, InvalidInput
from ebbing.ingest import secret_forms
from ebbing.text.lazy import lazy

ENV_KEY = "EBBING_SECRET_KEY"
KINDS = ("password", "api_key", "aws_key", "jwt", "private_key", "card", "token", "url_password", "secret_value",
         "code", "national_id", "bank_account", "passphrase", "hex_key")

# Part of every tag: changing it changes every tag, so it is versioned rather than edited.
_TAG_DOMAIN = b"ebbing.guard.secret-tag.v1\x00"

# When two matches cover exactly the same span the more specific detector names it
# ("api key: AKIA..." is an aws_key, "token: eyJ..." a jwt).
_PRIORITY = {"private_key": 0, "jwt": 1, "aws_key": 2, "card": 3, "national_id": 3, "bank_account": 3,
             "url_password": 4, "api_key": 4, "password": 5, "secret_value": 6, "passphrase": 6, "code": 7,
             "hex_key": 8, "token": 9}


@dataclass(frozen=True)
class Secret:
    """One secret found in the input; `start`/`end` index the original text, not `Guarded.text`."""

    kind: str
    value: str = field(repr=False)  # a repr lands in logs and tracebacks; the value must not
    start: int
    end: int
    placeholder: str


@dataclass(frozen=True)
class Guarded:
    text: str  # the input with every secret replaced by its placeholder
    secrets: tuple[Secret, ...]  # in order of position
    low_information: bool


def placeholder(kind: str, value: str, tag_key: bytes | None = None) -> str:
    """The placeholder `guard` writes for `value`. With `tag_key` (a store keeps a random one) the tag is an
    HMAC, so it cannot be matched against hashes of guessed values: a 4-digit PIN's tag would give it away."""
    raw = value.encode("utf-8", "surrogatepass")
    digest = hmac.new(tag_key, raw, "sha256") if tag_key else hashlib.sha256(_TAG_DOMAIN + raw)
    return f"[secret:{kind}#{digest.hexdigest()[:4]}]"


def pseudonym(user_id: str, tag_key: bytes) -> str:
    """What the audit trail keeps of an erased user: a keyed hash. Whoever holds the store (and so the key)
    can check that a given user was erased; the log alone does not say who."""
    return "user#" + hmac.new(tag_key, b"ebbing.erasure.user\x00" + user_id.encode("utf-8", "surrogatepass"),
                              "sha256").hexdigest()[:16]


# ---- character classes shared by the context detectors -------------------------------------------

_CJK = (
    "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
)
_EMOJI = "\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d\U0001f000-\U0001faff"
# A password ends at whitespace, at CJK text or full-width punctuation (，。；：！？), at curly quotes or
# at an emoji; none of these is plausible inside a password and all of them follow one in real text.
_VALUE_STOP = rf"\s{_CJK}{_EMOJI}\u2018-\u201f"
_OPEN_QUOTE = "\"'`\u201c\u2018\u300c\u300e"  # " ' ` “ ‘ 「 『
_SEP = r"(?:[\"'`]?[ \t]*(?:(?:is|was)(?![A-Za-z0-9_])|=>|[:=：]|是|为|為))"

_PLACEHOLDER = lazy(r"\[secret:[a-z_]+#[0-9a-f]{4}\]")


def _span(match: re.Match[str], group: str | int = 0) -> tuple[int, int]:
    return match.start(group), match.end(group)


def _classes(value: str) -> int:
    return sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))


_CLOSE_QUOTE = {"\u201c": "\u201d", "\u2018": "\u2019", "\u300c": "\u300d", "\u300e": "\u300f"}


def _quoted(text: str, start: int, quote: str) -> tuple[str, int, int] | None:
    """A quoted password runs to its closing quote on the same line, spaces and all ("P@ss w0rd")."""
    if not quote:
        return None
    stop = text.find(_CLOSE_QUOTE.get(quote, quote), start, start + _MAX_PASSWORD + 1)
    if stop <= start or "\n" in text[start:stop]:
        return None
    return text[start:stop], start, stop


def _trim(value: str, start: int, quote: str) -> tuple[str, int, int]:
    """Cut a captured value down to the secret: inside its quotes, without sentence punctuation after it."""
    if quote:
        closing = _CLOSE_QUOTE.get(quote, quote)
        cut = value.find(closing)
        if cut >= 0:
            value = value[:cut]
    value = value.rstrip(".,;:")
    for opening, closing in ("()", "[]", "{}"):
        unmatched = value.count(closing) - value.count(opening)
        while unmatched > 0 and value.endswith(closing):
            value = value[:-1].rstrip(".,;:")
            unmatched -= 1
    return value, start, start + len(value)


# ---- password ----------------------------------------------------------------------------------------

# "/" before the keyword is a path (/etc/passwd); "_" after it is another identifier (password_hash).
_PASSWORD_KW = lazy(
    r"(?<![A-Za-z0-9/])(?:pass(?:word|wd|code)s?|pwd|pin[ \t_-]?code)(?![A-Za-z0-9_])|密码|口令|密碼",
    re.IGNORECASE,
)
_GAP = rf"(?P<gap>[ \t]*)(?P<q>[{_OPEN_QUOTE}]?)"
# Values are read one past their cap: a longer run is a blob, not a typed credential, and the cap keeps
# "password:password:password:..." linear instead of rescanning the rest of the text for every keyword.
_MAX_PASSWORD = 128
_MAX_TOKEN = 512
_PASSWORD_VALUE = rf"(?P<value>[^{_VALUE_STOP}]{{1,{_MAX_PASSWORD + 1}}})"
_PASSWORD_TAIL = lazy(rf"(?P<sep>{_SEP}*){_GAP}{_PASSWORD_VALUE}", re.IGNORECASE)
# "the wifi password for guests is X": a short "for ..." phrase, and then a separator is required.
_PASSWORD_FOR_TAIL = lazy(
    rf"[ \t]+(?:for|of|to|on)(?:[ \t]+[^\s:=：{_CJK}]+){{1,4}}?(?P<sep>{_SEP}+){_GAP}{_PASSWORD_VALUE}",
    re.IGNORECASE,
)
# Words that follow "password" in prose about passwords rather than in a password itself.
_NOT_PASSWORDS = frozenset("""
    reset resets manager managers policy policies field fields change changed changes changing expired expires
    expiry required requirement requirements hint hints hash hashed hashes hashing strength length rules rule
    recovery recover protected protection please again incorrect wrong invalid correct valid should must needs
    with from into that this here there when will would could have been being still also only just never always
    stored store storage vault prompt screen page form input login logins update updated same different secure
    safe weak strong long short missing empty blank none null true false unknown hidden saved later file files
    less based your yours mine their theirs which what where whose something anything nothing every doesn't
    isn't wasn't don't won't can't cannot redacted removed masked encrypted generator reuse reused sharing
    shared expire rotation rotated changer entry entries protect setting settings option options
    characters chars digits letters box text type types format
""".split())
_URL = lazy(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _password_like(value: str) -> bool:
    """Without "is"/":"/"是" before it a value must look typed, not spoken: a digit or a symbol."""
    return any(c.isdigit() or not (c.isalnum() or c.isspace() or c in "'\u2019") for c in value)


def _passwords(text: str) -> Iterator[tuple[int, int]]:
    for kw in _PASSWORD_KW.finditer(text):
        keyword = kw.group().lower()
        for tail in (_PASSWORD_FOR_TAIL, _PASSWORD_TAIL):
            m = tail.match(text, kw.end())
            if m is None:
                continue
            quoted = _quoted(text, m.start("value"), m.group("q"))
            if quoted is not None:
                value, start, end = quoted
            elif len(m.group("value")) > _MAX_PASSWORD:
                continue
            else:
                value, start, end = _trim(m.group("value"), m.start("value"), m.group("q"))
            has_sep = bool(m.group("sep").strip(" \t\"'`"))
            if not has_sep and keyword.isascii() and not m.group("gap"):
                continue  # "password-protected", "passwords."
            if (
                len(value) < 4
                or value.lower() in _NOT_PASSWORDS
                or set(value) <= set("*•●·.-_xX")  # already masked
                or _URL.match(value)
                or (keyword == "pwd" and value.startswith(("/", "~")))  # the shell command's output
                or (not has_sep and not _password_like(value))
                or secret_forms.code_like(value)  # password = os.environ["DB_PASSWORD"]: code, not a secret
            ):
                continue
            yield start, end
            break


# ---- API keys ----------------------------------------------------------------------------------------

_VENDOR_KEYS = lazy(
    r"(?<![A-Za-z0-9_-])(?:"
    r"(?P<openai>sk-[A-Za-z0-9_-]{20,})"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r")"
)
_API_KW = lazy(
    r"(?<![A-Za-z0-9])(?:"
    r"(?P<strong>api[ _-]?(?:key|token|secret)|access[ _-]?token|auth[ _-]?token|secret[ _-]?key|client[ _-]?secret"
    r"|bearer)|token|secret)s?(?![A-Za-z0-9])"
    r"|(?P<cjk>密钥|秘钥|令牌)",  # no word boundary in Chinese: "API令牌"
    re.IGNORECASE,
)
_API_TAIL = lazy(
    rf"(?P<sep>{_SEP}*){_GAP}(?P<value>[A-Za-z0-9_\-+/=.~]{{16,{_MAX_TOKEN + 1}}})", re.IGNORECASE
)


def _openai_key(key: str) -> bool:
    """"sk-" also starts hyphenated prose ("sk-learn-compatible-..."): words joined by "-" need a digit or capital."""
    if key.startswith(("sk-proj-", "sk-ant-", "sk-svcacct-", "sk-admin-")):
        return True
    body = key[3:]
    return secret_forms.entropy(body) >= 3.0 and (("-" not in body and "_" not in body) or _classes(body) >= 2)


def _api_keys(text: str) -> Iterator[tuple[int, int]]:
    for m in _VENDOR_KEYS.finditer(text):
        key = m.group("openai")
        if key is None or _openai_key(key):
            yield _span(m)
    for kw in _API_KW.finditer(text):
        t = _API_TAIL.match(text, kw.end())
        if t is None or len(t.group("value")) > _MAX_TOKEN:
            continue
        value, start, end = _trim(t.group("value"), t.start("value"), t.group("q"))
        has_sep = bool(t.group("sep").strip(" \t\"'`"))
        # Plain "token"/"secret" are common words; only an explicit "is"/":"/"=" makes what follows a value.
        if not has_sep and (kw.group("cjk") is None and (kw.group("strong") is None or not t.group("gap"))):
            continue
        if len(value) >= 16 and _classes(value) >= 2 and secret_forms.entropy(value) >= 3.0:
            yield start, end


# ---- AWS ---------------------------------------------------------------------------------------------

_AWS_ACCESS_KEY = lazy(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_KW = lazy(r"(?<![A-Za-z0-9])(?:aws[ _-]?)?secret[ _-]?access[ _-]?key(?![A-Za-z0-9])", re.IGNORECASE)
_AWS_SECRET_TAIL = lazy(rf"(?P<sep>{_SEP}*){_GAP}(?P<value>[A-Za-z0-9/+]{{40}})(?![A-Za-z0-9/+=])", re.IGNORECASE)


def _aws_keys(text: str) -> Iterator[tuple[int, int]]:
    for m in _AWS_ACCESS_KEY.finditer(text):
        yield _span(m)
    for kw in _AWS_SECRET_KW.finditer(text):
        tail = _AWS_SECRET_TAIL.match(text, kw.end())
        if tail is not None:
            yield _span(tail, "value")


# ---- JWT and PEM -------------------------------------------------------------------------------------

_JWT = lazy(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}")
_PEM_BEGIN = lazy(r"-----BEGIN (?P<label>[A-Z0-9 ]*?)PRIVATE KEY(?P<block> BLOCK)?-----")
_BASE64_LINES = lazy(r"(?:[ \t]*\r?\n?[ \t]*[A-Za-z0-9+/=]{16,})*")


def _jwts(text: str) -> Iterator[tuple[int, int]]:
    for m in _JWT.finditer(text):
        yield _span(m)


def _private_keys(text: str) -> Iterator[tuple[int, int]]:
    for m in _PEM_BEGIN.finditer(text):
        footer = f"-----END {m.group('label')}PRIVATE KEY{m.group('block') or ''}-----"
        end = text.find(footer, m.end())
        if end >= 0:
            yield m.start(), end + len(footer)
        else:
            # A pasted key cut off before its footer is still a key: take the base64 lines that follow.
            body = _BASE64_LINES.match(text, m.end())
            yield m.start(), body.end() if body else m.end()


# ---- cards -------------------------------------------------------------------------------------------

# A run of digit groups joined by one consistent separator. "-"/"." + digit before it means the run is the
# tail of something else (a UUID, a decimal, a version).
_DIGIT_RUN = lazy(r"(?<![0-9A-Za-z_])(?<![0-9A-Za-z_][-.])[0-9]+(?:(?P<sep>[ -])[0-9]+(?:(?P=sep)[0-9]+)*)?")


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cn_id_number(digits: str) -> bool:
    """A mainland resident ID (18 digits, birth date inside, ISO 7064 check digit) is not a card."""
    if len(digits) != 18 or not ("1900" <= digits[6:10] <= "2099"):
        return False
    if not ("01" <= digits[10:12] <= "12" and "01" <= digits[12:14] <= "31"):
        return False
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return "10X98765432"[sum(int(d) * w for d, w in zip(digits, weights, strict=False)) % 11] == digits[17]


def _card_shape(groups: list[str]) -> bool:
    """The printed layouts of real cards: one run, 4-4-4-4 (+1..3), 4-4-4-1..3, and Amex/Diners 4-6-5 / 4-6-4."""
    sizes = [len(g) for g in groups]
    if len(sizes) == 1:
        return 13 <= sizes[0] <= 19
    if sizes in ([4, 6, 5], [4, 6, 4]):
        return True
    if len(sizes) == 4:
        return sizes[:3] == [4, 4, 4] and 1 <= sizes[3] <= 4
    if len(sizes) == 5:
        return sizes[:4] == [4, 4, 4, 4] and 1 <= sizes[4] <= 3
    return False


def _is_card(digits: str) -> bool:
    # Issuers start at 2 (Mastercard 2-series) to 6 (Discover, UnionPay); this drops millisecond
    # timestamps and most counters before Luhn gets a chance to pass one by luck.
    return 13 <= len(digits) <= 19 and digits[0] in "23456" and _luhn(digits) and not _cn_id_number(digits)


def _cards(text: str) -> Iterator[tuple[int, int]]:
    for m in _DIGIT_RUN.finditer(text):
        after = text[m.end() : m.end() + 1]
        if after.isascii() and (after.isalpha() or after == "_"):
            continue  # the digits are the start of an identifier
        groups = m.group().split(m.group("sep")) if m.group("sep") else [m.group()]
        offsets = [m.start()]
        for g in groups[:-1]:
            offsets.append(offsets[-1] + len(g) + 1)
        # Digits either side (a line number before, an expiry after) must not hide the card: try every
        # group as a start and take the longest card-shaped stretch from it.
        i = 0
        while i < len(groups):
            for j in range(min(len(groups), i + 5), i, -1):
                if _card_shape(groups[i:j]) and _is_card("".join(groups[i:j])):
                    yield offsets[i], offsets[j - 1] + len(groups[j - 1])
                    i = j - 1
                    break
            i += 1


# ---- putting it together -------------------------------------------------------------------------------

_DETECTORS = (
    ("private_key", _private_keys, None),
    ("jwt", _jwts, None),
    ("aws_key", _aws_keys, None),
    ("api_key", _api_keys, None),
    ("card", _cards, None),
    ("password", _passwords, None),
    *secret_forms.DETECTORS,
)


class _Taken:
    """Non-overlapping spans kept sorted, so checking a new span costs a bisect, not a scan."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in spans:
            self.add(start, end)

    def free(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start)
        return (i == 0 or self._ends[i - 1] <= start) and (i == len(self._starts) or self._starts[i] >= end)

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_right(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)


def _select(candidates: list[tuple[int, int, str]], taken: _Taken) -> list[tuple[int, int, str]]:
    """Of overlapping matches keep the longest (then the more specific kind, then the earlier one)."""
    chosen: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(candidates, key=lambda c: (c[0] - c[1], _PRIORITY[c[2]], c[0])):
        if taken.free(start, end):
            chosen.append((start, end, kind))
            taken.add(start, end)
    return chosen


def _repeats(text: str, found: list[tuple[int, int, str]], taken: _Taken) -> list[tuple[int, int, str]]:
    """Other occurrences of a found value ("it's hunter2, I typed hunter2 wrong") would leak it; take them too."""
    extra: list[tuple[int, int, str]] = []
    for value, kind in dict.fromkeys((text[start:end], kind) for start, end, kind in found):
        at = text.find(value)
        while at >= 0:
            stop = at + len(value)
            glued = (at > 0 and text[at - 1].isalnum() and value[0].isalnum()) or (
                stop < len(text) and text[stop].isalnum() and value[-1].isalnum()
            )
            if not glued and taken.free(at, stop):
                extra.append((at, stop, kind))
                taken.add(at, stop)
            at = text.find(value, at + 1)
    return extra


def guard(text: str, *, tag_key: bytes | None = None) -> Guarded:
    """Replace every secret in `text` by its placeholder and say whether the text carries any content."""
    if not isinstance(text, str):
        raise InvalidInput("text", "must be a string")
    candidates = [(start, end, kind) for kind, detect, gate in _DETECTORS if gate is None or gate.search(text)
                  for start, end in detect(text) if end > start]
    # Placeholders already in the text (guarding twice) are left as they are.
    taken = _Taken([_span(m) for m in _PLACEHOLDER.finditer(text)])
    found = _select(candidates, taken)
    found += _repeats(text, found, taken)
    secrets = tuple(
        Secret(kind, text[start:end], start, end, placeholder(kind, text[start:end], tag_key))
        for start, end, kind in sorted(found)
    )
    pieces: list[str] = []
    pos = 0
    for s in secrets:
        pieces += (text[pos : s.start], s.placeholder)
        pos = s.end
    pieces.append(text[pos:])
    return Guarded("".join(pieces), secrets, is_low_information(text))


# ---- every other text Ebbing stores ------------------------------------------------------------------

# A random-looking token or a short code inside an id is the id itself (a session id, a ULID); only forms that
# are secrets whatever their place make an id refused.
_ID_TOLERATED = frozenset({"token", "code"})


def refuse_secret(value: str | None, field: str) -> None:
    """Ids (user, agent, session) are stored and shown as given, so one holding a secret is refused."""
    if value is None:
        return
    found = [kind for kind, detect, gate in _DETECTORS if kind not in _ID_TOLERATED
             and (gate is None or gate.search(value)) and next(iter(detect(value)), None) is not None]
    if found:
        raise InvalidInput(field, f"must not hold a secret (it contains a {found[0]}); use an opaque id")


def redact(value: Any, *, tag_key: bytes | None = None) -> Any:
    """Metadata, reasons and other free values with every secret in their strings (keys too) replaced."""
    if isinstance(value, str):
        return guard(value, tag_key=tag_key).text
    if isinstance(value, dict):
        return {redact(k, tag_key=tag_key): redact(v, tag_key=tag_key) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, tag_key=tag_key) for v in value]
    return value


# ---- low information ---------------------------------------------------------------------------------

_FILLER_PHRASES = lazy(
    r"\b(?:thank\s+you(?:\s+(?:so|very)\s+much)?|thanks\s+a\s+lot|got\s+it|no\s+problem|sounds\s+good|will\s+do)\b"
)
# English fillers are whole words ("ok", "kk", "hahaha"), never glued together: "nicety" is a word.
_FILLER_EN = lazy(
    r"okay|okie|ok|k+|thanks|thank|thx|tks|ty|lo+l|lmao|rofl|(?:ha){2,}h?|(?:he){2,}h?|hm+|yay|cool|nice|sure|np"
)
# Chinese has no spaces, so fillers run together: "好的谢谢", "嗯嗯", "哈哈哈".
_FILLER_ZH = lazy(r"(?:好的|好滴|好吧|好|嗯|哦|噢|收到|谢谢|多谢|感谢|哈|呵|嘿|嘻|了解|明白|知道了|了|啦|呀)+")
_TOKEN = lazy(r"[a-z]+|[^\sa-z]+")


def is_low_information(text: str) -> bool:
    """True for text with nothing to remember: acknowledgements, laughter, emoji, punctuation, blank."""
    # Punctuation, symbols (emoji are "So"), marks, separators and format characters (ZWJ) carry nothing;
    # letters and digits are what is left to judge.
    text = unicodedata.normalize("NFKC", text)  # full-width "ＯＫ" is "OK"
    kept = "".join(c if unicodedata.category(c)[0] in "LN" else " " for c in text).lower()
    kept = _FILLER_PHRASES.sub(" ok ", kept)
    return all(
        (_FILLER_EN if token.isascii() else _FILLER_ZH).fullmatch(token) for token in _TOKEN.findall(kept)
    )


# ---- encryption --------------------------------------------------------------------------------------

_BAD_KEY = "must be a Fernet key: 32 url-safe base64-encoded bytes"


class SecretBox:
    """Fernet encryption for secret values; the key never appears in a repr, an error or a pickle."""

    __slots__ = ("_fernet",)

    def __init__(self, key: str) -> None:
        if not isinstance(key, str):
            raise InvalidInput(ENV_KEY, _BAD_KEY)
        try:
            self._fernet = Fernet(key.strip())
        except (ValueError, TypeError):
            raise InvalidInput(ENV_KEY, _BAD_KEY) from None  # the cause would carry the key's bytes

    def __repr__(self) -> str:
        return "SecretBox(key=<hidden>)"

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("SecretBox holds a key and cannot be pickled or copied")

    def encrypt(self, value: str) -> bytes:
        if not isinstance(value, str):
            raise InvalidInput("value", "must be a string")
        return self._fernet.encrypt(value.encode("utf-8"))

    def decrypt(self, token: bytes) -> str:
        try:
            return self._fernet.decrypt(token).decode("utf-8")
        except (InvalidToken, TypeError, ValueError):
            raise EbbingError(
                f"could not decrypt a secret: wrong {ENV_KEY} or a damaged token"
            ) from None  # never echo the token

    @staticmethod
    def generate_key() -> str:
        return Fernet.generate_key().decode("ascii")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SecretBox | None:
        """The box for EBBING_SECRET_KEY, or None when it is unset (or blank, as `KEY=` in a .env file is)."""
        key = env.get(ENV_KEY)
        if key is None or not key.strip():
            return None
        return cls(key)
