"""A seeded corpus of sentences (English and Chinese) that embed credentials and other secrets.

An independent test corpus for the secret guard, written without looking at the guard. Every ``Case`` carries
the exact substrings (``secrets``) that must never reach storage in plaintext: for a URL that is only the
password part, for a PEM block only the base64 body, for a card number the digits as they were typed (with
their spaces or dashes). ``NEAR_MISSES`` holds ordinary sentences that look related but hold no secret, for
measuring false positives.

Values are random per seed (``random.Random``) but the checks that make them look real hold: card numbers
pass Luhn, IBANs pass mod 97, Chinese resident ids carry the ISO 7064 MOD 11-2 check digit and a real birth
date, SSNs avoid the never-issued areas, ABA routing numbers pass their checksum.

Forms whose names end in ``_implicit`` state a password without any keyword ("I set it to Tr0ub4dor&3 for
the router"); report them separately.

    .venv/bin/python -m ebbing.eval.secrets_corpus   # counts per form and language, a few samples
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from urllib.parse import quote


@dataclass(frozen=True)
class Case:
    form: str  # e.g. "postgres_url_password", "bank_pin_en", "cn_resident_id"
    language: str  # "en" or "zh"
    text: str  # the sentence as a user would type it
    secrets: tuple[str, ...]  # the exact substrings (values) that must not be stored in plaintext


_Out = tuple[str, tuple[str, ...]]
_Gen = Callable[[random.Random], _Out]
_REGISTRY: dict[str, tuple[str, _Gen]] = {}


def _form(name: str, language: str) -> Callable[[_Gen], _Gen]:
    def register(fn: _Gen) -> _Gen:
        if name in _REGISTRY:
            raise ValueError(f"duplicate form {name}")
        _REGISTRY[name] = (language, fn)
        return fn

    return register


# ---------------------------------------------------------------------------------------------------------
# alphabets and small random helpers

_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase
_DIGITS = string.digits
_ALNUM = string.ascii_letters + string.digits
_LOWER_ALNUM = _LOWER + _DIGITS
_UPPER_ALNUM = _UPPER + _DIGITS
_HEX = "0123456789abcdef"
_B64URL = _ALNUM + "-_"
_SYMBOLS = "!@#$%&*-_+=?"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _digits(rng: random.Random, n: int) -> str:
    return _r(rng, _DIGITS, n)


def _b64(rng: random.Random, nbytes: int, prefix: bytes = b"") -> str:
    return base64.b64encode(prefix + rng.randbytes(nbytes)).decode()


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _fill(rng: random.Random, templates: tuple[str, ...], secrets: dict[str, str], **fields: str) -> _Out:
    """Pick a template and fill it; the secrets are the values of the secret placeholders it uses."""
    template = rng.choice(templates)
    text = template.format(**secrets, **fields)
    used = tuple(value for key, value in secrets.items() if "{" + key + "}" in template)
    return text, used


# ---------------------------------------------------------------------------------------------------------
# filler vocabulary

_EN_USERS = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "oscar", "peggy",
             "victor", "walter", "maya", "liam", "noah", "emma", "olivia", "sam", "priya", "kenji", "jsmith",
             "m.garcia", "tom_h", "admin", "deploy", "ops")
_EN_FIRST = ("Alice", "Ben", "Chloe", "Daniel", "Ella", "Felix", "Hannah", "Isaac", "Julia", "Marcus", "Nora",
             "Owen", "Rosa", "Ted")
_SERVICES = ("Netflix", "Gmail", "Spotify", "Amazon", "Outlook", "Dropbox", "Steam", "PayPal", "Instagram",
             "LinkedIn", "the school portal", "Jira", "the HR system", "the VPN", "iCloud", "Facebook",
             "the intranet", "Zoom")
_BANKS_EN = ("Chase", "Barclays", "HSBC", "Wells Fargo", "Monzo", "Bank of America", "Santander", "Lloyds",
             "Citi", "Capital One")
_SSIDS = ("HomeNet_5G", "TP-Link_3F2A", "NETGEAR47", "CoffeeHouse-Guest", "Cabin_WiFi", "BTHub6-9QXR",
          "Linksys01442", "VM4471823", "Pretty Fly for a WiFi", "Office-Guest", "ASUS_58_2G")
_DB_HOSTS = ("db.internal", "prod-db-01.example.com", "10.0.3.17", "localhost", "pg.myapp.io", "staging.acme.dev",
             "192.168.1.40", "data.corp.local", "rds-main.c9akcl2x.us-east-1.rds.amazonaws.com", "db",
             "postgres.railway.internal", "127.0.0.1")
_DB_NAMES = ("app", "orders", "analytics", "billing", "users", "inventory", "shop_prod", "crm", "wiki", "metrics")
_DB_USERS = ("postgres", "app", "admin", "app_user", "readonly", "svc_api", "root", "django", "etl", "reporting")

_ZH_SERVICES = ("淘宝", "支付宝", "微信", "QQ", "京东", "网易邮箱", "12306", "拼多多", "抖音", "公司OA",
                "学校教务系统", "美团", "B站", "招商银行App", "钉钉", "小红书", "企业微信", "百度网盘")
_ZH_NAMES = ("小王", "老李", "张伟", "王芳", "李娜", "刘洋", "陈静", "杨帆", "赵磊", "我妈", "我爸", "我老婆",
             "我老公", "表哥", "室友")
_ZH_BANKS = ("工商银行", "农业银行", "建设银行", "招商银行", "中国银行", "交通银行", "浦发银行", "邮储银行")
_ZH_CITIES = ("北京", "上海", "深圳", "杭州", "成都", "武汉", "南京", "西安", "广州", "苏州")

_CAP_WORDS = ("Summer", "Winter", "Autumn", "Spring", "Dragon", "Monkey", "Sunshine", "Rainbow", "Tiger",
              "Falcon", "Coffee", "Pepper", "Shadow", "Purple", "Rocket", "Maple", "Ocean", "Panda", "London",
              "Chelsea", "Garden", "Banana", "Silver", "Thunder", "Welcome", "Football", "Princess", "Charlie",
              "Buster", "Lucky", "Snoopy", "Bailey", "Harley", "Mustang", "Phoenix", "Zebra", "Cosmo", "Willow")
_LEET_WORDS = ("troubador", "password", "sunflower", "monkey", "dragon", "whatever", "trustno", "letmein",
               "starwars", "baseball", "superman", "iloveyou", "qwerty", "hunter", "shadow", "michael",
               "freedom", "computer", "pokemon", "chocolate")
_LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"}
_PINYIN_SUR = ("zhang", "wang", "li", "liu", "chen", "yang", "zhao", "huang", "zhou", "wu", "xu", "sun", "ma")
_PINYIN_GIVEN = ("wei", "fang", "na", "min", "jing", "lei", "qiang", "jun", "yan", "hui", "tao", "xin", "ying")

_PASS_WORDS = ("blue", "elephant", "jumps", "correct", "horse", "battery", "staple", "purple", "monkey",
               "dishwasher", "river", "lamp", "tiger", "orbit", "velvet", "cactus", "harbor", "pickle", "rocket",
               "maple", "quiet", "thunder", "granite", "mango", "violin", "lantern", "ember", "falcon", "meadow",
               "pebble", "saddle", "tundra", "walnut", "zephyr", "biscuit", "comet", "dune", "glacier", "hammock",
               "igloo", "jigsaw", "kettle", "lobster", "marble", "nectar", "oyster", "parsnip", "quokka",
               "ribbon", "sunset", "trumpet", "umbrella", "vortex", "wombat", "yodel", "crimson", "banjo")

# a plausible slice of the BIP-39 English wordlist
_BIP39 = tuple("""
abandon ability able about above absent absorb abstract absurd abuse access accident account accuse achieve acid
acoustic acquire across act action actor actress actual adapt add addict address adjust admit adult advance advice
aerobic affair afford afraid again age agent agree ahead aim air airport aisle alarm album alcohol alert alien all
alley allow almost alone alpha already also alter always amateur amazing among amount amused analyst anchor ancient
anger angle angry animal ankle announce annual another answer antenna antique anxiety any apart apology appear apple
approve april arch arctic area arena argue arm armed armor army around arrange arrest arrive arrow art artefact
artist artwork ask aspect assault asset assist assume asthma athlete atom attack attend attitude attract auction
audit august aunt author auto autumn average avocado avoid awake aware away awesome awful awkward axis baby bachelor
bacon badge bag balance balcony ball bamboo banana banner bar barely bargain barrel base basic basket battle beach
bean beauty because become beef before begin behave behind believe below belt bench benefit best betray better
between beyond bicycle bid bike bind biology bird birth bitter black blade blame blanket blast bleak bless blind
blood blossom blouse blue blur blush board boat body boil bomb bone bonus book boost border boring borrow boss bottom
bounce box boy bracket brain brand brass brave bread breeze brick bridge brief bright bring brisk broccoli broken
bronze broom brother brown brush bubble buddy budget buffalo build bulb bulk bullet bundle bunker burden burger
burst bus business busy butter buyer buzz cabbage cabin cable cactus cage cake call calm camera camp can canal cancel
candy cannon canoe canvas canyon capable capital captain car carbon card cargo carpet carry cart case cash casino
castle casual cat catalog catch category cattle caught cause caution cave ceiling celery cement census century
cereal certain chair chalk champion change chaos chapter charge chase chat cheap check cheese chef cherry chest
chicken chief child chimney choice choose chronic chuckle chunk churn cigar cinnamon circle citizen city civil claim
clap clarify claw clay clean clerk clever click client cliff climb clinic clip clock clog close cloth cloud clown
club clump cluster clutch coach coast coconut code coffee coil coin collect color column combine come comfort comic
common company concert conduct confirm congress connect consider control convince cook cool copper copy coral core
corn correct cost cotton couch country couple course cousin cover coyote crack cradle craft cram crane crash crater
crawl crazy cream credit creek crew cricket crime crisp critic crop cross crouch crowd crucial cruel cruise crumble
crunch crush cry crystal cube culture cup cupboard curious current curtain curve cushion custom cute cycle witness
wolf woman wonder wood wool word work world worry worth wrap wreck wrestle wrist write wrong yard year yellow you
young youth zebra zero zone zoo
""".split())


def _email(rng: random.Random) -> str:
    domain = rng.choice(("gmail.com", "outlook.com", "icloud.com", "proton.me"))
    return f"{rng.choice(_EN_USERS).replace('.', '')}{rng.randint(1, 99)}@{domain}"


def _cn_mobile(rng: random.Random) -> str:
    return "1" + rng.choice("3456789") + _digits(rng, 9)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------------------------------------------------
# value generators: passwords, pins, codes


def _password(rng: random.Random, *, zh: bool = False) -> str:
    """A realistic password: word-like ("Summer2024!"), leet ("Tr0ub4dor&3"), random, or pinyin-based."""
    while True:
        style = rng.choice(("word", "word", "leet", "random", "two", "short", "pinyin" if zh else "word"))
        sym = rng.choice(_SYMBOLS)
        if style == "word":
            tail = str(rng.randint(1985, 2025)) if rng.random() < 0.6 else _digits(rng, rng.randint(2, 3))
            pw = rng.choice(_CAP_WORDS) + tail + (sym if rng.random() < 0.8 else "")
        elif style == "leet":
            word = rng.choice(_LEET_WORDS)
            chars = [_LEET[c] if c in _LEET and rng.random() < 0.5 else c for c in word]
            chars[0] = chars[0].upper()
            pw = "".join(chars) + sym + _digits(rng, rng.randint(1, 2))
        elif style == "random":
            n = rng.randint(10, 16)
            body = [rng.choice(_LOWER), rng.choice(_UPPER), rng.choice(_DIGITS), rng.choice(_SYMBOLS)]
            body += rng.choices(_ALNUM + "!@#$%&*", k=n - 4)
            rng.shuffle(body)
            pw = "".join(body)
        elif style == "two":
            a, b = rng.sample(_CAP_WORDS, 2)
            pw = a + sym + b + _digits(rng, 2)
        elif style == "short":  # "hunter2!x"
            pw = rng.choice(_LEET_WORDS)[:6] + rng.choice(_DIGITS) + sym + rng.choice(_LOWER)
        else:
            sur, given = rng.choice(_PINYIN_SUR), rng.choice(_PINYIN_GIVEN)
            shape = rng.randrange(4)
            if shape == 0:
                pw = f"{sur}{given}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
            elif shape == 1:
                pw = f"{sur[0].upper()}{given[0]}{rng.choice(('520', '1314', '888', '666', '521'))}{_digits(rng, 3)}"
            elif shape == 2:
                pw = f"{_cap(sur)}@{rng.randint(1975, 2005)}"
            else:
                pw = f"{sur[0]}{given[0]}{rng.choice(_SYMBOLS)}{_digits(rng, 6)}"
        if len(pw) >= 8 and any(c.isdigit() for c in pw) and pw[-1] not in ".,":
            return pw


def _url_password(rng: random.Random) -> str:
    """A password as it appears inside a URL's userinfo (reserved characters percent-encoded)."""
    return quote(_password(rng), safe="!*-_~$+=&")


def _pin(rng: random.Random, n: int = 4) -> str:
    return _digits(rng, n)


def _passphrase(rng: random.Random, *, spaced: bool | None = None) -> str:
    words = rng.sample(_PASS_WORDS, rng.randint(3, 5))
    if spaced is None:
        spaced = rng.random() < 0.3
    if spaced:
        return " ".join(words)
    sep = rng.choice(("-", "-", ".", "_"))
    if rng.random() < 0.6:
        words.append(str(rng.randint(2, 99)))
    return sep.join(words)


def _seed_phrase(rng: random.Random) -> str:
    return " ".join(rng.sample(_BIP39, 24 if rng.random() < 0.15 else 12))


def _recovery_code(rng: random.Random, style: int) -> str:
    if style == 0:  # 8f3k-29dm-x7q2
        return "-".join(_r(rng, _LOWER_ALNUM, 4) for _ in range(3))
    if style == 1:  # GitHub: a1b2c-3d4e5
        return f"{_r(rng, _HEX, 5)}-{_r(rng, _HEX, 5)}"
    if style == 2:  # Google: 4821 9930
        return f"{_digits(rng, 4)} {_digits(rng, 4)}"
    return "-".join(_r(rng, _UPPER_ALNUM, 4) for _ in range(4))  # XK2P-9QRT-...


# ---------------------------------------------------------------------------------------------------------
# value generators: identity and payment numbers with valid checksums


def _luhn_ok(number: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _with_luhn(partial: str) -> str:
    return next(partial + d for d in _DIGITS if _luhn_ok(partial + d))


def _card_digits(rng: random.Random, brand: str) -> str:
    if brand == "visa":
        return _with_luhn("4" + _digits(rng, 14))
    if brand == "mastercard":
        prefix = str(rng.randint(51, 55)) if rng.random() < 0.7 else str(rng.randint(2221, 2720))
        return _with_luhn(prefix + _digits(rng, 15 - len(prefix)))
    if brand == "amex":
        return _with_luhn(rng.choice(("34", "37")) + _digits(rng, 12))
    # UnionPay / 银联: 62..., 16 to 19 digits, common Chinese bank BINs
    bin_, length = rng.choice((("622848", 19), ("622202", 19), ("621700", 19), ("622588", 16), ("621483", 16),
                               ("621226", 19), ("622260", 19), ("621661", 19), ("625807", 16), ("623668", 19)))
    return _with_luhn(bin_ + _digits(rng, length - len(bin_) - 1))


def _group_card(rng: random.Random, digits: str, *, contiguous: float = 0.3) -> str:
    if rng.random() < contiguous:
        return digits
    sep = rng.choice((" ", " ", "-"))
    if len(digits) == 15:  # Amex 4-6-5
        parts = [digits[:4], digits[4:10], digits[10:]]
    else:
        parts = [digits[i:i + 4] for i in range(0, len(digits), 4)]
    return sep.join(parts)


def _expiry(rng: random.Random) -> str:
    return f"{rng.randint(1, 12):02d}/{rng.randint(26, 31)}"


_CN_AREAS = ("110101", "110105", "310104", "310115", "440305", "440106", "330106", "510107", "420106", "320102",
             "370202", "610113", "500103", "120101", "210102", "350203", "430104", "410105", "530102", "450103")
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def _cn_id_check(body17: str) -> str:
    return _ID_CHECK[sum(int(c) * w for c, w in zip(body17, _ID_WEIGHTS, strict=True)) % 11]


def _cn_resident_id(rng: random.Random) -> str:
    born = date.fromordinal(rng.randint(date(1950, 1, 1).toordinal(), date(2006, 12, 31).toordinal()))
    body = rng.choice(_CN_AREAS) + born.strftime("%Y%m%d") + f"{rng.randint(1, 999):03d}"
    return body + _cn_id_check(body)


def _cn_id_valid(number: str) -> bool:
    if not re.fullmatch(r"\d{17}[\dX]", number):
        return False
    try:
        date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    return _cn_id_check(number[:17]) == number[17]


def _ssn(rng: random.Random) -> str:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            break
    group, serial = rng.randint(1, 99), rng.randint(1, 9999)
    a, g, s = f"{area:03d}", f"{group:02d}", f"{serial:04d}"
    return rng.choice((f"{a}-{g}-{s}", f"{a}-{g}-{s}", f"{a}-{g}-{s}", f"{a} {g} {s}", f"{a}{g}{s}"))


def _uk_nino(rng: random.Random) -> str:
    first_ok = [c for c in _UPPER if c not in "DFIQUV"]
    second_ok = [c for c in _UPPER if c not in "DFIOQUV"]
    while True:
        prefix = rng.choice(first_ok) + rng.choice(second_ok)
        if prefix not in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ"):
            break
    d = _digits(rng, 6)
    suffix = rng.choice("ABCD")
    if rng.random() < 0.5:
        return f"{prefix} {d[:2]} {d[2:4]} {d[4:]} {suffix}"
    return f"{prefix}{d}{suffix}"


def _iban(country: str, bban: str) -> str:
    rearranged = bban + country + "00"
    number = int("".join(str(int(c, 36)) for c in rearranged))
    return f"{country}{98 - number % 97:02d}{bban}"


def _iban_valid(iban: str) -> bool:
    compact = iban.replace(" ", "")
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _iban_for(rng: random.Random, country: str) -> tuple[str, str]:
    """(IBAN, BIC) for DE, GB, FR or NL."""
    if country == "DE":
        blz, bic = rng.choice((("37040044", "COBADEFFXXX"), ("10010010", "PBNKDEFFXXX"), ("50010517", "INGDDEFFXXX"),
                               ("20041133", "COBADEHD001"), ("70150000", "SSKMDEMMXXX")))
        return _iban("DE", blz + _digits(rng, 10)), bic
    if country == "GB":
        bank, bic = rng.choice((("NWBK", "NWBKGB2L"), ("BARC", "BARCGB22"), ("HBUK", "HBUKGB4B"), ("LOYD", "LOYDGB2L"),
                                ("MIDL", "MIDLGB22")))
        return _iban("GB", bank + _digits(rng, 6) + _digits(rng, 8)), bic
    if country == "FR":
        bank, bic = rng.choice((("30004", "BNPAFRPPXXX"), ("30003", "SOGEFRPP"), ("20041", "PSSTFRPPPAR"),
                                ("30002", "CRLYFRPP"), ("10107", "BREDFRPPXXX")))
        branch, account = _digits(rng, 5), _digits(rng, 11)
        key = 97 - (89 * int(bank) + 15 * int(branch) + 3 * int(account)) % 97
        return _iban("FR", f"{bank}{branch}{account}{key:02d}"), bic
    bank, bic = rng.choice((("ABNA", "ABNANL2A"), ("INGB", "INGBNL2A"), ("RABO", "RABONL2U"), ("TRIO", "TRIONL2U"),
                            ("SNSB", "SNSBNL2A")))
    return _iban("NL", bank + _digits(rng, 10)), bic


def _group4(text: str) -> str:
    return " ".join(text[i:i + 4] for i in range(0, len(text), 4))


def _aba_routing(rng: random.Random) -> str:
    first = rng.choice(list(range(1, 13)) + list(range(21, 33)))
    partial = f"{first:02d}" + _digits(rng, 6)
    for d in _DIGITS:
        n = [int(c) for c in partial + d]
        if (3 * (n[0] + n[3] + n[6]) + 7 * (n[1] + n[4] + n[7]) + n[2] + n[5] + n[8]) % 10 == 0:
            return partial + d
    raise AssertionError("unreachable")


def _aba_ok(number: str) -> bool:
    n = [int(c) for c in number]
    return len(n) == 9 and (3 * (n[0] + n[3] + n[6]) + 7 * (n[1] + n[4] + n[7]) + n[2] + n[5] + n[8]) % 10 == 0


# ---------------------------------------------------------------------------------------------------------
# value generators: keys and tokens

_AWS_ALPHABET = _UPPER + "234567"


def _aws_key_id(rng: random.Random) -> str:
    return rng.choice(("AKIA", "AKIA", "AKIA", "ASIA")) + _r(rng, _AWS_ALPHABET, 16)


def _aws_secret(rng: random.Random) -> str:
    return _r(rng, _ALNUM + "+/", 40)


def _pem(rng: random.Random, kind: str) -> tuple[str, str]:
    """(whole PEM block, base64 body as it appears in the block)."""
    if kind == "rsa":
        label, raw, width = "RSA PRIVATE KEY", bytes.fromhex("308204a40201000282010100") + rng.randbytes(
            rng.randint(260, 1180)), 64
    elif kind == "pkcs8":
        label, raw, width = "PRIVATE KEY", bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8") + \
            rng.randbytes(rng.randint(300, 1190)), 64
    elif kind == "ec":
        label = "EC PRIVATE KEY"
        raw = bytes.fromhex("30770201010420") + rng.randbytes(32) + \
            bytes.fromhex("a00a06082a8648ce3d030107a14403420004") + rng.randbytes(64)
        width = 64
    else:  # openssh
        label = "OPENSSH PRIVATE KEY"
        raw = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00\x00\x00\x00\x01" + \
            b"\x00\x00\x003\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 " + rng.randbytes(rng.randint(300, 380))
        width = 70
    encoded = base64.b64encode(raw).decode()
    body = "\n".join(encoded[i:i + width] for i in range(0, len(encoded), width))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body


def _pgp_block(rng: random.Random) -> tuple[str, str]:
    encoded = base64.b64encode(b"\x95\x07\x46\x04" + rng.randbytes(rng.randint(400, 900))).decode()
    body = "\n".join(encoded[i:i + 64] for i in range(0, len(encoded), 64))
    body += "\n=" + _r(rng, _ALNUM + "+/", 4)
    header = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n"
    if rng.random() < 0.4:
        header += rng.choice(("Comment: GPGTools - https://gpgtools.org\n", "Version: GnuPG v2\n"))
    return f"{header}\n{body}\n-----END PGP PRIVATE KEY BLOCK-----", body


def _jwt(rng: random.Random) -> str:
    alg = rng.choice(("HS256", "HS256", "RS256", "ES256"))
    header: dict[str, str] = {"alg": alg, "typ": "JWT"}
    if alg != "HS256" and rng.random() < 0.5:
        header["kid"] = _r(rng, _B64URL, 16)
    iat = rng.randint(1_700_000_000, 1_760_000_000)
    payload = {"sub": str(rng.randint(1000, 99_999_999)), "name": rng.choice(_EN_FIRST), "iat": iat,
               "exp": iat + rng.choice((900, 3600, 86_400))}
    if rng.random() < 0.5:
        payload["role"] = rng.choice(("admin", "user", "service"))
    sig_len = {"HS256": 32, "RS256": 256, "ES256": 64}[alg]
    parts = [json.dumps(header, separators=(",", ":")).encode(), json.dumps(payload, separators=(",", ":")).encode(),
             rng.randbytes(sig_len)]
    return ".".join(_b64url(p) for p in parts)


def _discord_token(rng: random.Random) -> str:
    user_id = str(rng.randint(10**17, 13 * 10**17))
    return f"{_b64url(user_id.encode())}.{_r(rng, _B64URL, 6)}.{_r(rng, _B64URL, 38)}"


def _generic_secret(rng: random.Random) -> str:
    shape = rng.randrange(5)
    if shape == 0:
        return _r(rng, _HEX, 32)
    if shape == 1:
        return _r(rng, _ALNUM, 40)
    if shape == 2:
        return _r(rng, _HEX, 64)
    if shape == 3:
        return _r(rng, _B64URL, rng.randint(24, 48))
    return f"{_r(rng, _LOWER, rng.randint(2, 4))}_{_r(rng, _ALNUM, 32)}"


def _session_value(rng: random.Random) -> tuple[str, str]:
    """(cookie name, value)."""
    shape = rng.randrange(5)
    if shape == 0:
        return "sessionid", _r(rng, _LOWER_ALNUM, 32)
    if shape == 1:
        return "PHPSESSID", _r(rng, _LOWER_ALNUM, 26)
    if shape == 2:
        return "connect.sid", f"s%3A{_r(rng, _B64URL, 32)}.{_r(rng, _ALNUM, 43)}"
    if shape == 3:
        payload = _b64url(json.dumps({"user_id": rng.randint(1, 99_999), "_fresh": True}).encode())
        return "session", f"{payload}.{_r(rng, _B64URL, 6)}.{_r(rng, _B64URL, 27)}"
    return "sid", _r(rng, _HEX, 64)


# ---------------------------------------------------------------------------------------------------------
# shared template sets

_TOKEN_EN = (
    "my {label} is {s}",
    "{Label}: {s}",
    "Here's the {label}: {s} (expires in 90 days)",
    "use {s} as the {label} in CI please",
    "{env}={s}",
    "export {env}={s}",
    "I put {env}=\"{s}\" in the workflow secrets, is that right?",
    "new {label} just generated -> {s}",
    "Can you remember the {label} for me? It's {s}. I keep losing it.",
    "ok the {label} {s} finally works, the old one was revoked",
)
_TOKEN_ZH = (
    "我的{label}是{s}",
    "{label}：{s}",
    "把{label} {s} 配到环境变量 {env} 里",
    "这是{label}，{s}，别外传",
    "{env}={s}，帮我记一下",
    "测试环境用的{label}是 {s}。",
    "刚生成了新的{label}：{s}，旧的已经作废了",
)


def _token_en(rng: random.Random, value: str, label: str, env: str, extra: tuple[str, ...] = ()) -> _Out:
    return _fill(rng, _TOKEN_EN + extra, {"s": value}, label=label, Label=_cap(label), env=env)


def _token_zh(rng: random.Random, value: str, label: str, env: str, extra: tuple[str, ...] = ()) -> _Out:
    return _fill(rng, _TOKEN_ZH + extra, {"s": value}, label=label, env=env)


# =========================================================================================================
# English forms: credentials inside URLs

_URL_SENTENCES_EN = (
    "{What} is at {url}",
    "can you connect to {url} and check {check}?",
    "{env}={url}",
    "use `{url}` for staging",
    "connection string: {url} (read-only user)",
    "Prod is {url}, be careful with it.",
    "I keep getting timeouts on {url} since this morning",
    "Save this for later: {url}",
    "why does {url} refuse my connection?? the password is definitely right",
    "the worker reads {env} which is set to \"{url}\"",
)


def _url_case(rng: random.Random, shapes: tuple[str, ...], env: str, sentences: tuple[str, ...] = _URL_SENTENCES_EN,
              what: str = "The DB", check: str = "the orders table") -> _Out:
    """A sentence from ``sentences`` with one of the URL ``shapes`` put in for {url} (sentences may also spell
    the URL out themselves); the secret is the URL's password."""
    template = rng.choice(sentences).replace("{url}", rng.choice(shapes))
    return _fill(rng, (template,), {"s": _url_password(rng)}, env=env, host=rng.choice(_DB_HOSTS),
                 db=rng.choice(_DB_NAMES), user=rng.choice(_DB_USERS), name=rng.choice(_EN_USERS),
                 n=str(rng.randint(10000, 19999)), rid=_r(rng, _LOWER_ALNUM, 5), What=what, check=check)


@_form("postgres_url_password", "en")
def _postgres_url(rng: random.Random) -> _Out:
    return _url_case(rng, ("postgres://{user}:{s}@{host}:5432/{db}", "postgres://{user}:{s}@{host}/{db}?sslmode=require",
                           "postgres://{name}:{s}@{host}:6543/{db}"), rng.choice(("DATABASE_URL", "PG_URL")))


@_form("postgresql_url_password", "en")
def _postgresql_url(rng: random.Random) -> _Out:
    return _url_case(rng, ("postgresql://{user}:{s}@{host}:5432/{db}",
                           "postgresql+psycopg://{user}:{s}@{host}/{db}",
                           "postgresql://{user}:{s}@db.{rid}.supabase.co:5432/postgres"),
                     rng.choice(("DATABASE_URL", "SQLALCHEMY_DATABASE_URI")))


@_form("mysql_url_password", "en")
def _mysql_url(rng: random.Random) -> _Out:
    return _url_case(rng, ("mysql://{user}:{s}@{host}:3306/{db}", "mysql+pymysql://root:{s}@127.0.0.1/{db}",
                           "jdbc:mysql://{host}:3306/{db}?user={user}&password={s}&useSSL=false",
                           "mysql://{name}:{s}@aws.connect.psdb.cloud/{db}?sslaccept=strict"),
                     rng.choice(("DATABASE_URL", "MYSQL_URL")))


@_form("mongodb_srv_url_password", "en")
def _mongodb_url(rng: random.Random) -> _Out:
    return _url_case(rng, ("mongodb+srv://{user}:{s}@cluster0.{rid}.mongodb.net/{db}?retryWrites=true&w=majority",
                           "mongodb+srv://{name}:{s}@prod.{rid}.mongodb.net/",
                           "mongodb+srv://{user}:{s}@{rid}-pl-0.{rid}.mongodb.net/{db}?authSource=admin"),
                     rng.choice(("MONGODB_URI", "MONGO_URL")), check="the users collection")


@_form("redis_url_password", "en")
def _redis_url(rng: random.Random) -> _Out:
    return _url_case(rng, ("redis://:{s}@{host}:6379/0", "redis://default:{s}@redis-{n}.c1.us-east-1-2.ec2.redns.redis-cloud.com:{n}",
                           "rediss://default:{s}@{rid}.upstash.io:6379", "redis://{user}:{s}@{host}:6380/2"),
                     rng.choice(("REDIS_URL", "CACHE_URL", "CELERY_RESULT_BACKEND")), what="The cache",
                     check="the queue length")


@_form("amqp_url_password", "en")
def _amqp_url(rng: random.Random) -> _Out:
    return _url_case(rng, ("amqp://{user}:{s}@rabbitmq.internal:5672/%2F", "amqps://{name}:{s}@{rid}.rmq.cloudamqp.com/{name}",
                           "amqp://guest:{s}@{host}:5672/{db}"),
                     rng.choice(("CELERY_BROKER_URL", "AMQP_URL", "RABBITMQ_URL")), what="The broker",
                     check="the dead-letter queue")


@_form("https_url_password", "en")
def _https_url(rng: random.Random) -> _Out:
    return _url_case(rng, ("",), "", sentences=(
        "clone it with git clone https://{name}:{s}@git.example.com/team/backend.git",
        "git remote set-url origin https://{name}:{s}@gitlab.{rid}.io/infra/terraform.git",
        "the nexus mirror is https://{name}:{s}@nexus.corp.local/repository/pypi/simple, use it in pip.conf",
        "pip install --index-url https://{name}:{s}@nexus.corp.local/repository/pypi/simple ourpkg",
        "PIP_INDEX_URL=https://{name}:{s}@pypi.{rid}.internal/simple/",
        "Router admin page: http://admin:{s}@192.168.1.1/",
        "Jenkins webhook goes to https://{name}:{s}@ci.{rid}.dev/job/build/buildWithParameters",
        "I bookmarked https://{name}:{s}@grafana.{rid}.dev/d/overview so I don't have to log in every time",
    ))


_FTP_SENTENCES_EN = (
    "upload the photos to {url}",
    "FTP is {url}",
    "The printer scans to {url} every night.",
    "I use {url} for the website files, FileZilla keeps timing out though",
    "backups go to {url} — check they're still running?",
)


@_form("ftp_url_password", "en")
def _ftp_url(rng: random.Random) -> _Out:
    return _url_case(rng, ("ftp://{name}:{s}@ftp.example.com/uploads/", "ftp://{name}:{s}@files.myhost.net:21/public_html",
                           "sftp://{user}:{s}@{host}:22/backups", "ftps://{name}:{s}@{host}/scans/"),
                     "FTP_URL", sentences=_FTP_SENTENCES_EN)


# =========================================================================================================
# English forms: passwords stated in words


@_form("password_en", "en")
def _password_en(rng: random.Random) -> _Out:
    return _fill(rng, (
        "My password is {s}",
        "my password is {s}, please remember it.",
        "The password for {service} is {s}.",
        "{service} password: {s}",
        "I changed my {service} password to {s} today",
        "password is \"{s}\" (without the quotes)",
        "Here's the password — {s} — don't share it.",
        "Oh and the password's {s} btw",
        "Password for the shared drive = {s}",
        "remember that my {service} password is now {s} because I had to reset it again",
        "so the new laptop password is {s} and the old one doesn't work anymore",
    ), {"s": _password(rng)}, service=rng.choice(_SERVICES))


@_form("wifi_password_en", "en")
def _wifi_en(rng: random.Random) -> _Out:
    s = _password(rng) if rng.random() < 0.7 else _passphrase(rng, spaced=False)
    return _fill(rng, (
        "The wifi password is {s}",
        "WiFi: {ssid} / password {s}",
        "guest network is {ssid}, pw {s}",
        "Wi-Fi password for the cabin: {s}",
        "our wifi is called \"{ssid}\" and the password is {s}.",
        "WPA2 key: {s}",
        "For the Airbnb wifi ({ssid}) the password is {s} — it's on the fridge too",
        "wifi pass {s}",
    ), {"s": s}, ssid=rng.choice(_SSIDS))


@_form("pw_abbrev_en", "en")
def _pw_abbrev(rng: random.Random) -> _Out:
    return _fill(rng, (
        "pw: {s}",
        "pwd={s}",
        "passwd {s}",
        "pass: {s}",
        "PW is {s}",
        "user {user} pw {s}",
        "vpn creds -> pw {s}",
        "{service}: {user} / pwd {s}",
    ), {"s": _password(rng)}, user=rng.choice(_EN_USERS), service=rng.choice(_SERVICES))


@_form("login_slash_en", "en")
def _login_slash(rng: random.Random) -> _Out:
    return _fill(rng, (
        "login: {user} / {s}",
        "{user} / {s} for the admin panel",
        "username {user}, password {s}",
        "creds: {user}:{s}",
        "log in as {user} with {s}",
        "u: {user} p: {s}",
        "the router admin is admin/{s}",
        "{service} login is {email} / {s}",
    ), {"s": _password(rng)}, user=rng.choice(_EN_USERS), service=rng.choice(_SERVICES),
        email=_email(rng))


@_form("password_change_en", "en")
def _password_change(rng: random.Random) -> _Out:
    return _fill(rng, (
        "I changed my password from {s} to {s2}.",
        "old password was {s}, new one is {s2}",
        "Switched the {service} password: {s} -> {s2}",
        "if {s2} doesn't work try the old password {s}",
        "the password is {s} (it used to be {s2} but IT made me change it)",
    ), {"s": _password(rng), "s2": _password(rng)}, service=rng.choice(_SERVICES))


# =========================================================================================================
# English forms: PINs and codes


@_form("pin_en", "en")
def _pin_en(rng: random.Random) -> _Out:
    return _fill(rng, (
        "pin {s}",
        "my PIN is {s}",
        "PIN: {s}",
        "the pin's {s}",
        "use pin {s} to unlock the tablet",
        "Phone PIN is {s}, the kids know it anyway",
        "remember PIN {s} for the parcel locker",
        "the PIN for the iPad is {s}.",
    ), {"s": _pin(rng, rng.choice((4, 4, 4, 6)))})


@_form("bank_pin_en", "en")
def _bank_pin(rng: random.Random) -> _Out:
    return _fill(rng, (
        "my bank PIN is {s}",
        "{bank} card PIN: {s}",
        "ATM pin {s}",
        "debit card pin is {s}, don't tell anyone",
        "The PIN for my {bank} account is {s}.",
        "I always forget it so: bank pin = {s}",
    ), {"s": _pin(rng)}, bank=rng.choice(_BANKS_EN))


@_form("card_pin_en", "en")
def _card_pin(rng: random.Random) -> _Out:
    return _fill(rng, (
        "card PIN: {s}",
        "credit card pin {s}",
        "the PIN for the company card is {s}",
        "PIN for my Amex: {s}",
        "New card arrived, PIN letter says {s}.",
        "gift card pin {s} — the balance is about $40",
    ), {"s": _pin(rng)})


@_form("sim_pin_en", "en")
def _sim_pin(rng: random.Random) -> _Out:
    return _fill(rng, (
        "SIM PIN is {s}",
        "the SIM pin on the new phone is {s} and the PUK is {s2}",
        "sim card pin: {s}",
        "PUK code {s2} in case I lock the SIM again",
        "When it asks for the SIM PIN, enter {s}.",
    ), {"s": _pin(rng), "s2": _pin(rng, 8)})


@_form("door_code_en", "en")
def _door_code(rng: random.Random) -> _Out:
    return _fill(rng, (
        "the door code is {s}",
        "gate code {s}#",
        "keypad code for the garage: {s}",
        "alarm code is {s}, you have 30 seconds to enter it",
        "the lockbox code is {s} — keys are inside",
        "Building entry code: *{s}",
    ), {"s": _pin(rng, rng.choice((4, 4, 5, 6)))})


@_form("passphrase_en", "en")
def _passphrase_en(rng: random.Random) -> _Out:
    spaced = rng.random() < 0.4
    s = _passphrase(rng, spaced=spaced)
    if spaced:
        templates: tuple[str, ...] = (
            "my passphrase is \"{s}\"",
            "the vault passphrase: {s}.",
            "I used '{s}' as the passphrase for the backup drive.",
            "1Password master password is \"{s}\" — please never forget it",
            "GPG passphrase = {s}.",
        )
    else:
        templates = (
            "my passphrase is {s}",
            "the vault passphrase: {s}",
            "I used {s} as the passphrase for the backup drive.",
            "Bitwarden master password: {s}",
            "GPG passphrase = {s}",
            "the ssh key passphrase is {s}, it asks every time I push",
        )
    return _fill(rng, templates, {"s": s})


@_form("seed_phrase_en", "en")
def _seed_phrase_en(rng: random.Random) -> _Out:
    return _fill(rng, (
        "my wallet seed phrase is {s}",
        "recovery phrase: {s}",
        "Here are the 12 words for the MetaMask wallet: {s}. Keep them safe.",
        "seed words — {s} — written on the card in the drawer",
        "Ledger backup: \"{s}\"",
        "secret recovery phrase for the old Trust Wallet is {s}, it still has some ETH on it",
    ), {"s": _seed_phrase(rng)})


@_form("recovery_codes_en", "en")
def _recovery_codes(rng: random.Random) -> _Out:
    style = rng.randrange(4)
    return _fill(rng, (
        "2FA backup code: {s}",
        "my {service} recovery codes are {s} and {s2}",
        "backup codes: {s}, {s2}",
        "recovery code for Authy {s}",
        "if I lose my phone, use backup code {s}",
        "Two-factor recovery codes (each works once): {s} {s2}",
    ), {"s": _recovery_code(rng, style), "s2": _recovery_code(rng, style)},
        service=rng.choice(("GitHub", "Google", "Dropbox", "Proton", "Discord", "AWS")))


@_form("otp_code_en", "en")
def _otp_en(rng: random.Random) -> _Out:
    return _fill(rng, (
        "your code is {s}",
        "The verification code is {s}",
        "Got the SMS: {s} is your {service} code",
        "OTP {s}",
        "Enter {s} to sign in — it expires in 10 minutes",
        "2FA code: {s}",
        "the authenticator says {s} right now, quick",
        "{service}: Your security code is {s}. Don't share it with anyone.",
    ), {"s": _pin(rng, rng.choice((6, 6, 6, 4, 8)))}, service=rng.choice(_SERVICES))


# =========================================================================================================
# English forms: identity numbers


@_form("us_ssn", "en")
def _us_ssn(rng: random.Random) -> _Out:
    return _fill(rng, (
        "my SSN is {s}",
        "Social Security number: {s}",
        "SSN {s} for the tax form",
        "her social is {s}",
        "for the W-4, my social security # is {s}.",
        "The accountant needs {name}'s SSN ({s}) by Friday",
    ), {"s": _ssn(rng)}, name=rng.choice(_EN_FIRST))


@_form("passport_en", "en")
def _passport_en(rng: random.Random) -> _Out:
    s = _digits(rng, 9) if rng.random() < 0.6 else rng.choice(_UPPER) + _digits(rng, 8)
    return _fill(rng, (
        "passport number {s}",
        "My passport no. is {s}, expires 2031",
        "Passport #: {s}",
        "for the visa form — passport {s}",
        "{name}'s passport number is {s} (UK)",
        "booking needs the passport: {s}, issued in 2022",
    ), {"s": s}, name=rng.choice(_EN_FIRST))


@_form("uk_nino", "en")
def _uk_nino_case(rng: random.Random) -> _Out:
    return _fill(rng, (
        "My National Insurance number is {s}",
        "NI number: {s}",
        "NINO {s}",
        "my NI no. is {s} for the payroll form",
        "HMRC asked for the national insurance number, it's {s}.",
    ), {"s": _uk_nino(rng)})


def _driving_licence(rng: random.Random) -> tuple[str, str]:
    region = rng.choice(("California", "New York", "Florida", "Illinois", "Texas", "UK"))
    if region == "California":
        return rng.choice(_UPPER) + _digits(rng, 7), region
    if region == "New York":
        d = _digits(rng, 9)
        return (f"{d[:3]} {d[3:6]} {d[6:]}" if rng.random() < 0.5 else d), region
    if region == "Florida":
        d = _digits(rng, 12)
        return f"{rng.choice(_UPPER)}{d[:3]}-{d[3:6]}-{d[6:8]}-{d[8:11]}-{d[11]}", region
    if region == "Illinois":
        d = _digits(rng, 11)
        return f"{rng.choice(_UPPER)}{d[:3]}-{d[3:7]}-{d[7:]}", region
    if region == "Texas":
        return _digits(rng, 8), region
    surname = rng.choice(("SMITH", "JONES", "MORGAN", "LEE", "TAYLOR", "BROWN", "PATEL", "KHAN", "WU")).ljust(5, "9")
    born = date.fromordinal(rng.randint(date(1955, 1, 1).toordinal(), date(2005, 12, 31).toordinal()))
    month = born.month + (50 if rng.random() < 0.5 else 0)
    initials = rng.choice(_UPPER) + rng.choice(_UPPER + "9")
    decade, year = born.year % 100 // 10, born.year % 10
    value = f"{surname[:5]}{decade}{month:02d}{born.day:02d}{year}{initials}9{_r(rng, _UPPER, 2)}"
    return value, region


@_form("drivers_license_en", "en")
def _drivers_license(rng: random.Random) -> _Out:
    value, region = _driving_licence(rng)
    if region == "UK":
        templates: tuple[str, ...] = (
            "driving licence number: {s}",
            "my UK driving licence no. is {s}",
            "The hire car firm wants my licence number — it's {s}.",
            "DVLA licence {s}, photocard expires 2029",
        )
    else:
        templates = (
            "my driver's license number is {s} ({region})",
            "{region} DL# {s}",
            "license no. {s}, expires 2028",
            "The rental place wants my driver license number — it's {s}.",
        )
    return _fill(rng, templates, {"s": value}, region=region)


# =========================================================================================================
# English forms: payment


_CARD_SENTENCES_EN = (
    "my card number is {s}",
    "{brand} {s} exp {exp}",
    "card: {s}",
    "charge it to {s}, expiry {exp}",
    "the company credit card is {s}",
    "can you save my card {s} for next time?",
    "CC# {s}",
    "Use my {brand} ending... actually here's the whole thing: {s}",
)


def _card_case(rng: random.Random, brand_key: str, brand: str) -> _Out:
    return _fill(rng, _CARD_SENTENCES_EN, {"s": _group_card(rng, _card_digits(rng, brand_key))}, brand=brand,
                 exp=_expiry(rng))


@_form("card_number_visa", "en")
def _card_visa(rng: random.Random) -> _Out:
    return _card_case(rng, "visa", "Visa")


@_form("card_number_mastercard", "en")
def _card_mc(rng: random.Random) -> _Out:
    return _card_case(rng, "mastercard", "Mastercard")


@_form("card_number_amex", "en")
def _card_amex(rng: random.Random) -> _Out:
    return _card_case(rng, "amex", "Amex")


@_form("card_number_unionpay", "en")
def _card_unionpay(rng: random.Random) -> _Out:
    return _card_case(rng, "unionpay", "UnionPay")


@_form("cvv_en", "en")
def _cvv_en(rng: random.Random) -> _Out:
    amex = rng.random() < 0.15
    s = _pin(rng, 4 if amex else 3)
    if amex:
        templates: tuple[str, ...] = ("the 4-digit code on the front of the Amex is {s}", "Amex CID {s}",
                                      "security code {s} (Amex)")
    else:
        templates = (
            "cvv {s}",
            "CVC: {s}",
            "security code is {s}",
            "the 3 digits on the back are {s}",
            "CVV2 {s}",
            "card security code {s}, expires {exp}",
        )
    return _fill(rng, templates, {"s": s}, exp=_expiry(rng))


@_form("card_with_cvv_en", "en")
def _card_with_cvv(rng: random.Random) -> _Out:
    brand_key = rng.choice(("visa", "mastercard", "visa"))
    return _fill(rng, (
        "card {s} exp {exp} cvv {s2}",
        "{brand} {s}, CVC {s2}, expiry {exp}",
        "{s} / {exp} / {s2}",
        "Here's the card for the booking: {s}, {exp}, security code {s2}. Name on card {name}.",
    ), {"s": _group_card(rng, _card_digits(rng, brand_key)), "s2": _pin(rng, 3)},
        brand=_cap(brand_key), exp=_expiry(rng), name=rng.choice(_EN_FIRST) + " " + rng.choice(("Smith", "Lee", "Ng")))


def _iban_case(rng: random.Random, country: str) -> _Out:
    iban, bic = _iban_for(rng, country)
    if rng.random() < 0.5:
        iban = _group4(iban)
    return _fill(rng, (
        "My IBAN is {s}",
        "IBAN: {s} (BIC {bic})",
        "please transfer the deposit to {s}",
        "send the rent to IBAN {s}, name {name}",
        "bank details: {s} / {bic}",
        "Could you pay me back? {s} is my account",
    ), {"s": iban}, bic=bic, name=rng.choice(_EN_FIRST))


@_form("iban_de", "en")
def _iban_de(rng: random.Random) -> _Out:
    return _iban_case(rng, "DE")


@_form("iban_gb", "en")
def _iban_gb(rng: random.Random) -> _Out:
    return _iban_case(rng, "GB")


@_form("iban_fr", "en")
def _iban_fr(rng: random.Random) -> _Out:
    return _iban_case(rng, "FR")


@_form("iban_nl", "en")
def _iban_nl(rng: random.Random) -> _Out:
    return _iban_case(rng, "NL")


@_form("bank_account_en", "en")
def _bank_account(rng: random.Random) -> _Out:
    """The account number is the secret; routing numbers and sort codes are public bank identifiers."""
    if rng.random() < 0.3:
        sort = f"{_digits(rng, 2)}-{_digits(rng, 2)}-{_digits(rng, 2)}"
        return _fill(rng, (
            "sort code {sort}, account number {s}",
            "my {bank} account is {s} (sort code {sort})",
            "pay into {sort} / {s} please",
        ), {"s": _digits(rng, 8)}, sort=sort, bank=rng.choice(("Barclays", "Monzo", "Lloyds", "HSBC")))
    return _fill(rng, (
        "routing {routing}, account {s}",
        "account number {s}, routing number {routing}",
        "ACH: RTN {routing} / acct {s}",
        "checking account {s} at {bank} (routing {routing})",
        "For direct deposit use routing # {routing} and account # {s}.",
    ), {"s": _digits(rng, rng.randint(8, 12))}, routing=_aba_routing(rng), bank=rng.choice(_BANKS_EN))


# =========================================================================================================
# English forms: private keys

_PEM_SENTENCES_EN = (
    "Here's the deploy key for the server:\n{pem}\nkeep it somewhere safe",
    "{pem}",
    "private key for {host}:\n\n{pem}\n",
    "can you store this for me?\n{pem}",
    "this is the key the CI uses\n{pem}\nthe public half is already on GitHub",
)


def _pem_case(rng: random.Random, kind: str) -> _Out:
    block, body = _pem(rng, kind)
    text = rng.choice(_PEM_SENTENCES_EN).format(pem=block, host=rng.choice(_DB_HOSTS))
    return text, (body,)


@_form("pem_rsa_private_key", "en")
def _pem_rsa(rng: random.Random) -> _Out:
    return _pem_case(rng, rng.choice(("rsa", "rsa", "pkcs8")))


@_form("pem_ec_private_key", "en")
def _pem_ec(rng: random.Random) -> _Out:
    return _pem_case(rng, "ec")


@_form("openssh_private_key", "en")
def _openssh(rng: random.Random) -> _Out:
    return _pem_case(rng, "openssh")


@_form("pgp_private_key", "en")
def _pgp(rng: random.Random) -> _Out:
    block, body = _pgp_block(rng)
    text = rng.choice((
        "my GPG secret key, exported:\n{pem}",
        "{pem}",
        "backup of the signing key\n{pem}\npassphrase is in the safe",
    )).format(pem=block)
    return text, (body,)


@_form("eth_private_key", "en")
def _eth(rng: random.Random) -> _Out:
    return _fill(rng, (
        "my wallet private key is 0x{s}",
        "private key: {s}",
        "import this key into MetaMask: 0x{s}",
        "ETH_PRIVATE_KEY=0x{s}",
        "the hot wallet key 0x{s} has about 2 ETH in it",
        "deployer PRIVATE_KEY={s} (hardhat config)",
    ), {"s": _r(rng, _HEX, 64)})


# =========================================================================================================
# English forms: cloud and SaaS tokens


@_form("aws_access_key_id", "en")
def _aws_id(rng: random.Random) -> _Out:
    return _token_en(rng, _aws_key_id(rng), "AWS access key id", "AWS_ACCESS_KEY_ID",
                     ("aws_access_key_id = {s}",))


@_form("aws_secret_access_key", "en")
def _aws_secret_case(rng: random.Random) -> _Out:
    return _token_en(rng, _aws_secret(rng), "AWS secret access key", "AWS_SECRET_ACCESS_KEY",
                     ("aws_secret_access_key = {s}", "the secret key for the backup IAM user is {s}"))


@_form("aws_key_pair", "en")
def _aws_pair(rng: random.Random) -> _Out:
    return _fill(rng, (
        "AWS keys: {s} / {s2}",
        "[default]\naws_access_key_id = {s}\naws_secret_access_key = {s2}",
        "access key {s}, secret {s2} — the IAM user is {name}-s3-sync",
        "use AWS_ACCESS_KEY_ID={s} AWS_SECRET_ACCESS_KEY={s2} aws s3 ls",
    ), {"s": _aws_key_id(rng), "s2": _aws_secret(rng)}, name=rng.choice(_EN_USERS))


@_form("github_pat_classic", "en")
def _ghp(rng: random.Random) -> _Out:
    return _token_en(rng, "ghp_" + _r(rng, _ALNUM, 36), "GitHub token", "GITHUB_TOKEN",
                     ("git clone https://{s}@github.com/acme/private-repo.git",))


@_form("github_pat_fine_grained", "en")
def _gh_fine(rng: random.Random) -> _Out:
    return _token_en(rng, "github_pat_11" + _r(rng, _UPPER_ALNUM, 20) + "_" + _r(rng, _ALNUM, 59),
                     "fine-grained GitHub token", "GH_TOKEN")


@_form("gitlab_pat", "en")
def _glpat(rng: random.Random) -> _Out:
    return _token_en(rng, "glpat-" + _r(rng, _B64URL, 20), "GitLab personal access token", "GITLAB_TOKEN",
                     ("curl --header \"PRIVATE-TOKEN: {s}\" https://gitlab.com/api/v4/projects",))


def _slack_num(rng: random.Random) -> str:
    return str(rng.randint(10**9, 10**13 - 1))


@_form("slack_bot_token", "en")
def _xoxb(rng: random.Random) -> _Out:
    value = f"xoxb-{_slack_num(rng)}-{_slack_num(rng)}-{_r(rng, _ALNUM, 24)}"
    return _token_en(rng, value, "Slack bot token", "SLACK_BOT_TOKEN")


@_form("slack_user_token", "en")
def _xoxp(rng: random.Random) -> _Out:
    value = f"xoxp-{_slack_num(rng)}-{_slack_num(rng)}-{_slack_num(rng)}-{_r(rng, _HEX, 32)}"
    return _token_en(rng, value, "Slack user token", "SLACK_USER_TOKEN")


@_form("slack_webhook_url", "en")
def _slack_hook(rng: random.Random) -> _Out:
    team, bot = "T" + _r(rng, _UPPER_ALNUM, rng.randint(8, 10)), "B" + _r(rng, _UPPER_ALNUM, rng.randint(8, 10))
    secret = _r(rng, _ALNUM, 24)
    return _fill(rng, (
        "the Slack webhook is https://hooks.slack.com/services/{team}/{bot}/{s}",
        "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/{team}/{bot}/{s}",
        "post alerts to https://hooks.slack.com/services/{team}/{bot}/{s} please",
        "curl -X POST -d '{{\"text\":\"deploy done\"}}' https://hooks.slack.com/services/{team}/{bot}/{s}",
    ), {"s": secret}, team=team, bot=bot)


@_form("stripe_secret_key", "en")
def _stripe_sk(rng: random.Random) -> _Out:
    body = _r(rng, _ALNUM, 24) if rng.random() < 0.4 else "51" + _r(rng, _ALNUM, 97)
    return _token_en(rng, "sk_live_" + body, "Stripe secret key", "STRIPE_SECRET_KEY",
                     ("stripe.api_key = \"{s}\"",))


@_form("stripe_restricted_key", "en")
def _stripe_rk(rng: random.Random) -> _Out:
    body = _r(rng, _ALNUM, 24) if rng.random() < 0.4 else "51" + _r(rng, _ALNUM, 97)
    return _token_en(rng, "rk_live_" + body, "Stripe restricted key", "STRIPE_RESTRICTED_KEY")


@_form("openai_api_key", "en")
def _openai(rng: random.Random) -> _Out:
    if rng.random() < 0.75:
        value = "sk-proj-" + _r(rng, _B64URL, 74) + "T3BlbkFJ" + _r(rng, _B64URL, 74)
    else:
        value = "sk-" + _r(rng, _ALNUM, 20) + "T3BlbkFJ" + _r(rng, _ALNUM, 20)
    return _token_en(rng, value, "OpenAI API key", "OPENAI_API_KEY", ("client = OpenAI(api_key=\"{s}\")",))


@_form("anthropic_api_key", "en")
def _anthropic(rng: random.Random) -> _Out:
    value = "sk-ant-api03-" + _r(rng, _B64URL, 93) + "AA"
    return _token_en(rng, value, "Anthropic API key", "ANTHROPIC_API_KEY",
                     ("curl https://api.anthropic.com/v1/messages -H \"x-api-key: {s}\"",))


@_form("google_api_key", "en")
def _google(rng: random.Random) -> _Out:
    return _token_en(rng, "AIza" + _r(rng, _B64URL, 35), "Google Maps API key", "GOOGLE_API_KEY",
                     ("<script src=\"https://maps.googleapis.com/maps/api/js?key={s}&callback=initMap\"></script>",))


@_form("twilio_api_key", "en")
def _twilio(rng: random.Random) -> _Out:
    return _token_en(rng, "SK" + _r(rng, _HEX, 32), "Twilio API key", "TWILIO_API_KEY")


@_form("sendgrid_api_key", "en")
def _sendgrid(rng: random.Random) -> _Out:
    return _token_en(rng, f"SG.{_r(rng, _B64URL, 22)}.{_r(rng, _B64URL, 43)}", "SendGrid API key",
                     "SENDGRID_API_KEY")


@_form("npm_token", "en")
def _npm(rng: random.Random) -> _Out:
    return _token_en(rng, "npm_" + _r(rng, _ALNUM, 36), "npm token", "NPM_TOKEN",
                     ("//registry.npmjs.org/:_authToken={s}",))


@_form("pypi_token", "en")
def _pypi(rng: random.Random) -> _Out:
    return _token_en(rng, "pypi-AgEIcHlwaS5vcmc" + _r(rng, _B64URL, rng.randint(140, 200)), "PyPI token",
                     "TWINE_PASSWORD", ("twine upload -u __token__ -p {s} dist/*",))


@_form("huggingface_token", "en")
def _hf(rng: random.Random) -> _Out:
    return _token_en(rng, "hf_" + _r(rng, _ALNUM, 34), "Hugging Face token", "HF_TOKEN",
                     ("huggingface-cli login --token {s}",))


@_form("discord_bot_token", "en")
def _discord(rng: random.Random) -> _Out:
    return _token_en(rng, _discord_token(rng), "Discord bot token", "DISCORD_TOKEN", ("client.run(\"{s}\")",))


@_form("telegram_bot_token", "en")
def _telegram(rng: random.Random) -> _Out:
    value = f"{rng.randint(10**8, 7 * 10**9)}:AA{_r(rng, _B64URL, 33)}"
    return _token_en(rng, value, "Telegram bot token", "TELEGRAM_BOT_TOKEN",
                     ("BotFather gave me {s} for the new bot", "curl https://api.telegram.org/bot{s}/getMe"))


@_form("azure_storage_connection_string", "en")
def _azure(rng: random.Random) -> _Out:
    account = rng.choice(("prodstorage", "mediafiles", "acmebackups", "logsarchive")) + _digits(rng, 2)
    conn = "DefaultEndpointsProtocol=https;AccountName={account};AccountKey={s};EndpointSuffix=core.windows.net"
    return _fill(rng, (
        "AZURE_STORAGE_CONNECTION_STRING=\"" + conn + "\"",
        "the storage connection string is " + conn,
        "Blob storage: " + conn + " (the prod one, careful)",
        "paste this into local.settings.json as AzureWebJobsStorage: " + conn,
    ), {"s": _b64(rng, 64)}, account=account)


@_form("jwt", "en")
def _jwt_case(rng: random.Random) -> _Out:
    return _fill(rng, (
        "here's my JWT: {s}",
        "Authorization: Bearer {s}",
        "the access token is {s}",
        "id_token={s}",
        "my session token from the browser is {s}, it expires in an hour",
        "curl -H \"Authorization: Bearer {s}\" https://api.example.com/v1/me",
    ), {"s": _jwt(rng)})


@_form("generic_api_key_en", "en")
def _generic_api_key(rng: random.Random) -> _Out:
    return _fill(rng, (
        "api key: {s}",
        "API_KEY={s}",
        "the API key for the weather service is {s}",
        "X-API-Key: {s}",
        "apikey {s}",
        "our Mailgun key is {s}, don't commit it",
        "curl \"https://api.example.com/v2/search?q=test&api_key={s}\"",
        "new key for the analytics API → {s}",
    ), {"s": _generic_secret(rng)})


@_form("generic_token_en", "en")
def _generic_token(rng: random.Random) -> _Out:
    return _fill(rng, (
        "token={s}",
        "access_token: {s}",
        "auth token is {s}",
        "download it from https://files.example.com/export?token={s}&format=csv",
        "refresh token {s}",
        "the webhook secret is {s}",
        "client_secret = \"{s}\"",
        "SECRET_KEY={s}",
    ), {"s": _generic_secret(rng)})


@_form("bearer_token_en", "en")
def _bearer(rng: random.Random) -> _Out:
    return _fill(rng, (
        "Authorization: Bearer {s}",
        "curl -H 'Authorization: Bearer {s}' https://api.example.com/me",
        "bearer {s}",
        "use bearer token {s} for the staging API",
        "headers = {{\"Authorization\": \"Bearer {s}\"}}",
    ), {"s": _generic_secret(rng)})


# =========================================================================================================
# English forms: cookies, headers, env lines, config


@_form("session_cookie", "en")
def _session_cookie(rng: random.Random) -> _Out:
    name, value = _session_value(rng)
    return _fill(rng, (
        "{name}={s}; Path=/; HttpOnly",
        "Set-Cookie: {name}={s}; Secure; SameSite=Lax",
        "copy this into the cookie: {name}={s}; ",
        "the request had {name}={s}; theme=dark in it",
    ), {"s": value}, name=name)


@_form("cookie_header", "en")
def _cookie_header(rng: random.Random) -> _Out:
    name, value = _session_value(rng)
    return _fill(rng, (
        "Cookie: {name}={s}",
        "Cookie: {name}={s}; theme=dark; lang=en",
        "Cookie: _ga=GA1.2.{n}.{m}; {name}={s}",
        "curl -b '{name}={s}' https://admin.example.com/export",
    ), {"s": value}, name=name, n=str(rng.randint(10**8, 10**9)), m=str(rng.randint(10**9, 2 * 10**9)))


@_form("sessionid_cookie_en", "en")
def _sessionid(rng: random.Random) -> _Out:
    return _fill(rng, (
        "my sessionid cookie is {s}",
        "sessionid={s}",
        "the session cookie value is {s}, paste it into the browser",
        "I grabbed the session id from devtools: {s}",
    ), {"s": _r(rng, _LOWER_ALNUM, 32)})


@_form("basic_auth_header", "en")
def _basic_auth(rng: random.Random) -> _Out:
    creds = base64.b64encode(f"{rng.choice(_EN_USERS)}:{_password(rng)}".encode()).decode()
    return _fill(rng, (
        "Authorization: Basic {s}",
        "curl -H \"Authorization: Basic {s}\" https://api.example.com/v1/reports",
        "the header is Basic {s}",
        "Jenkins needs 'Authorization: Basic {s}' on the webhook",
    ), {"s": creds})


@_form("env_db_password", "en")
def _env_db(rng: random.Random) -> _Out:
    return _fill(rng, (
        "DB_PASSWORD={s}",
        "POSTGRES_PASSWORD={s}",
        "MYSQL_ROOT_PASSWORD=\"{s}\"",
        "set DB_PASS={s} on the server",
        "in the compose file: POSTGRES_PASSWORD: {s}",
        "ssh in and run `export DB_PASSWORD='{s}'` before starting the app",
        "REDIS_PASSWORD={s} # prod",
    ), {"s": _password(rng)})


@_form("export_aws_secret", "en")
def _export_aws(rng: random.Random) -> _Out:
    return _fill(rng, (
        "export AWS_SECRET_ACCESS_KEY={s}",
        "export AWS_ACCESS_KEY_ID={s2}\nexport AWS_SECRET_ACCESS_KEY={s}",
        "run `export AWS_SECRET_ACCESS_KEY={s}` then terraform apply",
        "put export AWS_SECRET_ACCESS_KEY=\"{s}\" in ~/.zshrc",
    ), {"s": _aws_secret(rng), "s2": _aws_key_id(rng)})


@_form("dotenv_block", "en")
def _dotenv(rng: random.Random) -> _Out:
    return _fill(rng, (
        "here's my .env:\nDEBUG=false\nDB_HOST={host}\nDB_USER={user}\nDB_PASSWORD={s}\nSTRIPE_SECRET_KEY={s2}\n",
        "NODE_ENV=production\nPORT=8080\nDB_PASSWORD={s}\nLOG_LEVEL=info",
        "my .env file:\nAPP_NAME=shop\nSECRET_KEY={s2}\nDATABASE_PASSWORD={s}",
        ".env for the staging box\n\nREDIS_HOST={host}\nREDIS_PASSWORD={s}\n",
    ), {"s": _password(rng), "s2": rng.choice(("sk_live_" + _r(rng, _ALNUM, 24), _r(rng, _HEX, 50)))},
        host=rng.choice(_DB_HOSTS), user=rng.choice(_DB_USERS))


@_form("json_password", "en")
def _json_password(rng: random.Random) -> _Out:
    return _fill(rng, (
        "{{\"username\": \"{user}\", \"password\": \"{s}\"}}",
        "config.json has {{\"db\": {{\"user\": \"{user}\", \"password\": \"{s}\", \"port\": 5432}}}}",
        "the payload was {{\"email\":\"{user}@example.com\",\"password\":\"{s}\",\"remember\":true}}",
        "in settings.yaml:\n  database:\n    user: {user}\n    password: {s}\n",
        "{{'host': '{host}', 'passwd': '{s}'}}",
    ), {"s": _password(rng)}, user=rng.choice(_EN_USERS).replace(".", ""), host=rng.choice(_DB_HOSTS))


# =========================================================================================================
# English forms: keyword-less passwords (report separately)


@_form("password_en_implicit", "en")
def _implicit_en(rng: random.Random) -> _Out:
    s = _password(rng)
    while s.isdigit() or s.isalpha():
        s = _password(rng)
    return _fill(rng, (
        "I set it to {s} for the router",
        "went with {s} this time, hopefully I remember it",
        "the new one for the work laptop is {s}",
        "for the NAS I'm using {s} now",
        "just use {s} for the admin account on the camera, same as the doorbell",
        "changed it to {s} after the breach email",
        "{s} is what I typed for the kids' iPad, don't tell them",
    ), {"s": s})


@_form("account_en_implicit", "en")
def _account_implicit_en(rng: random.Random) -> _Out:
    return _fill(rng, (
        "for {service} it's {email} and {s}",
        "{service}: {email} + {s}",
        "the shared {service} account is {email}, {s}",
        "sign in to {service} as {email} with {s} if I'm not around",
    ), {"s": _password(rng)}, service=rng.choice(_SERVICES), email=_email(rng))


# =========================================================================================================
# Chinese forms


@_form("password_zh", "zh")
def _password_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "我的密码是{s}",
        "密码：{s}",
        "{service}的密码是 {s}",
        "{service}账号{acct}，密码{s}",
        "把密码改成了{s}，别忘了",
        "密码 {s} 别告诉别人",
        "记一下，{service}密码是{s}。",
        "我{service}的密码换成“{s}”了",
    ), {"s": _password(rng, zh=True)}, service=rng.choice(_ZH_SERVICES), acct=_cn_mobile(rng))


@_form("wifi_password_zh", "zh")
def _wifi_zh(rng: random.Random) -> _Out:
    s = _password(rng, zh=True) if rng.random() < 0.8 else _digits(rng, rng.choice((8, 10)))
    return _fill(rng, (
        "WiFi密码：{s}",
        "家里的wifi密码是{s}",
        "无线网名字{ssid}，密码{s}",
        "咖啡店的Wi-Fi密码 {s}",
        "wifi 密码 {s}，连不上就重启一下路由器",
        "客厅那个路由器（{ssid}）的WiFi密码是{s}。",
    ), {"s": s}, ssid=rng.choice(_SSIDS))


@_form("login_password_zh", "zh")
def _login_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "登录密码是{s}",
        "{service}登录密码：{s}",
        "后台登录账号 admin，登录密码 {s}",
        "公司邮箱的登录密码改成{s}了",
        "服务器 root 登录密码 {s}，别乱动",
        "{name}让我帮他登{service}，登录密码是{s}",
    ), {"s": _password(rng, zh=True)}, service=rng.choice(_ZH_SERVICES), name=rng.choice(_ZH_NAMES))


@_form("boot_password_zh", "zh")
def _boot_zh(rng: random.Random) -> _Out:
    s = _password(rng, zh=True) if rng.random() < 0.6 else _pin(rng, 6)
    return _fill(rng, (
        "开机密码{s}",
        "电脑开机密码是 {s}",
        "笔记本的开机密码：{s}",
        "锁屏密码是{s}",
        "手机锁屏密码 {s}，孩子老是偷玩",
        "办公室那台台式机开机密码是{s}，用完记得关机",
    ), {"s": s})


@_form("kouling_zh", "zh")
def _kouling(rng: random.Random) -> _Out:
    return _fill(rng, (
        "口令是{s}",
        "服务器口令：{s}",
        "数据库口令 {s}",
        "管理员口令改为{s}",
        "VPN口令{s}，每三个月要换一次",
        "进系统的口令是 {s} ，大小写要注意",
    ), {"s": _password(rng, zh=True)})


@_form("payment_password_zh", "zh")
def _pay_pw(rng: random.Random) -> _Out:
    return _fill(rng, (
        "支付密码是{s}",
        "支付宝支付密码：{s}",
        "微信支付密码{s}",
        "付款密码 {s}，别告诉别人",
        "我妈的支付密码是 {s}，帮她买东西用",
        "{service}的六位支付密码：{s}。",
    ), {"s": _pin(rng, 6)}, service=rng.choice(("支付宝", "微信", "京东", "美团", "云闪付")))


@_form("door_code_zh", "zh")
def _door_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "门禁密码是{s}",
        "小区门禁密码 {s}#",
        "单元门密码：{s}",
        "公司大门密码{s}，按完再按确认键",
        "家里密码锁的密码是{s}，快递放门口就行",
        "民宿的门锁密码：{s}。入住时间下午两点以后",
    ), {"s": _pin(rng, rng.choice((4, 6, 6)))})


@_form("bank_card_password_zh", "zh")
def _bank_card_pw(rng: random.Random) -> _Out:
    return _fill(rng, (
        "银行卡密码是{s}",
        "{bank}卡的密码{s}",
        "储蓄卡密码：{s}",
        "工资卡密码 {s}，别跟别人说",
        "我那张{bank}的卡，密码是{s}。",
    ), {"s": _pin(rng, 6)}, bank=rng.choice(_ZH_BANKS))


@_form("withdrawal_pin_zh", "zh")
def _withdraw(rng: random.Random) -> _Out:
    return _fill(rng, (
        "取款密码{s}",
        "取款密码是 {s}，别跟别人说",
        "ATM取款密码：{s}",
        "{name}的取款密码是{s}，帮忙取一下钱",
        "存折的取款密码 {s}。",
    ), {"s": _pin(rng, 6)}, name=rng.choice(_ZH_NAMES))


@_form("sim_pin_zh", "zh")
def _sim_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "SIM卡的PIN码是{s}",
        "手机卡PIN码 {s}，PUK码 {s2}",
        "新手机卡设了PIN码：{s}",
        "万一卡被锁了，PUK码是{s2}",
    ), {"s": _pin(rng), "s2": _pin(rng, 8)})


@_form("otp_code_zh", "zh")
def _otp_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "验证码是 {s}",
        "【{service}】您的验证码为{s}，5分钟内有效，请勿泄露给他人。",
        "短信验证码{s}，帮我填一下",
        "动态码：{s}",
        "校验码{s}，请勿泄露",
        "刚收到的验证码是{s}，你快输进去",
    ), {"s": _pin(rng, rng.choice((6, 6, 4)))}, service=rng.choice(_ZH_SERVICES))


@_form("recovery_code_zh", "zh")
def _recovery_zh(rng: random.Random) -> _Out:
    style = rng.randrange(4)
    return _fill(rng, (
        "两步验证的备用码：{s}",
        "恢复码是 {s} 和 {s2}",
        "备份验证码{s}，手机丢了就用这个",
        "{service}的二次验证恢复代码：{s}，{s2}",
    ), {"s": _recovery_code(rng, style), "s2": _recovery_code(rng, style)},
        service=rng.choice(("GitHub", "谷歌账号", "微软账号", "币安")))


@_form("passphrase_zh", "zh")
def _passphrase_zh(rng: random.Random) -> _Out:
    spaced = rng.random() < 0.35
    s = _passphrase(rng, spaced=spaced)
    return _fill(rng, (
        "主密码是“{s}”",
        "密码短语：{s}。",
        "备份硬盘的加密口令是「{s}」",
        "1Password 的主密码：{s}，千万别忘",
    ) if spaced else (
        "主密码是{s}",
        "密码短语：{s}",
        "备份硬盘的加密口令是 {s}",
        "1Password 的主密码：{s}，千万别忘",
        "SSH 私钥的 passphrase 是 {s}",
    ), {"s": s})


@_form("seed_phrase_zh", "zh")
def _seed_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "钱包助记词：{s}",
        "我的助记词是 {s}，千万别丢了",
        "imToken 的助记词 {s}。",
        "冷钱包的恢复短语是“{s}”",
        "助记词抄一下：{s}，放保险箱里",
    ), {"s": _seed_phrase(rng)})


@_form("cn_resident_id", "zh")
def _cn_id_case(rng: random.Random) -> _Out:
    return _fill(rng, (
        "我的身份证号是{s}",
        "身份证：{s}",
        "{name}的身份证号码 {s}，帮我填一下表",
        "证件号码{s}（身份证）",
        "订票用的身份证号{s}",
        "身份证号 {s} ，姓名张三",
    ), {"s": _cn_resident_id(rng)}, name=rng.choice(_ZH_NAMES))


@_form("cn_passport", "zh")
def _cn_passport(rng: random.Random) -> _Out:
    shape = rng.randrange(3)
    s = ("E" + _digits(rng, 8) if shape == 0 else "E" + rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") + _digits(rng, 7)
         if shape == 1 else "G" + _digits(rng, 8))
    return _fill(rng, (
        "我的护照号是{s}",
        "护照号码：{s}，有效期到2032年",
        "办签证要用护照号 {s}",
        "{name}的护照号{s}，帮忙订一下机票",
        "passport No. {s}（中国护照）",
    ), {"s": s}, name=rng.choice(_ZH_NAMES))


@_form("cn_bank_card", "zh")
def _cn_bank_card(rng: random.Random) -> _Out:
    s = _group_card(rng, _card_digits(rng, "unionpay"), contiguous=0.6)
    return _fill(rng, (
        "我的银行卡号是{s}",
        "{bank}卡号：{s}",
        "工资卡 {s}，开户行是{bank}{city}分行",
        "转账到这个卡号 {s}，户名{name}",
        "卡号{s}，麻烦帮我记一下",
    ), {"s": s}, bank=rng.choice(_ZH_BANKS), city=rng.choice(_ZH_CITIES), name=rng.choice(("张伟", "王芳", "李娜")))


@_form("cn_bank_card_with_pin_zh", "zh")
def _cn_card_pin(rng: random.Random) -> _Out:
    return _fill(rng, (
        "{bank}卡号{s}，密码{s2}",
        "银行卡：{s}，取款密码 {s2}",
        "卡号是 {s} ，密码是{s2}，帮我去ATM取两千",
    ), {"s": _group_card(rng, _card_digits(rng, "unionpay"), contiguous=0.6), "s2": _pin(rng, 6)},
        bank=rng.choice(_ZH_BANKS))


@_form("card_number_zh", "zh")
def _card_zh(rng: random.Random) -> _Out:
    brand = rng.choice(("visa", "mastercard", "amex"))
    return _fill(rng, (
        "信用卡号是 {s}，有效期 {exp}",
        "我的{brand}卡号 {s}",
        "用这张卡付：{s}",
        "信用卡：{s}，持卡人{name}",
    ), {"s": _group_card(rng, _card_digits(rng, brand))}, brand={"visa": "Visa", "mastercard": "万事达",
                                                                 "amex": "运通"}[brand],
        exp=_expiry(rng), name=rng.choice(("张伟", "王芳", "李娜")))


@_form("cvv_zh", "zh")
def _cvv_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "安全码 {s}",
        "卡背面的三位数是{s}",
        "CVV是{s}",
        "信用卡背后那三位：{s}",
        "CVN2码{s}，有效期{exp}",
        "卡片背面签名栏后面的安全码是 {s}。",
    ), {"s": _pin(rng, 3)}, exp=_expiry(rng))


@_form("private_key_zh", "zh")
def _private_key_zh(rng: random.Random) -> _Out:
    if rng.random() < 0.5:
        return _fill(rng, (
            "钱包私钥是 0x{s}",
            "私钥：{s}",
            "这个地址的私钥 0x{s}，里面还有点USDT",
            "导入私钥 {s} 就能恢复钱包",
        ), {"s": _r(rng, _HEX, 64)})
    block, body = _pem(rng, rng.choice(("rsa", "ec", "openssh")))
    templates = ("服务器私钥如下：\n{pem}", "帮我保存一下这个私钥\n{pem}\n别发到群里", "{pem}\n这是跳板机的登录私钥")
    text = rng.choice(templates).format(pem=block)
    return text, (body,)


@_form("aws_key_zh", "zh")
def _aws_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "AWS 的 Access Key 是 {s2}，Secret 是 {s}",
        "AWS密钥：{s}",
        "S3 上传用的 secret access key 是 {s}，access key id 是 {s2}",
        "把 AWS_SECRET_ACCESS_KEY={s} 加到 CI 里",
    ), {"s": _aws_secret(rng), "s2": _aws_key_id(rng)})


@_form("aliyun_access_key_zh", "zh")
def _aliyun(rng: random.Random) -> _Out:
    return _fill(rng, (
        "阿里云AccessKey ID：{s2}，AccessKey Secret：{s}",
        "OSS 的 AK 是 {s2}，SK 是 {s}",
        "阿里云的 AccessKeySecret 是{s}，别泄露",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET={s}",
    ), {"s": _r(rng, _ALNUM, 30), "s2": "LTAI" + _r(rng, _ALNUM, 20)})


@_form("wechat_appsecret_zh", "zh")
def _wechat(rng: random.Random) -> _Out:
    appid = "wx" + _r(rng, _HEX, 16)
    return _fill(rng, (
        "公众号的AppSecret是{s}",
        "小程序 AppID {appid}，AppSecret {s}",
        "微信开发者密钥（AppSecret）：{s}",
        "appsecret={s}，appid={appid}",
    ), {"s": _r(rng, _HEX, 32)}, appid=appid)


@_form("github_token_zh", "zh")
def _gh_zh(rng: random.Random) -> _Out:
    value = "ghp_" + _r(rng, _ALNUM, 36) if rng.random() < 0.6 else "glpat-" + _r(rng, _B64URL, 20)
    return _token_zh(rng, value, "个人访问令牌", "GITHUB_TOKEN", ("git 推送要用 token，我的是 {s}",))


@_form("secret_key_zh", "zh")
def _secret_key_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "API密钥是{s}",
        "秘钥：{s}",
        "接口的密钥 {s}，别提交到仓库里",
        "加密秘钥 {s}",
        "短信平台给的 key 是 {s}，密钥要保密",
        "这是第三方支付的商户密钥：{s}。",
        "{label}密钥：{s}，测试用的",
    ), {"s": _generic_secret(rng)}, label=rng.choice(("OpenAI", "地图", "短信", "翻译接口", "对象存储")))


@_form("token_zh", "zh")
def _token_zh_case(rng: random.Random) -> _Out:
    value = _jwt(rng) if rng.random() < 0.3 else _generic_secret(rng)
    return _fill(rng, (
        "访问令牌：{s}",
        "令牌是 {s}",
        "把这个token令牌 {s} 存一下",
        "刷新令牌 {s}，过期了就用它换新的",
        "接口调用要带 Authorization: Bearer {s}",
        "机器人的 token 是 {s}，别发群里",
    ), {"s": value})


_URL_SENTENCES_ZH = (
    "数据库连接串是 {url}",
    "测试库：{url}",
    "生产环境用的是 {url} ，别搞错了",
    "{env}={url}",
    "连不上 {url} ，帮我看看哪里有问题",
    "把 {url} 填到配置文件里就行",
)


@_form("url_password_zh", "zh")
def _url_zh(rng: random.Random) -> _Out:
    shape, env = rng.choice((("postgres://{user}:{s}@{host}:5432/{db}", "DATABASE_URL"),
                             ("mysql://root:{s}@{host}:3306/{db}", "DATABASE_URL"),
                             ("redis://:{s}@{host}:6379/0", "REDIS_URL"),
                             ("mongodb+srv://{user}:{s}@cluster0.{rid}.mongodb.net/{db}", "MONGO_URL"),
                             ("postgresql://{user}:{s}@{host}/{db}", "PG_DSN"),
                             ("amqp://{user}:{s}@{host}:5672/", "CELERY_BROKER_URL")))
    return _url_case(rng, (shape,), env, sentences=_URL_SENTENCES_ZH)


@_form("config_secret_zh", "zh")
def _config_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "配置文件里写的是 DB_PASSWORD={s}",
        "把 export MYSQL_PWD='{s}' 加到 .bashrc 里",
        "config.json 里是 {{\"password\": \"{s}\"}} ，记得改",
        "docker-compose 里 POSTGRES_PASSWORD: {s}，上线前换掉",
        ".env 文件：\nDB_USER=app\nDB_PASSWORD={s}\nDEBUG=false",
    ), {"s": _password(rng, zh=True)})


@_form("cookie_zh", "zh")
def _cookie_zh(rng: random.Random) -> _Out:
    name, value = rng.choice((("SESSDATA", f"{_r(rng, _HEX, 8)}%2C{rng.randint(1_700_000_000, 1_800_000_000)}"
                                           f"%2C{_r(rng, _HEX, 5)}%2A{_r(rng, _ALNUM, 2)}"),
                              ("sessionid", _r(rng, _LOWER_ALNUM, 32)),
                              ("JSESSIONID", _r(rng, _UPPER + _DIGITS, 32))))
    return _fill(rng, (
        "我的cookie是 {name}={s}",
        "Cookie: {name}={s}",
        "登录态的 {name} 是 {s}，爬虫要用",
        "把 {name}={s}; 填到请求头里",
    ), {"s": value}, name=name)


@_form("email_auth_code_zh", "zh")
def _email_auth(rng: random.Random) -> _Out:
    return _fill(rng, (
        "网易邮箱的授权码是{s}",
        "QQ邮箱SMTP授权码：{s}",
        "发邮件脚本用的授权码 {s}，不是登录密码",
        "邮箱客户端要填授权码，{s}。",
    ), {"s": _r(rng, _UPPER, 16) if rng.random() < 0.6 else _r(rng, _LOWER, 16)})


@_form("password_zh_implicit", "zh")
def _implicit_zh(rng: random.Random) -> _Out:
    s = _password(rng, zh=True)
    return _fill(rng, (
        "用的还是 {s} 那个",
        "路由器后台我改成 {s} 了",
        "电脑那个我设成了{s}，跟以前一样",
        "老样子，还是{s}",
        "新买的摄像头，我设的是 {s}",
        "我都用{s}，你试试",
    ), {"s": s})


@_form("account_zh_implicit", "zh")
def _account_implicit_zh(rng: random.Random) -> _Out:
    return _fill(rng, (
        "{service}账号 {acct}，{s}",
        "{service}：{acct} / {s}",
        "那个{service}号是{acct}，后面是{s}",
        "登{service}用 {acct} 加 {s}",
    ), {"s": _password(rng, zh=True)}, service=rng.choice(_ZH_SERVICES), acct=_cn_mobile(rng))


# =========================================================================================================
# chit-chat around the sentence

_PREFIX_EN = ("Hey, ", "Quick one: ", "Note to self: ", "ok so ", "Remember this for me: ", "Before I forget, ",
              "FYI ", "So anyway, ", "Random thing but ", "Ugh, long day. ", "Thanks for the help earlier! ",
              "Can you keep track of this? ", "lol ok ", "Also — ")
_SUFFIX_EN = ("Thanks!", "Don't lose it.", "lol", "Anyway, what's for dinner?", "I'll need it tomorrow.", "Cheers",
              "(just so you know)", "Remind me later.", "Also, did you see the game last night?", "ty")
# sentence starters that are ordinary words (safe to lower-case after a chatty prefix); names and brands are not
_COMMON_STARTERS = frozenset(("My", "The", "Here's", "Oh", "Password", "Switched", "Phone", "Remember", "Use", "When",
                              "Enter", "Got", "Social", "For", "Prod", "Save", "Please", "Could", "Can", "Building",
                              "Blob", "Backup", "Two-factor", "Key", "Card", "Passport", "Why", "Here"))
_PREFIX_ZH = ("帮我记一下，", "对了，", "顺便说一句，", "哎，今天好累。", "记住这个：", "备忘：", "跟你说一下，",
              "先记下来，", "刚才忘了说，", "嗯，")
_SUFFIX_ZH = ("别忘了", "谢谢！", "明天要用", "哈哈", "记住哦", "好了，我去吃饭了", "下次问你的时候告诉我")


def _chat(rng: random.Random, language: str, text: str) -> str:
    multi_line = "\n" in text
    if language == "en":
        sentence_case = text.split(" ", 1)[0] in _COMMON_STARTERS
        if rng.random() < 0.3:
            prefix = rng.choice(_PREFIX_EN)
            if sentence_case and prefix[-2] not in ".!?":
                text = text[0].lower() + text[1:]
            text = prefix + text
        elif sentence_case and rng.random() < 0.15:
            text = text[0].lower() + text[1:]
        if not multi_line and text.endswith(".") and rng.random() < 0.3:
            text = text[:-1]
        if not multi_line and rng.random() < 0.3:
            suffix = rng.choice(_SUFFIX_EN)
            if text[-1] in ".!?)":
                text = f"{text} {suffix}"
            else:
                joiner = rng.choice((". ", ", ", " — ", " "))
                if joiner in (", ", " — ") and not suffix.startswith("I"):
                    suffix = suffix[0].lower() + suffix[1:]
                text = text + joiner + suffix
    else:
        if rng.random() < 0.3:
            text = rng.choice(_PREFIX_ZH) + text
        if not multi_line and text.endswith("。") and rng.random() < 0.3:
            text = text[:-1]
        if not multi_line and rng.random() < 0.3:
            joiner = "" if text[-1] in "。！？，" else rng.choice(("，", "。", " "))
            text = text + joiner + rng.choice(_SUFFIX_ZH)
    return text


# =========================================================================================================
# public API

FORMS: tuple[str, ...] = tuple(_REGISTRY)


def form_language(form: str) -> str:
    return _REGISTRY[form][0]


def _usable(text: str, secrets: tuple[str, ...]) -> bool:
    """Each secret is non-empty and occurs exactly once (so removing it is checkable), none inside another."""
    if not secrets or len(set(secrets)) != len(secrets):
        return False
    if any(len(s) < 3 or text.count(s) != 1 for s in secrets):
        return False
    return not any(a != b and a in b for a in secrets for b in secrets)


def cases(seed: int = 0, per_form: int = 5) -> list[Case]:
    """``per_form`` cases for every form, deterministic for a given seed; forms are independent of each other."""
    out: list[Case] = []
    for form, (language, gen) in _REGISTRY.items():
        rng = random.Random(f"{seed}/{form}")
        seen: set[str] = set()
        attempts = 0
        while len(seen) < per_form:
            attempts += 1
            if attempts > 100 * per_form + 100:
                raise RuntimeError(f"form {form} cannot produce {per_form} distinct usable cases")
            text, secrets = gen(rng)
            text = _chat(rng, language, text)
            if text in seen or not _usable(text, secrets):
                continue
            seen.add(text)
            out.append(Case(form, language, text, secrets))
    return out


# =========================================================================================================
# near misses: related-looking sentences without any secret

NEAR_MISSES: tuple[tuple[str, str], ...] = (
    ("en", "I reset my password yesterday and now I can't remember what I picked."),
    ("en", "The PIN pad at the grocery store was broken again."),
    ("en", "Order number 4417 2020 1234 5678 still hasn't shipped."),
    ("en", "The request id in the logs was 3f2b8c1e-9d4a-4e6b-8f1a-2c7d5e9b0a13."),
    ("en", "Can you revert commit 9fceb02d0ae598e95dc970b74767f19372d61af8?"),
    ("en", "Call me at +1 415 555 0132 after six."),
    ("en", "My flight is UA 857 on 2024-03-15, leaving at 11:40."),
    ("en", "It cost $1,249.99 plus tax."),
    ("en", "We upgraded from Python 3.11.4 to 3.12.1 last week."),
    ("en", "My password manager is 1Password."),
    ("en", "postgres://localhost:5432/app is the default local database URL."),
    ("en", "Connect with postgresql://app@db.internal:5432/orders, it uses peer auth."),
    ("en", "mysql://root@127.0.0.1:3306/test works on my dev box without a password."),
    ("en", "redis://localhost:6379/0 is where the cache lives."),
    ("en", "Token ring networks were popular in the eighties."),
    ("en", "Session 3 of the course covers recursion."),
    ("en", "The UPS tracking number is 1Z999AA10123456784."),
    ("en", "ISBN 978-0-306-40615-7 is the edition you want."),
    ("en", "I'm in room 1204 on the 12th floor."),
    ("en", "Pin the tab so you don't lose it."),
    ("en", "Remember to pin the announcement in the channel."),
    ("en", "The password field should be at least 12 characters long."),
    ("en", "Use a passphrase instead of a password, it's easier to remember."),
    ("en", "Enable two-factor authentication on your account."),
    ("en", "The verification code never arrived, so I gave up."),
    ("en", "API key rotation is scheduled for Friday."),
    ("en", "The bearer of this letter is my cousin."),
    ("en", "Our Wi-Fi is down again."),
    ("en", "Never share your PIN with anyone, not even the bank."),
    ("en", "Forgot my password, clicked reset, still waiting for the email."),
    ("en", "The secret ingredient is cinnamon."),
    ("en", "My Social Security card is in the safe deposit box."),
    ("en", "The meeting is at 10:30 in conference room B."),
    ("en", "I ran 5 km in 24:13 this morning."),
    ("en", "Mix 250 g flour with 3 eggs and 200 ml milk."),
    ("en", "Send it to Flat 4B, 221 Baker Street, London NW1 6XE."),
    ("en", "The invoice total is €3,450.00, due 2024-05-31."),
    ("en", "ZIP code 94103 is in San Francisco."),
    ("en", "My phone number is (212) 555-0198."),
    ("en", "Version 2.14.0-rc.1 fixes the login bug."),
    ("en", "The image digest is sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855."),
    ("en", "The token economy in that game is completely broken."),
    ("en", "What time is the keynote session tomorrow?"),
    ("en", "The cookie jar is on the top shelf."),
    ("en", "Chocolate chip cookies are my favourite."),
    ("en", "The key to success is consistency."),
    ("en", "I lost the keys to my car again."),
    ("en", "Please export the report as CSV."),
    ("en", "Set DEBUG=true in the dev environment."),
    ("en", "Set LOG_LEVEL=info and PORT=8080 in your .env file."),
    ("en", "The config is {\"username\": \"alice\", \"theme\": \"dark\"}."),
    ("en", "Your card ending in 4242 was charged $12.99."),
    ("en", "The card number must be 16 digits long."),
    ("en", "The IBAN field is required for SEPA transfers."),
    ("en", "Routing numbers are printed on the bottom of a check."),
    ("en", "Basic authentication is deprecated in our API."),
    ("en", "Authorization header missing, got a 401."),
    ("en", "The JWT spec is RFC 7519."),
    ("en", "ssh-keygen -t ed25519 creates a new key pair."),
    ("en", "The public key is fine to share; the private one isn't."),
    ("en", "Our ticket number is JIRA-4821."),
    ("en", "USPS tracking: 9400 1000 0000 0000 0000 00."),
    ("en", "Flight BA 283 departs from gate B32 at 14:05."),
    ("en", "I'm reading chapter 12, page 381."),
    ("en", "The SIM card slot is on the left side of the phone."),
    ("en", "The door was open so I didn't need the code."),
    ("en", "Passport photos must be 2 by 2 inches."),
    ("en", "The seed catalog arrived; I'm planting tomatoes this year."),
    ("en", "The recovery phrase option is under Settings > Security."),
    ("en", "AKIA is the prefix AWS uses for access key IDs."),
    ("en", "Lottery numbers this week: 4, 17, 23, 31, 42, 45."),
    ("en", "The office is at 37.7749, -122.4194."),
    ("en", "The MAC address is 00:1A:2B:3C:4D:5E."),
    ("en", "Open 192.168.1.1 in the browser to reach the router page."),
    ("en", "My employee number is 20231587."),
    ("en", "Hunter2 is an old internet joke about passwords."),
    ("en", "The password is on a sticky note, I'll tell you in person."),
    ("en", "Set the password to expire every 90 days."),
    ("en", "My bank changed its routing number after the merger."),
    ("en", "The sk-learn version we use is 1.4.2."),
    ("zh", "我昨天把密码重置了。"),
    ("zh", "密码忘了，怎么办？"),
    ("zh", "验证码没收到，再发一次吧。"),
    ("zh", "密码输错了三次，账号被锁了。"),
    ("zh", "银行卡丢了，要去挂失。"),
    ("zh", "身份证快过期了，得去换。"),
    ("zh", "我的手机号是 138 0013 8000。"),
    ("zh", "订单号 202403151234567 已经发货了。"),
    ("zh", "顺丰快递单号 SF1234567890123。"),
    ("zh", "我住在 1203 房间。"),
    ("zh", "航班 CA1501 明天早上八点起飞。"),
    ("zh", "这件衣服 299 元，打完折 199。"),
    ("zh", "会议改到 2024年3月15日下午三点。"),
    ("zh", "版本号是 v3.2.1。"),
    ("zh", "把这个标签页固定一下。"),
    ("zh", "令牌环网络现在已经很少见了。"),
    ("zh", "这门课的第三节讲递归。"),
    ("zh", "密码学是一门很有意思的学科。"),
    ("zh", "我用的是 1Password 密码管理器。"),
    ("zh", "数据库地址是 postgres://localhost:5432/app，本地不用密码。"),
    ("zh", "门禁卡丢了，物业说要补办。"),
    ("zh", "支付密码要设置成六位数字。"),
    ("zh", "别把取款密码写在卡上。"),
    ("zh", "口令红包抢到了 8.8 元。"),
    ("zh", "这个 API 的密钥轮换周期是 90 天。"),
    ("zh", "秘钥管理用的是 KMS。"),
    ("zh", "游戏里的令牌可以换装备。"),
    ("zh", "浏览器的 cookie 清一下就好了。"),
    ("zh", "会话超时了，请重新登录。"),
    ("zh", "电话 010-6552 9988，工作日上午打。"),
    ("zh", "高铁 G1234 次，二号车厢 12F。"),
    ("zh", "身份证复印件需要正反面。"),
    ("zh", "护照办好了，下周去取。"),
    ("zh", "私钥千万不要发给别人。"),
    ("zh", "助记词要抄在纸上保管。"),
    ("zh", "两步验证已经开启了。"),
    ("zh", "WiFi 信号不太好。"),
    ("zh", "这个 WiFi 不需要密码。"),
    ("zh", "开机密码我已经关掉了。"),
    ("zh", "验证码过期了。"),
    ("zh", "安全码在卡背面。"),
    ("zh", "银行卡号一般是16到19位。"),
    ("zh", "登录密码和支付密码不能一样。"),
    ("zh", "请求 ID 是 550e8400-e29b-41d4-a716-446655440000。"),
    ("zh", "提交哈希是 a94a8fe5ccb19ba61c4c0873d391e987982fbbd3。"),
    ("zh", "价格从 ¥1,299 降到了 ¥999。"),
    ("zh", "身高 175 厘米，体重 68 公斤。"),
    ("zh", "邮编 100084。"),
    ("zh", "工号 20231587，明天去报到。"),
    ("zh", "学号 2021011234。"),
    ("zh", "第 3 期培训课程下周开始。"),
    ("zh", "请把 DEBUG=false 写到配置里。"),
    ("zh", "群号 738291045，欢迎加入。"),
    ("zh", "体检报告编号 TJ20240315008。"),
    ("zh", "发票号码 04403200611。"),
    ("zh", "明天早上 7:45 的闹钟。"),
    ("zh", "Python 3.11.7 装好了。"),
    ("zh", "服务器 IP 是 10.0.3.17，端口 8443。"),
    ("zh", "ISBN 978-7-111-54742-6 这本书不错。"),
    ("zh", "密码要包含大小写字母和数字。"),
    ("zh", "我妈总是记不住支付宝密码。"),
    ("zh", "门禁密码好像换了，我进不去。"),
    ("zh", "工资卡的卡号在App里能查到。"),
    ("zh", "我的微信号就是手机号。"),
    ("zh", "令狐冲是金庸小说里的人物。"),
)


def _near_miss_problems() -> list[str]:
    """Digit runs in NEAR_MISSES that would be real-looking secrets (Luhn-valid cards, valid resident ids)."""
    problems: list[str] = []
    for _, sentence in NEAR_MISSES:
        for run in re.findall(r"\d[\d -]{11,}\d", sentence):
            digits = re.sub(r"[ -]", "", run)
            if 13 <= len(digits) <= 19 and _luhn_ok(digits):
                problems.append(f"Luhn-valid number {run!r} in {sentence!r}")
            if len(digits) == 18 and _cn_id_valid(digits):
                problems.append(f"valid resident id {run!r} in {sentence!r}")
    return problems


def _self_check(corpus: list[Case]) -> list[str]:
    problems = _near_miss_problems()
    for case in corpus:
        if not _usable(case.text, case.secrets):
            problems.append(f"{case.form}: secrets not each exactly once in {case.text!r}")
        card_form = case.form.startswith("card_number") or case.form.startswith("cn_bank_card")
        if card_form and not _luhn_ok(re.sub(r"[ -]", "", case.secrets[0])):
            problems.append(f"{case.form}: not Luhn-valid {case.secrets[0]!r}")
        if case.form.startswith("iban_") and not _iban_valid(case.secrets[0]):
            problems.append(f"{case.form}: bad IBAN {case.secrets[0]!r}")
        if case.form == "bank_account_en":
            routing = [n for n in re.findall(r"\b\d{9}\b", case.text) if n not in case.secrets]
            if not all(_aba_ok(n) for n in routing):
                problems.append(f"{case.form}: bad routing number in {case.text!r}")
        if case.form == "cn_resident_id" and not _cn_id_valid(case.secrets[0]):
            problems.append(f"{case.form}: bad resident id {case.secrets[0]!r}")
    return problems


if __name__ == "__main__":
    corpus = cases()
    by_form = Counter(c.form for c in corpus)
    by_language = Counter(c.language for c in corpus)
    forms_by_language = Counter(form_language(f) for f in FORMS)
    print(f"{len(FORMS)} forms ({forms_by_language['en']} en, {forms_by_language['zh']} zh), "
          f"{len(corpus)} cases ({by_language['en']} en, {by_language['zh']} zh), "
          f"{sum(len(c.secrets) for c in corpus)} secrets")
    for form in FORMS:
        print(f"  {form:34} {form_language(form)}  {by_form[form]}")
    near = Counter(lang for lang, _ in NEAR_MISSES)
    print(f"near misses: {len(NEAR_MISSES)} ({near['en']} en, {near['zh']} zh)")
    sample_rng = random.Random(1)
    for case in sample_rng.sample(corpus, 12):
        print(f"\n[{case.form} / {case.language}]\n  text:    {case.text!r}\n  secrets: {case.secrets!r}")
    problems = _self_check(corpus) + _self_check(cases(seed=7, per_form=20))
    if cases() != corpus:
        problems.append("cases(seed=0) is not deterministic")
    print("\nself-check:", "ok" if not problems else "\n  ".join(["FAILED", *problems]))
    raise SystemExit(1 if problems else 0)
