"""The guard: secrets out of memory text (English and Chinese), filler flagged, values sealed with Fernet."""

from __future__ import annotations

import copy
import hashlib
import pickle
import re
import time

import pytest

from ebbing.errors import EbbingError, InvalidInput
from ebbing.ingest.guard import KINDS, Guarded, Secret, SecretBox, guard, placeholder

PLACEHOLDER = re.compile(r"\[secret:(?P<kind>[a-z_]+)#(?P<tag>[0-9a-f]{4})\]")

# Vendor prefixes are split from their bodies so secret scanners do not flag these fakes.
GITHUB = "ghp" + "_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_PAT = "github" + "_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv"
SLACK = "xoxb" + "-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
STRIPE = "sk" + "_live_4eC39HqLyjWDarjtT1zdp7dc"
OPENAI = "sk-proj-" + "AbC123dEf456GhI789jKl012MnO345"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5"
       "MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM = ("-----BEGIN RSA PRIVATE KEY-----\n"
       "MIIEowIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\n"
       "lWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE\n"
       "-----END RSA PRIVATE KEY-----")
OPENSSH = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
           "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
           "-----END OPENSSH PRIVATE KEY-----")


def tag(text: str) -> str:
    match = PLACEHOLDER.fullmatch(text)
    assert match is not None, text
    return match["tag"]


def luhn(digits: str) -> bool:
    total = sum(int(d) if i % 2 == 0 else sum(divmod(int(d) * 2, 10)) for i, d in enumerate(reversed(digits)))
    return total % 10 == 0


POSITIVES = [
    # password
    ("My database password is hunter2-XYZ", "password", "hunter2-XYZ"),
    ("数据库密码是 Abc#123，别告诉别人", "password", "Abc#123"),
    ("DB_PASSWORD=Tr0ub4dor&3", "password", "Tr0ub4dor&3"),
    ('{"user": "bob", "password": "s3cr3t!!"}', "password", "s3cr3t!!"),
    ("mysql -u root --password=Zx9!kLm2 mydb", "password", "Zx9!kLm2"),
    ("the wifi password for guests is Welcome2024!", "password", "Welcome2024!"),
    ("my old passwd was letmein99.", "password", "letmein99"),
    ("Bank PIN code: 4821", "password", "4821"),
    ("door passcode = 0000-9", "password", "0000-9"),
    ("my password is sunshine", "password", "sunshine"),  # a real word is still a password after "is"
    ("口令：Zx9!kLm2", "password", "Zx9!kLm2"),
    ("WiFi密码为abc12345。", "password", "abc12345"),
    ("邮箱密码: Mail@2024 记一下", "password", "Mail@2024"),
    ("服务器的密码是“P@ss w0rd”", "password", "P@ss w0rd"),  # quoted: up to the closing quote, spaces and all
    ("the router password is 'correct horse battery' now", "password", "correct horse battery"),
    ('password: "hunter2" ok', "password", "hunter2"),
    # api_key
    (f"use {OPENAI} for the bot", "api_key", OPENAI),
    ("the api key is sk-abcdefghijklmnopqrstuvwxyz0123", "api_key", "sk-abcdefghijklmnopqrstuvwxyz0123"),
    (f"我的 GitHub token 是 {GITHUB}，别外传", "api_key", GITHUB),
    (f"fine-grained: {GITHUB_PAT}", "api_key", GITHUB_PAT),
    (f"slack bot {SLACK} posts alerts", "api_key", SLACK),
    (f"maps key {GOOGLE}", "api_key", GOOGLE),
    (f"stripe {STRIPE} for prod", "api_key", STRIPE),
    ("api key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "api_key", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("OPENAI_API_KEY='aB3dE5gH7jK9mN1pQ3sT5vX7'", "api_key", "aB3dE5gH7jK9mN1pQ3sT5vX7"),
    ("Authorization: Bearer abcDEF1234567890ghiJKL", "api_key", "abcDEF1234567890ghiJKL"),
    ("API令牌为 9f8e7d6c5b4a39281706f5e4d3c2b1a0。", "api_key", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("密钥：aB3dE5gH7jK9mN1pQ3sT5vX7", "api_key", "aB3dE5gH7jK9mN1pQ3sT5vX7"),
    # aws_key
    (f"deploy user key {AWS_ID} in us-east-1", "aws_key", AWS_ID),
    ("temporary creds ASIAY34FZKBOKMUTVV7A expire at noon", "aws_key", "ASIAY34FZKBOKMUTVV7A"),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_key", AWS_SECRET),
    (f"the AWS secret access key is {AWS_SECRET}.", "aws_key", AWS_SECRET),
    (f"访问密钥 {AWS_ID} 已轮换", "aws_key", AWS_ID),
    # jwt
    (f"session token {JWT} expires tomorrow", "jwt", JWT),
    (f"登录令牌：{JWT}", "jwt", JWT),
    (f"Authorization: Bearer {JWT}", "jwt", JWT),
    # private_key
    (f"here is the deploy key:\n{PEM}\nkeep it safe", "private_key", PEM),
    (f"服务器私钥如下：\n{OPENSSH}\n用完删掉", "private_key", OPENSSH),
    # card
    ("Visa test card 4111 1111 1111 1111 exp 12/28", "card", "4111 1111 1111 1111"),
    ("Mastercard 5555-5555-5555-4444 on file", "card", "5555-5555-5555-4444"),
    ("Amex 378282246310005", "card", "378282246310005"),
    ("Amex 3782 822463 10005", "card", "3782 822463 10005"),
    ("我的信用卡号是4111111111111111，有效期12/28", "card", "4111111111111111"),
    ("卡号：5555 5555 5555 4444。", "card", "5555 5555 5555 4444"),
    # the forms added for every common credential (tests/test_secrets_corpus.py measures them at scale)
    ("prod is postgres://svc:Falcon65=@db.internal:5432/shop", "url_password", "Falcon65="),
    ("session=4f9KxQ2mZ8pL1vT7rW3yN6bC0dH5jS; Path=/", "secret_value", "4f9KxQ2mZ8pL1vT7rW3yN6bC0dH5jS"),
    ("刚收到的验证码是478262，你快输进去", "code", "478262"),
    ("身份证号 440301199003070350", "national_id", "440301199003070350"),  # Luhn passes too: not a card
    ("my social security # is 577-55-1340", "national_id", "577-55-1340"),
    ("IBAN: GB68 MIDL 9048 5447 7982 18", "bank_account", "GB68 MIDL 9048 5447 7982 18"),
    ("the vault passphrase: vortex-parsnip-blue-umbrella", "passphrase", "vortex-parsnip-blue-umbrella"),
    ("the hot wallet key 0x" + "5d1d3a69" * 8 + " holds 2 ETH", "hex_key", "5d1d3a69" * 8),
    ("it is q8Zr2Lm5Xw9Tb3Kv7Np1Jd4Hs6 in the vault", "token", "q8Zr2Lm5Xw9Tb3Kv7Np1Jd4Hs6"),
]


@pytest.mark.parametrize(("text", "kind", "value"), POSITIVES)
def test_a_secret_is_found_and_replaced(text: str, kind: str, value: str) -> None:
    g = guard(text)
    assert [(s.kind, s.value) for s in g.secrets] == [(kind, value)]
    secret = g.secrets[0]
    assert text[secret.start : secret.end] == value  # offsets index the original text
    assert secret.placeholder == placeholder(kind, value)
    assert PLACEHOLDER.fullmatch(secret.placeholder)
    assert g.text == text[: secret.start] + secret.placeholder + text[secret.end :]
    assert value not in g.text


def test_every_kind_is_covered() -> None:
    assert {kind for _, kind, _ in POSITIVES} == set(KINDS)


NEGATIVES = [
    "order 4111111111111112 shipped today",  # 16 digits, fails Luhn
    "订单号 4111 1111 1111 1112 已发货",
    "I forgot my password",
    "password reset link sent",
    "password reset link sent to your email",
    "密码忘了",
    "忘记密码了",
    "请重置密码",
    "密码是多少？",
    "use a password manager",
    "the password policy requires 12 characters",
    "the password was changed yesterday",
    "password is required",
    "passwords are stored hashed",
    "password-protected PDF",
    'the password "doesn\'t work" error again',
    "password: ********",
    "PASSWORD_HASH=abc123def",
    "cat /etc/passwd",
    "run pwd to see /home/me",
    "request id 550e8400-e29b-41d4-a716-446655440000",
    "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "We sold 1200 units in 2023 and 3400 in 2024, up 12.5%",
    "call me at 415-555-0132 or +86 138 0013 8000",
    "the build took 1736067600000 ms",  # a millisecond timestamp
    "pi is 3.14159265358979323846",
    "the token limit is 4096",
    "the secret is out",
    "token: aaaaaaaaaaaaaaaaaaaa",
    "sk-learn-compatible-estimators-are-great",
    "Install scikit-learn and set the random seed to 42",
    "会议在下午3点，房间号 1203，预算 50000 元",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_is_left_alone(text: str) -> None:
    g = guard(text)
    assert g.secrets == ()
    assert g.text == text


def test_the_negative_card_numbers_really_fail_luhn_and_the_positives_pass() -> None:
    assert not luhn("4111111111111112")
    assert luhn("440301199003070350")  # so only the resident-ID rule keeps it from being read as a card
    for number in ("4111111111111111", "5555555555554444", "378282246310005"):
        assert luhn(number)


def test_the_same_value_gets_the_same_tag_and_different_values_different_tags() -> None:
    a = guard("My database password is hunter2-XYZ").secrets[0].placeholder
    b = guard("数据库密码: hunter2-XYZ").secrets[0].placeholder
    c = guard("My database password is hunter3-XYZ").secrets[0].placeholder
    assert a == b == placeholder("password", "hunter2-XYZ")
    assert a != c
    tags = {tag(guard(f"password: value-{i}").secrets[0].placeholder) for i in range(20)}
    assert len(tags) == 20


def test_the_tag_is_not_a_plain_hash_of_the_value() -> None:
    value = "hunter2-XYZ"
    assert tag(placeholder("password", value)) != hashlib.sha256(value.encode()).hexdigest()[:4]  # domain first


def test_multiple_secrets_in_one_text() -> None:
    text = (f"prod: password is hunter2-XYZ, key {OPENAI}, aws {AWS_ID}, "
            f"card 4111 1111 1111 1111 and jwt {JWT}.")
    g = guard(text)
    assert [s.kind for s in g.secrets] == ["password", "api_key", "aws_key", "card", "jwt"]
    assert [s.start for s in g.secrets] == sorted(s.start for s in g.secrets)
    for s in g.secrets:
        assert s.value not in g.text and s.placeholder in g.text
    assert g.text.startswith("prod: password is [secret:password#") and g.text.endswith("].")


def test_a_repeated_value_is_replaced_everywhere() -> None:
    g = guard("my password is hunter2-XYZ, and I typed hunter2-XYZ wrong twice")
    assert "hunter2-XYZ" not in g.text
    assert [s.placeholder for s in g.secrets] == [placeholder("password", "hunter2-XYZ")] * 2


def test_text_that_is_only_a_secret_becomes_its_placeholder() -> None:
    for text, kind in ((OPENAI, "api_key"), (AWS_ID, "aws_key"), (JWT, "jwt"), (PEM, "private_key"),
                       ("4111111111111111", "card"), ("sk-abcdefghijklmnopqrstuvwxyz0123", "api_key")):
        g = guard(text)
        assert g.text == placeholder(kind, text)
        assert not g.low_information  # a secret is content


def test_overlaps_keep_the_longest_and_the_most_specific() -> None:
    g = guard(f"api key: {AWS_ID}")  # the generic and the AWS rule cover the same span
    assert [(s.kind, s.value) for s in g.secrets] == [("aws_key", AWS_ID)]
    g = guard(f"token: {JWT}")
    assert [(s.kind, s.value) for s in g.secrets] == [("jwt", JWT)]
    g = guard(f"password: {OPENAI}")
    assert [(s.kind, s.value) for s in g.secrets] == [("api_key", OPENAI)]


def test_mixed_scripts_and_emoji() -> None:
    text = f"🔑 我的 GitHub token 是 {GITHUB}，WiFi 密码: Pa55w0rd! 😅 卡号 4111 1111 1111 1111 🚀 thanks"
    g = guard(text)
    assert [(s.kind, s.value) for s in g.secrets] == [
        ("api_key", GITHUB), ("password", "Pa55w0rd!"), ("card", "4111 1111 1111 1111")]
    assert g.text == (f"🔑 我的 GitHub token 是 {placeholder('api_key', GITHUB)}，WiFi 密码: "
                      f"{placeholder('password', 'Pa55w0rd!')} 😅 卡号 "
                      f"{placeholder('card', '4111 1111 1111 1111')} 🚀 thanks")
    for s in g.secrets:
        assert text[s.start : s.end] == s.value


def test_guarding_twice_changes_nothing() -> None:
    once = guard(f"password: hunter2-XYZ and {OPENAI}")
    twice = guard(once.text)
    assert twice.text == once.text and twice.secrets == ()


def test_the_value_is_kept_out_of_reprs() -> None:
    g = guard("My database password is hunter2-XYZ")
    assert "hunter2" not in repr(g) and "hunter2" not in repr(g.secrets[0])
    assert isinstance(g, Guarded) and isinstance(g.secrets[0], Secret)


def test_a_30kb_line_is_fast() -> None:
    chunk = (f"Deploy notes 部署记录 🚀: 12 services, 3400 requests/s; password is hunter2-XYZ; key {OPENAI}; "
             "card 4111 1111 1111 1111; order 4111111111111112. ")
    text = (chunk * (30_000 // len(chunk) + 1))[:30_000]
    started = time.perf_counter()
    g = guard(text)
    assert time.perf_counter() - started < 1.0
    assert "hunter2-XYZ" not in g.text and OPENAI not in g.text and "4111 1111 1111 1111" not in g.text
    assert "4111111111111112" in g.text


@pytest.mark.parametrize("text", [
    "password:" * 3_400,  # every keyword sees the rest of the text as its value
    "token=" * 5_000,
    "secret_access_key=" * 1_700,
    "password for x: " * 1_900,
    "-----BEGIN PRIVATE KEY-----\n" * 1_100,  # headers with no footer
    "eyJaaaaaaaaaa." * 2_200,
    "password: a" + ")" * 30_000,
    "4111 " * 6_000,
    "1-" * 15_000,
    "password" + " " * 30_000 + "x",
    "aws secret access key" + " :" * 15_000,
])
def test_adversarial_30kb_lines_stay_fast(text: str) -> None:
    started = time.perf_counter()
    guard(text)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("text", [
    "ok", "okay", "OK!", "k", "kk", "thanks", "thanks!!", "thank you", "thx", "lol", "haha", "hahaha",
    "ok cool thanks", "got it, thanks", "哈哈", "哈哈哈", "好的", "好的，谢谢！", "嗯", "嗯嗯", "收到", "收到👌",
    "👍", "👍🏽", "❤️", "👨‍👩‍👧", "😂😂😂", "ok 👍", "...", "!!!", "？？", "", "   \n\t", "ＯＫ",
])
def test_low_information(text: str) -> None:
    assert guard(text).low_information


@pytest.mark.parametrize("text", [
    "ok, the deploy is at 5pm", "thanks, the fix worked on staging", "lol the server is down again",
    "好的，明天下午三点开会", "哈哈，这个bug终于修好了", "收到，预算改成 5 万", "5", "no", "nicety",
    "My database password is hunter2-XYZ", "👍 ship it",
])
def test_content_is_not_low_information(text: str) -> None:
    assert not guard(text).low_information


def test_guard_rejects_non_text() -> None:
    with pytest.raises(InvalidInput) as err:
        guard(42)  # type: ignore[arg-type]
    assert err.value.field == "text"


# ---- SecretBox ---------------------------------------------------------------------------------------


def test_secretbox_round_trip() -> None:
    box = SecretBox(SecretBox.generate_key())
    for value in ("hunter2-XYZ", "Abc#123", "密码 🔑 ünïcødé", "", "x" * 10_000):
        token = box.encrypt(value)
        assert isinstance(token, bytes)
        if value:
            assert value.encode() not in token
        assert box.decrypt(token) == value


def test_generated_keys_are_fresh_and_valid() -> None:
    keys = {SecretBox.generate_key() for _ in range(5)}
    assert len(keys) == 5
    for key in keys:
        SecretBox(key)


def test_a_wrong_key_is_a_clear_error_that_leaks_nothing() -> None:
    right, wrong = SecretBox.generate_key(), SecretBox.generate_key()
    token = SecretBox(right).encrypt("hunter2-XYZ")
    with pytest.raises(EbbingError) as err:
        SecretBox(wrong).decrypt(token)
    message = str(err.value)
    assert "EBBING_SECRET_KEY" in message and "decrypt" in message
    for leak in (token.decode(), "hunter2", right, wrong):
        assert leak not in message
    assert err.value.__cause__ is None and err.value.__suppress_context__


@pytest.mark.parametrize("token", [b"not a token", b"", b"gAAAAAB" + b"A" * 80])
def test_a_damaged_token_is_an_error(token: bytes) -> None:
    with pytest.raises(EbbingError, match="could not decrypt"):
        SecretBox(SecretBox.generate_key()).decrypt(token)


@pytest.mark.parametrize("key", ["not-a-key", "", "c2hvcnQ=", "A" * 44 + "!!", 12345])
def test_a_bad_key_is_invalid_input_naming_the_variable(key: object) -> None:
    with pytest.raises(InvalidInput) as err:
        SecretBox(key)  # type: ignore[arg-type]
    assert err.value.field == "EBBING_SECRET_KEY"
    assert "Fernet key" in err.value.rule
    assert err.value.__cause__ is None  # the cryptography error would carry the key's bytes
    assert err.value.__context__ is None or err.value.__suppress_context__
    if isinstance(key, str) and key:
        assert key not in str(err.value)


def test_the_key_is_never_shown() -> None:
    key = SecretBox.generate_key()
    box = SecretBox(key)
    assert key not in repr(box) and key not in str(box)
    with pytest.raises(TypeError):
        pickle.dumps(box)
    with pytest.raises(TypeError):
        copy.copy(box)


def test_from_env() -> None:
    key = SecretBox.generate_key()
    assert SecretBox.from_env({}) is None
    assert SecretBox.from_env({"EBBING_SECRET_KEY": ""}) is None
    assert SecretBox.from_env({"EBBING_SECRET_KEY": "  \n"}) is None
    box = SecretBox.from_env({"EBBING_SECRET_KEY": key + "\n", "OTHER": "x"})  # a trailing newline from a file
    assert box is not None
    assert SecretBox(key).decrypt(box.encrypt("v")) == "v"
    with pytest.raises(InvalidInput) as err:
        SecretBox.from_env({"EBBING_SECRET_KEY": "nope"})
    assert err.value.field == "EBBING_SECRET_KEY"


def test_a_value_is_never_cut_out_of_a_longer_word() -> None:
    # "code is zebracorn7731": the digits at the end are part of a word, not a PIN of their own.
    assert guard("My locker code is zebracorn7731 and the locker is 12B").secrets == ()
    assert [s.value for s in guard("My locker code is 7731 and the locker is 12B").secrets] == ["7731"]
