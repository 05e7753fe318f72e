"""More credential forms for the secret guard: what `guard.py`'s first detectors (passwords after a keyword,
API keys, AWS, JWT, PEM, cards) do not cover.

Each detector yields (start, end) spans of secret values, never the words around them. The checks that a
well-kept library does better are taken from one: the vendor token shapes from `detect-secrets`' plugins,
the check digits of IBANs, US SSNs and Chinese resident ids from `python-stdnum`. What they lack is written
here: the phrasings people use in English and Chinese ("the PIN for the garage is", "验证码是"), values
that only their context makes secret (a 4-digit PIN, a 3-digit CVV), and passwords given with no keyword.

Precision matters as much as recall: a false positive redacts a memory for good. Short all-digit values
(PINs, codes, CVVs) need a keyword right before them; a password with no keyword must look typed (letters,
digits and a symbol inside it), not like a date, a price, a version, an email address or a URL.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator

from mnemonic import Mnemonic
from stdnum import iban as _iban
from stdnum.cn import ric as _ric
from stdnum.us import ssn as _ssn

from ebbing.text.lazy import LazyPattern, lazy

Span = tuple[int, int]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_STOP = rf"\s{_CJK}\u3000-\u303f\uff00-\uffef\u2018-\u201f"  # where a typed value ends
# Between a keyword and its value: "is", "was", "are", ":", "=", "->", "→", "—", "是", "为" and the like.
_LINK = r"(?:\s*(?:is|was|are|'s|’s|=>|->|→|—|–|-|:|=|：|是|为|為|设为|设成|改成|改为|#)\s*|\s+)"


def entropy(value: str) -> float:
    """Shannon entropy in bits per character: generated keys score high, words and numbers low."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


# ---- vendor tokens (detect-secrets) --------------------------------------------------------------------

# Shapes detect-secrets does not know (yet): Hugging Face, Anthropic, npm, GitHub fine-grained, Aliyun,
# Tencent Cloud, Slack app-level tokens, Google OAuth client secrets.
_SETUP_KEY = lazy(r"(?i)(?:setup|secret|totp|2fa|mfa|otp|authenticator)[ -](?:key|secret|seed)\b"
                  r"[^\n:：]{0,50}?[:：=]?"
                  r"\s*(?P<v>(?:[A-Z2-7]{4} ?){4,16})(?![A-Za-z0-9])")
_WEBHOOK = lazy(r"https://(?:discord(?:app)?\.com/api/webhooks|outlook\.office\.com/webhook|"
                r"[\w.-]+\.webhook\.office\.com/webhookb2)/[\w@/-]*?/(?P<v>[\w-]{30,})")
_MORE_TOKENS = lazy(
    r"(?<![A-Za-z0-9_])(?:hf_[A-Za-z0-9]{30,}|sk-ant-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}|LTAI[A-Za-z0-9]{12,30}|AKID[A-Za-z0-9]{28,40}|xapp-[0-9A-Za-z-]{20,}"
    r"|GOCSPX-[A-Za-z0-9_-]{20,})(?![A-Za-z0-9_])"
)


@functools.cache
def _token_patterns() -> list[re.Pattern[str]]:
    """The vendor token shapes of detect-secrets' plugins, imported at the first text that needs them: the
    library pulls in `requests` and more, which a command that reads no text should not pay for."""
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    plugins = (AWSKeyDetector, AzureStorageKeyDetector, DiscordBotTokenDetector, GitHubTokenDetector,
               GitLabTokenDetector, MailchimpDetector, OpenAIDetector, PypiTokenDetector, SendGridDetector,
               SlackDetector, SquareOAuthDetector, StripeDetector, TelegramBotTokenDetector, TwilioKeyDetector)
    patterns = [p for plugin in plugins for p in plugin().denylist]
    # AWS's second pattern wants the key quoted after "aws ... key"; guard.py reads that phrasing itself.
    return [p for p in patterns if not p.pattern.startswith("aws.")]


def vendor_tokens(text: str) -> Iterator[Span]:
    for vendor in _token_patterns():
        for m in vendor.finditer(text):
            group = 1 if vendor.groups and m.group(1) and len(m.group(1)) >= 16 else 0
            yield m.span(group)
    for m in _MORE_TOKENS.finditer(text):
        yield m.span()
    for pattern in (_SETUP_KEY, _WEBHOOK):
        for m in pattern.finditer(text):
            yield m.start("v"), m.start("v") + len(m.group("v").rstrip())


# ---- credentials inside URLs and connection strings ---------------------------------------------------

# scheme://user:password@host — the user may be empty (redis://:pw@host); the password runs to the last "@"
# before the host, since an unencoded "@" inside it is common in pasted strings.
_URL_CREDENTIALS = lazy(
    r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@?#\"'<>]*:(?P<pw>[^\s/?#\"'<>]+)@(?=[A-Za-z0-9\[])")
# Password=...; in ADO/ODBC/JDBC strings; AccountKey=... and SharedAccessKey=... in Azure ones.
_CONNECTION_FIELDS = lazy(
    r"(?i)(?<![A-Za-z])(?:password|pwd|passwd|accountkey|sharedaccesskey|sharedsecret|secret)\s*=\s*"
    rf"(?P<value>\"[^\"\n]{{1,128}}\"|'[^'\n]{{1,128}}'|[^;\s\"'&{_CJK}\u3000-\u303f\uff00-\uffef]{{3,512}})")


def url_credentials(text: str) -> Iterator[Span]:
    for m in _URL_CREDENTIALS.finditer(text):
        value = m.group("pw")
        # "host:5432@" is a port, not a password; a longer all-digit value may be one
        if (len(value) >= 1 and not value.isdigit()) or len(value) >= 3:
            yield m.span("pw")


def code_like(value: str) -> bool:
    """A value that is code reading a secret from elsewhere, not the secret: os.environ[...], ${VAR}, input()."""
    return "(" in value or re.match(r"(?:os\.|process\.env|getenv|env\[|\$\{|\{\{|%\()", value) is not None


def connection_fields(text: str) -> Iterator[Span]:
    for m in _CONNECTION_FIELDS.finditer(text):
        start, end = m.span("value")
        if text[start] in "\"'":
            start, end = start + 1, end - 1
        if end - start >= 3 and not code_like(text[start:end]):
            yield start, end


# ---- key = value lines (.env, configs, cookies, headers) ----------------------------------------------

_SECRET_NAME = (r"[A-Za-z0-9_.-]{0,40}?(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
                r"private[_-]?key|priv[_-]?key|auth[_-]?key|credentials?|sessid|session[_-]?id|sessionid|"
                r"session|sid|sessdata|csrftoken|appsecret|app[_-]?secret|client[_-]?secret|signing[_-]?key|"
                r"encryption[_-]?key|master[_-]?key|license[_-]?key)(?:_[A-Za-z0-9_]*)?(?![A-Za-z0-9])")
_ASSIGNMENT = lazy(
    rf"(?i)(?<![A-Za-z0-9_])(?:export\s+|set\s+)?[\"']?(?P<name>{_SECRET_NAME})[\"']?\s*(?::=|=|:)\s*"
    rf"(?P<value>\"[^\"\n]{{3,512}}\"|'[^'\n]{{3,512}}'|[^\s\"';,&)}}\]{_CJK}\u3000-\u303f\uff00-\uffef]{{3,512}})")
_ABOUT_A_SECRET = lazy(r"[_.-](?:hash|hashed|salt|file|path|len|length|policy|min|max|name|type|url|env|enabled|"
                       r"required|expiry|expires|ttl|timeout|rounds|algo|algorithm|field|header|prompt|reset|"
                       r"rule|rules|id|user|username|endpoint|host|port|count|version|format|mode)$")
_PLACEHOLDER_VALUES = lazy(r"(?i)^(?:x+|\*+|\.+|<[^>]*>|\$\{?[A-Za-z_]+\}?|%\(?[a-z_]+\)?s?|null|none|true|"
                           r"false|undefined|redacted|secret|password|your[_-].*|changeme_later|\[secret:.*)$")


def assignments(text: str) -> Iterator[Span]:
    for m in _ASSIGNMENT.finditer(text):
        start, end = m.span("value")
        if text[start] in "\"'":
            start, end = start + 1, end - 1
        value = text[start:end]
        name = m.group("name").lower()
        if _ABOUT_A_SECRET.search(name):
            continue  # PASSWORD_HASH, TOKEN_TTL, SECRET_FILE: a setting about the secret, not the secret
        if _PLACEHOLDER_VALUES.match(value) or value.lower() in {"is", "was", "are"} or code_like(value):
            continue
        # "session: 3 of the course", "token: ring": a plain name wants a value that looks generated.
        weak = name in {"session", "token", "secret", "sid", "credential", "credentials", "pass"}
        if weak and (len(value) < 12 or not any(c.isdigit() for c in value)):
            continue
        if not weak and len(value) < 4 and not value.isdigit():
            continue
        yield start, end


_AUTH_HEADER = lazy(r"(?i)\bauthori[sz]ation\s*:\s*(?:basic|bearer|token|digest|apikey)\s+"
                    r"(?P<v>[A-Za-z0-9+/=._~-]{8,})"
                    r"|(?i:\bbearer)\s+(?P<b>[A-Za-z0-9+/=._~-]{16,})")


def auth_headers(text: str) -> Iterator[Span]:
    for m in _AUTH_HEADER.finditer(text):
        yield m.span("v") if m.group("v") else m.span("b")


# ---- numbers that only their keyword makes secret -------------------------------------------------------

# (keyword, value) pairs: the value follows the keyword within a few words in the same clause.
_FILLER = (r"(?:[,，]?(?:[^\S\n]+[\w'’.-]+){0,5}?[^\S\n]*(?:is|are|was|says|said|reads|'s|’s|:|=|：|#|->|→|—|-)?"
           r"[^\S\n]*"
           r"|[^\S\n]*[:：=#]?[^\S\n]*)[*#]?")
_ZH_FILLER = r"(?:[^\n。！？!?；;]{0,8}?(?:是|为|為|：|:|=|设为|设成|改成|改为)?\s*)"

_PIN_KW = (r"(?<![A-Za-z])(?:pin(?:[ -]?(?:code|number|no\.?|#))?|puk(?:[ -]?code)?|passcode|unlock code|"
           r"(?:door|gate|garage|keypad|alarm|entry|lock|safe|locker|building|lockbox|key ?box|access)[ -]code|"
           r"combination|combo|security code|sim pin|lock ?box|key ?safe)(?![A-Za-z])")
_PIN_ZH = (r"(?:PIN码|pin码|PUK码|服务密码|门禁密码|门禁码|门锁密码|取款密码|支付密码|交易密码|开机密码|锁屏密码"
           r"|解锁密码|银行卡密码|卡密码|保险箱密码|密码锁|开锁密码|手机密码)")
_OTP_KW = (r"(?<![A-Za-z])(?:(?:verification|confirmation|security|login|log-in|sign-in|one[- ]time|2fa|mfa|"
           r"otp|auth(?:entication|orization)?|sms|access|recovery|backup|reset|activation|pairing|app|text|"
           r"your(?: [\w-]+)?) ?"
           r"(?:code|pin|passcode)s?|otp|2fa code|authenticator(?: app)?|totp)(?![A-Za-z])")
_OTP_ZH = r"(?:验证码|校验码|动态码|动态密码|动态口令|授权码|确认码|激活码|安全码|短信码|取件码|提取码|口令码)"
_CVV_KW = (r"(?<![A-Za-z])(?:cvv2?|cvc2?|cvn|csc|cid|card (?:security |verification )?code|"
           r"(?:3|4|three|four)[ -]digits?(?: code)?(?: on the back| on the card| on the front)?)(?![A-Za-z])")
_CVV_ZH = r"(?:CVV2?码?|CVC2?码?|CVN2?码?|(?:背面|背后)[^\d\n]{0,4}?(?:三|3|四|4)位(?:数字?|码)?|安全码|校验码)"

_KEYWORD_DIGITS = [
    lazy(rf"(?:{_PIN_KW}){_FILLER}(?<![A-Za-z0-9])(?P<v>\d{{3,8}})(?![\d:/.,-]\d|\d|[%°])", re.IGNORECASE),
    lazy(rf"(?:{_PIN_ZH}){_ZH_FILLER}(?<![A-Za-z0-9])(?P<v>\d{{3,8}})(?!\d)", re.IGNORECASE),
    lazy(rf"(?:{_OTP_KW}){_FILLER}(?<![A-Za-z0-9])(?P<v>[A-Za-z0-9]{{4,10}})(?![A-Za-z0-9])", re.IGNORECASE),
    lazy(rf"(?:{_OTP_ZH}){_ZH_FILLER}(?<![A-Za-z0-9])(?P<v>[A-Za-z0-9]{{3,16}}(?:-[A-Za-z0-9]{{3,8}}){{0,4}})(?![A-Za-z0-9])"),
    lazy(rf"(?:{_CVV_KW}){_FILLER}(?<![A-Za-z0-9])(?P<v>\d{{3,4}})(?!\d)", re.IGNORECASE),
    lazy(rf"(?:{_CVV_ZH}){_ZH_FILLER}(?<![A-Za-z0-9])(?P<v>\d{{3,4}})(?!\d)", re.IGNORECASE),
]
# "504247 is your Netflix code", "482913 是您的验证码"
_COOKIE_KW = lazy(r"(?i)\b(?:session(?:[ _-]?id)?|sid|cookie|auth(?:entication)? cookie)\b"
                  r"(?:[^\S\n]+[\w'’-]+){0,3}"
                  r"[^\S\n]*(?:is|:|=|：|是)[^\S\n]*(?P<v>[A-Za-z0-9%._-]{16,512})(?![A-Za-z0-9%._-])")
_CODE_FIRST = lazy(
    r"(?i)(?:\b(?:enter|use|type)\s+(?P<w>\d{4,8})\s+to\s+(?:sign|log)\s*(?:in|on)"
    r"|(?<![\w])(?P<v>\d{4,8})(?:\s+(?:is|that's|that is)\s+(?:the|your|my)\s+(?:[\w-]+\s+){0,3}code\b"
    r"|\s+is\s+your\s+(?:[\w-]+\s+){0,3}(?:code|pin|otp|passcode)"
    r"|\s*(?:是|为)?(?:您|你)的(?:\S{0,6})?(?:验证码|校验码|动态码|动态密码)))")
_OTP_WORDS = lazy(r"(?i)^(?:is|are|was|for|and|the|your|this|that|from|sent|here|code|when|with|will)$")


def cookie_values(text: str) -> Iterator[Span]:
    for m in _COOKIE_KW.finditer(text):
        if any(c.isdigit() for c in m.group("v")) and entropy(m.group("v")) >= 3:
            yield m.span("v")


def keyword_values(text: str) -> Iterator[Span]:
    for pattern in _KEYWORD_DIGITS:
        for m in pattern.finditer(text):
            value = m.group("v")
            if value.isalpha() and (_OTP_WORDS.match(value) or not (value.isupper() or
                                                                    (len(value) >= 10 and entropy(value) >= 3))):
                continue  # "verification code sent", "the code word": a code has a digit, is shouted or random
            if not value.isdigit() and not any(c.isdigit() for c in value) and len(value) < 6:
                continue
            if re.fullmatch(r"(?:19|20)\d\d", value) and re.search(r"(?i)\b(?:in|since|from|until|by)\s*$",
                                                                  text[: m.start("v")]):
                continue  # "PIN reset in 2024": a year
            yield m.span("v")
    for m in _CODE_FIRST.finditer(text):
        yield m.span("w") if m.group("w") else m.span("v")


# ---- national ids, bank numbers ---------------------------------------------------------------------------

_SSN = lazy(r"(?<![\d-])(?P<v>\d{3}-\d{2}-\d{4}|\d{3} \d{2} \d{4})(?![\d-])")
_SSN_KW = lazy(r"(?i)(?:\bssn|social security(?: number| no\.?| #)?|社会安全号|社保号)[^\d\n]{0,12}"
               r"(?P<v>\d{9})(?!\d)")
_RIC = lazy(r"(?<![\dA-Za-z])(?P<v>\d{6} ?\d{8} ?\d{3}[\dXx])(?![\dA-Za-z])")
_NINO = lazy(r"(?<![A-Za-z0-9])(?P<v>[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D])"
             r"(?![A-Za-z0-9])")
_ID_KW = lazy(
    r"(?i)(?:passport|driver'?s?'? licen[cs]e|driving licen[cs]e|licen[cs]e (?:number|no\.?|#)|\bdl ?(?:number|no\.?|#)"
    r"|national id|id card|identity card|tax (?:id|number|file number)|\btin\b|\bein\b|\bnhs (?:number|no\.?)"
    r"|medicare (?:number|no\.?)|health card|insurance (?:number|no\.?)|member(?:ship)? (?:id|number|no\.?)"
    r"|\bsin\b|social insurance (?:number|no\.?)|aadhaar(?: no\.?| number)?|\bhkid\b|\bnric\b|\bfin\b|\bdni\b|\bnie\b"
    r"|\bpesel\b|\bbsn\b|\bcpf\b|\bcurp\b|\bmy number\b|(?:chinese |national )?id (?:number|no\.?)|license id"
    r"|身分证(?:字号|号码|号)?|身份號碼|公民身份号码|证件号(?:码)?|居留证号"
    r"|护照(?:号码|号)?|驾驶证(?:号码|号)?|驾照(?:号码|号)?|社保卡号|医保卡号|身份证(?:号码|号)?|港澳通行证(?:号码|号)?"
    r"|军官证号|税号|纳税人识别号)"
    r"[^\n\w]{0,3}(?:(?:number|no\.?|num|#|is|was|are|it's|it’s|it is|:|是|为|号码)[^\n\w]{0,3}){0,3}"
    r"(?P<v>\d{3,4}(?: \d{3,4}){2,3}(?!\d)|[A-Z]{1,2}\d{6,7}\([0-9A]\)"
    r"|(?=[A-Za-z0-9-]{5,20}(?![A-Za-z0-9-]))(?=[A-Za-z0-9-]*\d)[A-Za-z0-9-]{5,20})")
_ACCOUNT_KW = lazy(
    r"(?i)(?:(?:bank|checking|savings|current|chequing|deposit)?\s*(?:account|acct|a/c)\.?\s*(?:number|no\.?|num|#)?"
    r"|银行卡号|银行账号|银行卡|卡号|账户号码|账户号|收款账号|开户行账号|对公账户|账户)"
    r"\s*(?:is|:|：|=|#|是|为)?\s*(?P<v>\d[\d -]{5,24}\d)(?![\d])")
_SORT_CODE = lazy(r"(?<![\d-])\d{2}-\d{2}-\d{2}\s*(?:/|,|\s)\s*(?:(?:account|acct|a/c)\s*(?:no\.?|#)?\s*)?"
                  r"(?P<v>\d{8})(?!\d)", re.IGNORECASE)
_IBAN = lazy(r"(?<![A-Za-z0-9])(?P<v>[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)(?![A-Za-z0-9])")


def _resident_id(number: str) -> bool:
    """A mainland resident id: a real birth date and the ISO 7064 check digit (python-stdnum computes both;
    its own is_valid also wants the region code in its table, which misses codes retired or added since)."""
    try:
        _ric.get_birth_date(number)
    except ValueError:
        return False
    return _ric.calc_check_digit(number) == number[-1].upper()  # it takes the whole number


def identity_numbers(text: str) -> Iterator[Span]:
    for m in _SSN.finditer(text):
        if _ssn.is_valid(m.group("v").replace(" ", "-")) and (
                "-" in m.group("v") or re.search(r"(?i)ssn|social", text[max(0, m.start() - 40): m.start()])):
            yield m.span("v")
    for m in _SSN_KW.finditer(text):
        yield m.span("v")
    for m in _RIC.finditer(text):
        if _resident_id(m.group("v").replace(" ", "")):
            yield m.span("v")
    for m in _NINO.finditer(text):
        yield m.span("v")
    for m in _ID_KW.finditer(text):
        if not re.fullmatch(r"(?:19|20)\d\d", m.group("v")):
            yield m.span("v")


def bank_numbers(text: str) -> Iterator[Span]:
    for m in _ACCOUNT_KW.finditer(text):
        digits = re.sub(r"\D", "", m.group("v"))
        if 6 <= len(digits) <= 24:
            yield m.span("v")
    for m in _SORT_CODE.finditer(text):
        yield m.span("v")
    for m in _IBAN.finditer(text):
        groups = m.group("v").split(" ")
        # The last groups may be the next word's digits: take the longest valid prefix.
        for cut in range(len(groups), 1, -1):
            candidate = " ".join(groups[:cut])
            if _iban.is_valid(candidate.replace(" ", "")):
                yield m.start("v"), m.start("v") + len(candidate)
                break
        else:
            compact = m.group("v").replace(" ", "")
            if " " not in m.group("v") and _iban.is_valid(compact):
                yield m.span("v")


# ---- phrases: passphrases, seed phrases, recovery codes -------------------------------------------------

_PASSPHRASE_KW = lazy(r"(?i)(?:pass[ -]?phrase|master password|口令短语|密码短语|主密码|密语)")
# "I used X as the passphrase for the drive", "X is what I typed": the value first, its role after it.
_VALUE_FIRST = lazy(r"(?<!\S)(?P<v>\S{6,40}) is (?:what|the one) (?:I|we) "
                    r"(?:typed|type|use|used|set|picked|chose)\b")
_VALUE_AS = lazy(r"(?i)\b(?:used|use|using|chose|picked|set|went with)\s+[\"'“]?"
                 r"(?P<v>[^\"'”\n]{4,80}?)[\"'”]?\s+as\s+"
                 r"(?:the|my|our)\s+(?:[\w-]+\s+)?(?:pass[ -]?phrase|password|passcode|pin|pass ?word)\b")
_JOINED_WORDS = lazy(r"[A-Za-z0-9]+(?:[-._+][A-Za-z0-9]+){2,}")
_SEED_KW = lazy(r"(?i)(?:(?:seed|recovery|mnemonic|secret|backup|wallet)[ -](?:phrase|words)|mnemonic|"
                r"\b(?:12|24|18|twelve|twenty[- ]four)[ -]words?\b|助记词|恢复短语|种子短语)")
_WORD_RUN = lazy(r"[a-z]{3,8}(?:[ ,]+[a-z]{3,8}){11,23}")
_BIP39 = frozenset(Mnemonic("english").wordlist)
_BIP39_ZH = frozenset(Mnemonic("chinese_simplified").wordlist) | frozenset(Mnemonic("chinese_traditional").wordlist)
_ZH_WORD_RUN = lazy(rf"[{_CJK}](?:[ ,，、]+[{_CJK}]){{11,23}}")
_CODES_KW = lazy(r"(?i)(?:(?:recovery|backup|2fa|two[- ]factor|emergency|mfa|scratch|one[- ]time|"
                 r"single[- ]use)\s+(?:codes?|keys?)|恢复(?:代)?码|备用码|备份码|救援码|紧急码)")
_CODE = lazy(r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]{3,8}(?:[- ][A-Za-z0-9]{3,8}){1,7}|\d{6,10})(?![A-Za-z0-9])")
_LIST_END = lazy(r"[.!?。！？](?:\s|$)|\n\s*\n|$")
_CLAUSE_END = lazy(r"[.!?。！？\n](?:\s|$)|$")


def phrases(text: str) -> Iterator[Span]:
    for m in _PASSPHRASE_KW.finditer(text):
        window = text[m.end(): m.end() + 120]
        quoted = re.match(r"[^\"'“「\n]{0,20}?[\"'“「](?P<v>[^\"'”」\n]{4,100})[\"'”」]", window)
        if quoted:
            yield m.end() + quoted.start("v"), m.end() + quoted.end("v")
            continue
        joined = _JOINED_WORDS.search(window[:60])
        if joined:
            yield m.end() + joined.start(), m.end() + joined.end()
            continue
        words = re.match(r"\s*(?:is|was|:|=|：|是|为)\s*(?P<v>[a-z]+(?: [a-z]+){2,7})\b", window)
        if words:
            yield m.end() + words.start("v"), m.end() + words.end("v")
    for m in _VALUE_AS.finditer(text):
        yield m.span("v")
    for m in _VALUE_FIRST.finditer(text):
        if _plain_password(m.group("v"), "") or typed_password(m.group("v")) or _keyed(m.group("v")):
            yield m.span("v")
    for m in _SEED_KW.finditer(text):
        run = _WORD_RUN.search(text, m.end(), m.end() + 100 + 9 * 24)
        if run and run.start() - m.end() <= 80:
            yield run.span()
    for m in _CODES_KW.finditer(text):
        end = _LIST_END.search(text, m.end() + 2)  # a list of codes may run over several lines
        stop = min(end.start() if end else len(text), m.end() + 300)
        for code in _CODE.finditer(text, m.end(), stop):
            value = code.group()
            if any(c.isdigit() for c in value) and not re.fullmatch(r"\d{1,4}(?:[- ]\d{1,2}){1,2}", value):
                yield code.span()


def seed_phrases(text: str) -> Iterator[Span]:
    """Twelve or more words in a row, every one from the BIP-39 list (the `mnemonic` package's): a wallet's
    recovery phrase, with or without a keyword. Prose never strings twelve of those words together."""
    for run in _WORD_RUN.finditer(text):
        words = re.split(r"[ ,]+", run.group())
        if sum(w in _BIP39 for w in words) >= 12 and sum(w in _BIP39 for w in words) >= 0.9 * len(words):
            yield run.span()
    for run in _ZH_WORD_RUN.finditer(text):  # the Chinese lists: single characters, spaced
        if all(c in _BIP39_ZH for c in re.findall(rf"[{_CJK}]", run.group())):
            yield run.span()


# ---- hex keys near a keyword ------------------------------------------------------------------------------

_HEX_KEY = lazy(r"(?<![0-9A-Za-z])(?:0x)?(?P<v>[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64})(?![0-9A-Za-z])")
_KEY_WORDS = lazy(r"(?i)(?:priv(?:ate)?[ _-]?key|secret|wallet|\bkey\b|api|token|signer|deployer|"
                  r"appsecret|私钥|密钥|秘钥|令牌)")


def hex_keys(text: str) -> Iterator[Span]:
    for m in _HEX_KEY.finditer(text):
        before = text[max(0, m.start() - 60): m.start()]
        if _KEY_WORDS.search(before) and not re.search(r"(?i)(?:commit|sha|hash|digest|checksum|md5|tx|"
                                                        r"transaction|block|address)\W*(?:\w+\W+){0,2}$", before):
            yield m.span("v")


# ---- passwords with no keyword ----------------------------------------------------------------------------

_SYMBOLS = "!#$%&*+=?@^_~"
_CANDIDATE = lazy(rf"(?<![^\s{_CJK}\"'“‘(（,，:：;；])(?=[^\s{_CJK}]{{0,63}}\d)"
                  rf"[^\s{_CJK}\u3000-\u303f\uff00-\uffef\"'”’)）,，;；]{{6,64}}")
_EMAILISH = lazy(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_NOT_TYPED = lazy(r"(?i)^(?:https?|ftp|www\.|[a-z]+://)|^[@#]\w+$|^\$?\d[\d,.]*[kmb]?$|^\d+(?:st|nd|rd|th)$")


def typed_password(value: str, *, joiners: bool = True) -> bool:
    """Does this token look typed as a password: letters, a digit and a symbol inside it? Without a keyword
    (`joiners=False`) "_" and "-" do not count: handles and network names use them ("lily_0823")."""
    value = value.rstrip(".,;:")
    if len(value) < 6 or _EMAILISH.match(value) or _NOT_TYPED.search(value):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    inner = value[1:-1] if len(value) > 2 else value
    symbols = _SYMBOLS if joiners else _SYMBOLS.replace("_", "")
    symbol = any(c in symbols for c in inner) or (value[-1] in symbols and value[-1] not in "!?")
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    symbol = symbol or (joiners and mixed and "-" in value and digits >= 1)  # "Buster-Ocean82", not "COVID-19"
    # "Purple2016!", "W3lc0me37!": a final "!" is punctuation in prose, not after mixed case and digits.
    shouted = value[-1] in "!?" and mixed and digits >= 2
    return letters >= 2 and digits >= 1 and (symbol or shouted)


def typed_passwords(text: str) -> Iterator[Span]:
    """Keyword-less passwords: a token with letters, digits and a symbol, said in the voice of a login
    ("I set it to ...", "用的还是 ... 那个", "alice@x.com / ..."), not in a handle, address or code."""
    for m in _CANDIDATE.finditer(text):
        value = m.group()
        trimmed = value.rstrip(".,;:")
        trimmed = trimmed if typed_password(trimmed, joiners=False) else trimmed.rstrip("!?")
        shaped = re.search(r"[/\\]|\.\w{2,4}$|::|\(\)|^-{0,2}(?:[A-Z][A-Z0-9_-]*|[a-z][a-z0-9_-]*)=.", trimmed)
        if typed_password(trimmed, joiners=False) and not shaped:  # paths, file names, code, NAME=value
            yield m.start(), m.start() + len(trimmed)


# ---- the password window: after a password keyword, the typed values in the same clause ---------------------

_PASSWORD_KEYS = lazy(
    r"(?i)(?<![A-Za-z/])(?:pass(?:word|wd|code)?s?|pwd|pw|wpa2? key|wi-?fi key|network key|login|log-in|sign-in|"
    r"credentials?|creds)(?![A-Za-z_])|密码|口令|密碼|登录|登陆|账号|帐号")


def password_windows(text: str) -> Iterator[Span]:
    """"old password was X, new one is Y", "the iCloud password: X -> Y", "pw Dragon#Falcon40": every typed
    value in the clause after the keyword."""
    for kw in _PASSWORD_KEYS.finditer(text):
        end = _CLAUSE_END.search(text, kw.end())
        stop = min(end.start() if end else len(text), kw.end() + 120)
        for m in _CANDIDATE.finditer(text, kw.end(), stop):
            trimmed = m.group().rstrip(".,!?;:")
            if typed_password(trimmed) or _plain_password(trimmed, text[kw.end(): m.start()]) or _keyed(trimmed):
                yield m.start(), m.start() + len(trimmed)
        # "WPA2 key: jumps-harbor-lantern": words joined into one value right after the keyword
        joined = re.match(r"\s*(?:is|was|:|=|：|是|为)?\s*(?P<v>[A-Za-z]+(?:[-._][A-Za-z0-9]+){2,})(?![\w-])",
                          text[kw.end(): stop])
        if joined:
            yield kw.end() + joined.start("v"), kw.end() + joined.end("v")


def _plain_password(value: str, between: str) -> bool:
    """Right after "password is" (or "->", "to", "now") a word-and-digits value ("Maple2020") is the password."""
    if not re.search(r"(?:\bis|\bwas|\bbe|\bfrom|=|:|：|是|为|->|→|/|—|\bto|\bnow|换成|改成了?|改为|设为|设成|^)"
                     r"\s*[\"'“「]?\s*$", between, flags=re.IGNORECASE):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    return letters >= 2 and digits >= 2 and not _EMAILISH.match(value) and not _NOT_TYPED.search(value)


def _keyed(value: str) -> bool:
    """After a password keyword, letters with a digit and a joiner ("michae6-o") are a typed value too."""
    return (len(value) >= 6 and sum(c.isalpha() for c in value) >= 2 and any(c.isdigit() for c in value)
            and any(c in "-._" for c in value.strip("-._")) and not _EMAILISH.match(value)
            and not _NOT_TYPED.search(value) and not re.fullmatch(r"[\d.\-_/:]+[a-z]{0,2}", value))


def _random_like(value: str) -> bool:
    """Upper and lower case and a digit mixed through eight or more characters: generated, not a brand name
    ("1Password", "iPhone15")."""
    classes = ["d" if c.isdigit() else "u" if c.isupper() else "l" for c in value]
    switches = sum(a != b for a, b in itertools.pairwise(classes))
    return (len(value) >= 8 and value.isalnum() and {"d", "u", "l"} <= set(classes) and switches >= 5)


# A value said in the voice of a login, with no keyword: "just use Banana2024 for the camera", "我都用Silver623".
_CREDENTIAL_VERB = lazy(r"(?i)(?:\b(?:just use|use|using|used|went with|typed|type in|set (?:it )?to|"
                        r"changed (?:it )?to)\s+|(?:设的是|设成|改成了?|都用|用的是|后面是|用的还是|输入?|填)\s*)"
                        rf"(?P<v>[^\s{_CJK}，,。;；]{{6,40}})")


def credential_verbs(text: str) -> Iterator[Span]:
    for m in _CREDENTIAL_VERB.finditer(text):
        value = m.group("v").rstrip(".,;:")
        if _plain_password(value, "") or typed_password(value) or _keyed(value) or _random_like(value):
            yield m.start("v"), m.start("v") + len(value)


# ---- a login pair: "alice@x.com / Thunder1985", "13005056286，qwerty7?z" ---------------------------------

_LOGIN_PAIR = lazy(
    rf"(?:(?<![\w.+-])[\w.+-]{{1,64}}@[\w-]{{1,63}}(?:\.[\w-]{{1,63}}){{1,8}}|(?<!\d)1\d{{10}}(?!\d)|\b[A-Za-z][\w.-]{2,30}(?=\s*/))"
    rf"\s*(?:/|\||,|，|\+|and|with|加|和|密码|pw)\s*"
    rf"(?P<v>[^\s{_CJK}，,。;；]{{6,64}})")


def login_pairs(text: str) -> Iterator[Span]:
    for m in _LOGIN_PAIR.finditer(text):
        value = m.group("v").rstrip(".,!?;:")
        if (typed_password(value) or _plain_password(value, ":") or _keyed(value) or _random_like(value)) and \
                not _EMAILISH.match(value):
            yield m.start("v"), m.start("v") + len(value)


# "4072 4672 2473 0750 / 04/30 / 449": a card, its expiry and then its CVV.
_CARD_TAIL = lazy(r"(?<!\d)(?:\d[ -]?){12,18}\d\s*[/|,;]?\s*(?:exp\w*\.?\s*)?(?:0[1-9]|1[0-2])/\d{2,4}"
                  r"\s*[/|,;]?\s*"
                  r"(?:cvv2?|cvc2?|csc|安全码)?\s*[:：]?\s*(?P<v>\d{3,4})(?!\d)", re.IGNORECASE)
_BASIC = lazy(r"(?<![A-Za-z0-9])(?i:basic)\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")


def card_tails(text: str) -> Iterator[Span]:
    for m in _CARD_TAIL.finditer(text):
        yield m.span("v")


def basic_credentials(text: str) -> Iterator[Span]:
    """"Basic dXNlcjpwYXNz": base64 of "user:password", whatever words come before it."""
    for m in _BASIC.finditer(text):
        try:
            decoded = base64.b64decode(m.group("v") + "=" * (-len(m.group("v")) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        if b":" in decoded and decoded.isascii():
            yield m.span("v")


# A generated token: long, with letters and digits interleaved many times. Words and numbers run in long
# stretches of one class ("internationalization2020"); pure hex is left to hex_keys (hashes are not secrets).
_LONG_TOKEN = lazy(r"(?<![A-Za-z0-9+/_=.-])(?P<v>[A-Za-z0-9+/_=.-]{20,512})(?![A-Za-z0-9+/_=.-])")


def generated_tokens(text: str) -> Iterator[Span]:
    for m in _LONG_TOKEN.finditer(text):
        value = m.group("v").rstrip(".")
        if "=" in value.rstrip("="):
            continue  # NAME=value: the assignment detector reads those
        if (re.fullmatch(r"[0-9a-fA-F-]+|[0-9A-Z_-]+", value) or "//" in value or value[0] in "/.~"
                or value.count(".") > 2):
            continue  # hashes, UUIDs, ULIDs and order numbers, URLs, paths, dotted names
        if (re.fullmatch(r"0x[0-9a-fA-F]+|bc1[02-9ac-hj-np-z]{20,90}|[a-z]{1,10}-[0-9a-f]{8,17}", value)
                or re.search(r"(?:ssh-[a-z0-9]+|ecdsa-sha2-[a-z0-9]+|address|地址)\W{0,3}$",
                             text[max(0, m.start() - 30): m.start()],
                             re.IGNORECASE)):
            continue  # public: wallet addresses, cloud resource ids (ami-...), SSH public keys
        classes = [("d" if c.isdigit() else "u" if c.isupper() else "l" if c.isalpha() else "s") for c in value]
        switches = sum(a != b for a, b in itertools.pairwise(classes))
        words = len(re.findall(r"[A-Z][a-z]{2,}|[a-z]{5,}", value))  # camelCase prose switches case too
        if (switches >= max(8, len(value) // 4) and words * 6 < len(value) and sum(c.isdigit() for c in value) >= 2
                and entropy(value) >= 3.5):
            yield m.start("v"), m.start("v") + len(value)


_DIGIT = lazy(r"\d")
_LONG = lazy(r"[A-Za-z0-9_+/=.-]{16}")
# Each detector runs only where its cheap gate matches: most chat turns have no digit, no long token and no
# assignment, and skipping them keeps the guard a fraction of a millisecond per add.
DETECTORS: tuple[tuple[str, Callable[[str], Iterator[Span]], LazyPattern | None], ...] = (
    ("card", card_tails, _DIGIT),
    ("token", basic_credentials, lazy(r"(?i)basic")),
    ("token", generated_tokens, _LONG),
    ("api_key", vendor_tokens, _LONG),
    ("url_password", url_credentials, lazy(r"://")),
    ("password", connection_fields, lazy(r"=")),
    ("secret_value", assignments, lazy(r"[=:]")),
    ("token", cookie_values, lazy(r"(?i)session|sid|cookie")),
    ("api_key", auth_headers, lazy(r"(?i)bearer|authori[sz]ation")),
    ("code", keyword_values, lazy(r"\d|[码碼]|(?i:code)")),
    ("national_id", identity_numbers, _DIGIT),
    ("bank_account", bank_numbers, _DIGIT),
    ("passphrase", phrases,
     lazy(r"(?i)what (?:i|we)|phrase|words|mnemonic|codes?\b|master|码|助记|密语|短语|主密码|\bas\b")),
    ("passphrase", seed_phrases, lazy(rf"(?:[a-z]{{3,8}}[ ,]+){{11}}|(?:[{_CJK}][ ,，、]+){{11}}")),
    ("hex_key", hex_keys, _LONG),
    ("password", password_windows, _DIGIT),
    ("password", login_pairs, _DIGIT),
    ("password", typed_passwords, _DIGIT),
    ("password", credential_verbs, _DIGIT),
)
