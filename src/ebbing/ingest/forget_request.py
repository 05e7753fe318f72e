"""Is a user's message a request to forget something, and what does it name?

`detect(text)` reads one message the user wrote and returns a `ForgetRequest` or None:

- `previous`: the message just before ("forget that", "scratch that, don't save it", "刚才那句别记");
- `this`: the message itself ("off the record, ...", "don't save this: ...", "这句别记：...");
- `field`, `topic`, `entity`: something stored earlier, named by `target` ("my phone number", "what I told you
  about my daughter's school", "everything about Mark", "关于老王的"), resolved later by relevance
  (`ebbing.lifecycle.forget_requests`);
- `everything`: the whole memory ("forget everything"), never acted on by itself: too much to take from one line.

Detection is the one place here that reads phrasing, so it leans to precision: a wrong request destroys
memories, a missed one leaves a record the user can still forget by hand (`Memory.forget_matching`). A cue
(forget, delete, don't keep, 忘掉, 删掉, 别记 ...) counts only when it is addressed to the assistant: not in
quoted or reported speech ("my boss told me to forget about the bonus"), not about the user's own lapse
("I forgot my keys", "忘了带伞"), not a reminder ("don't forget to call mom", "别忘了"), not a dismissal
("forget it, let's order pizza", "算了，忘了吧"), and, for verbs that also act on things (delete, remove,
删), not about a file, an email or a calendar entry. What the target then matches is decided by calibrated
relevance, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ebbing.judgement import align
from ebbing.text.lazy import lazy
from ebbing.text.terms import segment

KINDS = ("previous", "this", "field", "topic", "entity", "everything")


@dataclass(frozen=True)
class ForgetRequest:
    kind: str  # one of KINDS
    target: str  # the words naming what to forget; "" for previous, this and everything
    cue: str  # the words that made it a request (for explain and audit: no stored content)
    keep: tuple[str, ...] = ()  # what the user said to keep ("Mum's is fine to keep", "刘姐的留着")
    # An erase verb whose object need not be a memory ("wipe the japan trip planning", "那个预约取消了，你删掉吧"):
    # a request only when the user's records clearly hold what it names (`Requests.confirm`); otherwise the
    # message is an ordinary one ("delete the booking" may be an errand) and is stored as such.
    tentative: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, "cue": self.cue, "keep": list(self.keep),
                "tentative": self.tentative}


# -- shared ------------------------------------------------------------------------------------------------

# ASCII single quotes count only where no letter or digit touches them outside: "Mom's" and "kids'" are no quotes
_QUOTED = lazy(r"\"[^\"\n]{1,400}\"|“[^”\n]{1,400}”|「[^」\n]{1,400}」|『[^』\n]{1,400}』|‘[^’\n]{1,400}’"
               r"|(?<![A-Za-z0-9])'[^'\n]{2,400}?'(?![A-Za-z0-9])")
_SENTENCES = lazy(r"(?<=[.!?。！？；;\n])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bProf\.)"
                  r"(?<!\bJr\.)(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)\s*")
_CJK = lazy(r"[\u4e00-\u9fff]")
_EMOJI = lazy(r"[\U0001F300-\U0001FAFF\u2600-\u27BF]")


def _mask_quotes(text: str) -> str:
    """Quoted speech keeps its length (offsets stay valid) but loses its words; an emoji ends a sentence, as it
    does in chat ("Sold the Jeep 🎉 you can drop everything about it")."""
    return _EMOJI.sub(".", _QUOTED.sub(lambda m: "\u2591" * len(m.group(0)), text))


# Chat spelling of the words a request is read by: a slip of one key ("forgt", "evrything", "taht", "cna", "delte")
# or a shorthand ("ur memory", "abt"), so that a request is not missed for one typo. Only these words are
# respelled, and only by variants that are not themselves words ("forge", "bout" and "hat" stay as they are).
_REQUEST_WORDS = ("forget", "forgetting", "everything", "anything", "delete", "erase", "remove", "remember",
                  "memory", "information", "please", "about", "that", "this", "what", "can", "could", "you",
                  "your", "stuff", "told", "said", "mentioned", "stored", "saved", "record", "records")
_SHORTHAND = {"ur": "your", "u": "you", "abt": "about", "bout": "about", "evry": "every", "evrything": "everything",
              "everythin": "everything", "wat": "what", "wut": "what", "tht": "that", "ths": "this",
              "mem": "memory", "rn": "now"}
_REAL_WORDS = frozenset("""forge forged forgot forgets than then thus hat chat what whet thaw tis his thin abut bout
    bat cab cn con van cam cap yo you yon yu our sour tour four pour hour ease eras erased erases delete
    deleted removes removed remover mentions stores saves cord records reword moment store pleas""".split())


def _variants(word: str) -> set[str]:
    swaps = {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}
    drops = {word[:i] + word[i + 1:] for i in range(1, len(word))} if len(word) >= 6 else set()
    return (swaps | drops) - {word}


_RESPELL = {v: w for w in _REQUEST_WORDS for v in _variants(w) if v not in _REAL_WORDS and v not in _REQUEST_WORDS}
_RESPELL.update({k: v for k, v in _SHORTHAND.items() if k != v})
_WORD = lazy(r"[A-Za-z]+")


def _respell(text: str) -> str:
    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        right = _RESPELL.get(word.lower())
        if right is None:
            return word
        return right.capitalize() if word[0].isupper() else right

    return _WORD.sub(fix, text)


def detect(text: str) -> ForgetRequest | None:
    """The forget request this user message makes, if any. The caller skips assistant messages."""
    masked = _mask_quotes(_respell(text))
    sentences = [s for s in _SENTENCES.split(masked) if s.strip()]
    found = None
    for sentence in sentences:
        request = _chinese(sentence) if _CJK.search(sentence) else None
        request = request or _english(sentence)
        if request is None:
            continue
        if found is None or (request.tentative, _RANK[request.kind]) < (found.tentative, _RANK[found.kind]):
            found = request
    if found is None:
        return None
    if found.kind in ("topic", "entity") and _moves_on(masked, found):
        return None
    if found.target == _PRONOUN:  # "Derek's outta my life, forget him": the person the message names
        names = [n for n in re.findall(r"\b([A-Z][a-z]+)(?:'s)?\b", masked)
                 if n.lower() not in _NOT_NAME_WORDS | _INTERJECTIONS]
        if not names:
            return None
        found = replace(found, target=names[0])
    whatever = _WHATEVER_ON.fullmatch(found.target) if found.kind in ("topic", "field") else None
    if whatever:  # "anything you've got on Dr. Patel the dentist": Dr. Patel, as "everything about" would say
        again = _object_en(whatever.group("rest"), found.cue, memory=True)
        if again is not None and again.kind in ("topic", "field", "entity"):
            found = again
    keep = tuple(k for k in (m.group("keep").strip(" ,.") for p in _KEEP for m in p.finditer(masked))
                 if k and not _THE_REST.fullmatch(k))
    if keep:
        found = replace(found, keep=keep)
    deictic = _DEICTIC_NOUN.fullmatch(found.target) if found.kind == "topic" else None
    if deictic:  # "I left Initech, please clear everything about that company": the company the message named
        before = masked[:masked.find(found.cue)] if found.cue in masked else ""
        named = _antecedent(before)
        if named is not None and named.kind == "entity":
            found = replace(named, cue=found.cue, keep=found.keep)
    if _ANAPHOR.fullmatch(found.target) or (found.kind in ("previous", "everything") and not _BACK.search(masked)
                                            and not _points_here(found.cue)):
        # "my salary. Please remove it", "the Maple St deal is dead. wipe all of it", "Cabin's sold. Delete it
        # all": "it" is what the message named
        before = masked[:masked.find(found.cue)] if found.cue in masked else ""
        named = _antecedent(before)
        # "Ugh, my boss is awful. Forget that." means the remark, not everything about the boss: the earlier words
        # count only when they say what is kept, what ended, or the request takes in all of it
        after = masked[masked.find(found.cue) + len(found.cue):] if found.cue in masked else ""
        everything = r"\s*(?:everything|anything|all|any)\b"
        # ... "clear out everything about it", "pretend I never told you about it": a thing, not a remark
        said = re.match(everything, found.target or after, re.I) or re.match(everything, after, re.I) \
            or _KEPT_OR_ENDED.search(before) \
            or (re.search(r"\b(?:told|tell|telling) you\b", found.cue, re.I) and re.match(r"\s*about\b", after, re.I)) \
            or (named is not None and _set_apart(before, named.target))
        if named is not None and said:
            found = replace(named, cue=found.cue, keep=found.keep)
    if found.kind == "this" and _BACK.search(masked):
        return replace(found, kind="previous")  # "刚才那个不要保存", "这句话就不用记着了" after 刚才
    if found.kind == "previous" and _ZH_FIRST.match(masked) and not _BACK.search(masked) \
            and _content_words(masked[_ZH_FIRST.match(masked).end():]) >= 5:  # type: ignore[union-attr]
        return replace(found, kind="this")  # "别记录。今天在公司厕所哭了。": what follows is off the record
    if found.kind == "this" and _CJK.search(found.cue) and _ZH_THIS_ONE.search(masked) \
            and not _says_something(masked, found):
        return replace(found, kind="previous")  # "这个别存，太丢人了": 这 points at what was just said
    if found.kind == "previous" and _has_content(masked, found) and not _BACK.search(masked):
        # "don't save this" inside a message that says something else means that message
        return replace(found, kind="this") if _points_here(found.cue) else found
    return found


# A target that only points at something the message named before it ("everything about it", "all of that").
_ANAPHOR = lazy(r"(?:(?:everything|anything|all|any)(?: of)?(?: (?:you'?ve got|you have|you know|i told you))?"
                r"(?: (?:about|on|of))?\s+)?(?:it|that|them|this)", re.I)
_WHATEVER_ON = lazy(r"(?:anything|everything|whatever|all(?: the)? info(?:rmation)?|all)(?: (?:you'?ve got|you have|"
                    r"you know|you'?ve stored|i told you|i'?ve told you))? (?:on|about|regarding) (?P<rest>.+)", re.I)
# "that company", "this trip": a thing of a kind, which the message named before its request
_DEICTIC_NOUN = lazy(r"(?:that|this|the same)\s+(?:company|firm|employer|place|job|guy|girl|woman|man|person|"
                     r"client|project|app|business|shop|store|trip|team|school|show|band|game|restaurant|account)",
                     re.I)
# What a message names before its request: "my salary", "everything about Priscilla", "the Japan trip", "Tariq".
_NAMED = lazy(r"(?i:\b(?:about|regarding)\s+(?P<about>[^.,;!?—–]+)"
              r"|\b(?P<own>(?:my|our|the|that|this|those)\s+[^.,;!?—–]+))"
              r"|(?P<name>\b[A-Z][a-z]+(?:\s+[A-Z][\w-]*)*)")
_NP_END = lazy(r"\s+(?:is|was|are|were|isn'?t|wasn'?t|aren'?t|doesn'?t|don'?t|didn'?t|has|have|had|got|saved|stored|"
               r"on file|anymore|any more|so|because|since|now|finally|too|here|there|at some point|if|and i|but|been|"
               r"long gone|gone|over|'?s been|completed|ended|through|yesterday|today|tonight|recently|ago|"
               r"this (?:morning|week|weekend|month|year)|last (?:night|week|weekend|month|year)|"
               r"which|that i|i)\b.*$|'s (?:off|gone|over|dead|done|sold|cancell?ed|finished)\b.*$", re.I | re.S)
# ("you have my SSN", "the deal is dead"; not "my sister has twins", "my boss left early")
_KEPT_OR_ENDED = lazy(r"\b(?:stor(?:e|ed|ing)|keep(?:ing)?|kept|sav(?:e|ed|ing)|you(?:'ve)? (?:have|having|got)|"
                      r"memory|remember|on file|record|notes|about|regarding|dead|gone|sold|done|cancell?ed|"
                      r"finished|(?:is|'s|are|was|were) (?:over|off)|completed|ended|quit|retir(?:e|ed|ing)|"
                      r"not happening|isn'?t happening|fell through)\b", re.I)
_INTERJECTIONS = frozenset("""sorry ha haha hmm ugh wait nope yeah yes no ok okay hey hi oh ah um uh well actually
    honestly right so also anyway lol omg god gosh oops please thanks january february march april may june july
    august september october november december""".split())


def _set_apart(before: str, target: str) -> bool:
    """"ok that whole layoffs saga — wipe it": the thing alone, set before the request by a dash or a colon (not
    "my boss is awful — forget that", a remark)."""
    if not re.search(r"[—–:]\s*$", before):
        return False
    clause = re.split(r"[.!?;,]", before.rstrip(" —–:"))[-1].strip()
    clause = re.sub(r"^(?:ok(?:ay)?|so|and|right|well|also|anyway|oh|hey)\b\W*", "", clause, flags=re.I)
    return target.casefold() in clause.casefold() and len(clause.split()) <= len(target.split()) + 1


def _antecedent(before: str) -> ForgetRequest | None:
    """The request a message means when its request points back ("it", "all of that") at what it named first."""
    for match in _NAMED.finditer(before):
        phrase = match.group("about") or match.group("own") or match.group("name")
        if match.group("name") and phrase.split()[0].casefold() in _INTERJECTIONS | _NOT_NAME_WORDS:
            continue
        if match.group("name") and " " not in phrase and re.match(
                r"\s+(?:the|a|an|my|our|his|her|their|that|this|those|these|it|him|them|me|us)\b",
                before[match.end():], re.I):
            continue  # "Sold the Jeep", "Quit my job": a sentence's first word, a verb, not a name
        phrase = _NP_END.sub("", phrase).strip()
        if not re.search(r"[A-Za-z]{3,}", phrase) or _ANAPHOR.fullmatch(phrase):
            continue
        request = _object_en(phrase, "", memory=True)
        if request is not None and request.kind in ("topic", "field", "entity") and request.target != _PRONOUN:
            return request
    return None


# Words that point back at what was said before ("forget what I just said", "刚才那句", "当我没说").
_BACK = lazy(r"\b(?:just (?:said|told|wrote|mentioned|typed|sent)|last (?:message|thing|comment|one|bit)|"
             r"previous (?:message|one)|what i said (?:before|earlier)|pretend i never said|i never said "
             r"(?:it|that)|said that)\b|刚才|刚刚|刚那|方才|上一[句条个段]|上面那|前面那|之前那[句条]|"
             r"最后(?:那|这)?[句条]|"
             r"当我没(?:说|讲)|"
             r"就当没(?:说|讲)", re.I)


# "Keep my son's", "Mum's is fine to keep", "Vikram stays", "not Mike from work", "刘姐的留着", "公司地址别删".
_KEEP = (
    lazy(r"(?<!not )(?<!n't )(?<!never )(?<!stop )(?<!i )(?<!we )\b(?:keep|leave|don'?t (?:delete|forget|touch|"
         r"remove))"
         r"\s+(?!(?:any|anything|it|that|this|them|on|up|going|\w+ing)\b)(?![^.,;!?]*\b(?:out of|off) (?:your|"
         r"the)\b)"
         r"(?P<keep>[^.,;!?]{2,60})", re.I),
    lazy(r"(?:^|[.,;!?]\s*|\bbut\s+)(?P<keep>(?:(?!\b(?:I|we|We|you|You)\b)[^.,;!?]){2,60}?)\s+(?:stays|can stay|"
         r"should stay|is fine|are fine|"
         r"is ok(?:ay)?|is good|can be kept|you can keep|'s fine|'s ok(?:ay)?|'s good|can remain|"
         r"may stay)\b", re.I),
    lazy(r"(?:^|[.,;!?(]\s*)(?:[Bb]ut )?[Nn]ot (?P<keep>(?:the |my )?(?:[A-Z]|\w+'s\b)[^.,;!?)]{1,60})"),
    lazy(r"(?:^|[，,。！？!?；;]|但是?|不过)(?P<keep>[^，,。！？!?；;]{1,20}?)(?:的)?(?:就|都|还|可以|先)?(?:留着|保留|别删|"
         r"不用删|不要删|不删|可以留|没关系|不用动|别动|不用管|照旧|继续记)"),
)


# "别的不用动", "其他的留着", "the rest is fine": everything else stays, which names nothing to keep
_THE_REST = lazy(r"(?:别|其他|其它|其余|剩下|剩余|另外)(?:的)?(?:都|就)?|(?:the )?(?:rest|others?)|everything else|"
                 r"anything else", re.I)


def _moves_on(masked: str, request: ForgetRequest) -> bool:
    """"Forget the curry, we're both exhausted. Any good pizza places?": a plan dropped in conversation, not a
    request about a memory, when the message goes on to ask for something else and names no memory."""
    if not re.match(r"^(?:\w+\W+){0,4}forget\b", request.cue, re.I) and not re.search(r"忘", request.cue):
        return False
    if re.search(r"\b(?:what i|everything|all|anything|stuff|things|info|details|my|our|his|her|their|gossip|story|"
                 r"drama|saga|history)\b|关于|的事|我的|相关",
                 request.target + " " + masked[:masked.find(request.cue) + len(request.cue) + 40], re.I):
        return False
    after = masked[masked.find(request.cue) + len(request.cue):]
    end = re.search(r"[.!?。！？]", after)
    after = after[end.end():] if end and after[:end.start()].strip() else after
    return bool(re.search(r"\?|？|\b(?:just|now|instead)?\s*(?:give|help|find|suggest|tell|show|recommend|plan|book|"
                          r"make|write|draft)\s+me\b|\blet'?s\b|\bhow about\b|\bwhat about\b", after, re.I))


_PRONOUN = "\u2205"  # a target that is a pronoun until `detect` finds the name it stands for
_NOT_NAME_WORDS = frozenset("""i im i'm ive i've id i'd please thanks okay ok hey hi so and but the a an my our his
    her their it its that this he she they we you monday tuesday wednesday thursday friday saturday sunday
    forget delete erase remove wipe can could would will just actually also oh well yes no""".split())


# A message may hold two readings ("Off the record: ... so forget that"); the one naming more wins.
_NAMING = ("field", "topic", "entity")
_RANK = {"field": 0, "topic": 0, "entity": 0, "this": 1, "previous": 2, "everything": 3}


def _has_content(masked: str, request: ForgetRequest) -> bool:
    rest = masked.replace(request.cue, " ")
    rest = _FILLER_EN.sub(" ", rest)
    rest = _FILLER_ZH.sub("", re.sub(_ZH_DELETE + "|" + _ZH_UNSTORE, "", rest))
    latin = re.findall(r"[A-Za-z0-9']{2,}", rest)
    han = re.findall(r"[\u4e00-\u9fff]", rest)
    return len(latin) >= 4 or len(han) >= 6


_ZH_THIS_ONE = lazy(r"这(?:个|句|条|段|些)?(?:话)?[^，,。！？!?：:]{0,4}(?:别|不要|不用|千万|就|你)")


def _says_something(masked: str, request: ForgetRequest) -> bool:
    """Does a Chinese "这个别记" message carry something of its own to keep off the record ("这句别记：我在面试别的
    公司"), or only the request and a reason ("太丢人了", "被我老公看到就完了")? Read by the content words it holds
    (`judgement.align` tokens), not by a list of reasons: a confidence has five or more."""
    at = masked.find(request.cue)
    if at >= 0 and re.match(r"\s*[：:]", masked[at + len(request.cue):]):
        return True  # "这句别记：..." announces what follows
    return _content_words(masked.replace(request.cue, " ")) >= 5


def _points_here(cue: str) -> bool:
    return bool(re.search(r"\bthis\b|\bthe following\b|\bany of this\b|这|以下|下面|接下来|[:：]\s*$", cue, re.I))


# -- English ---------------------------------------------------------------------------------------------

_PREFIX = (r"(?:(?:please|pls|plz|kindly|just|also|and|so|ok(?:ay)?|hey|oh|ah|actually|honestly|yeah|yes|no|nah|"
           r"lol|lmao|haha|hah|heh|nvm|maybe|omg|oh god|oh no|god|nope|hm+|oof|yikes|jeez|gosh|welp|eh|dude|man|"
           r"guys|yo|"
           r"wait a sec(?:ond)?|hold on|on reflection|thinking about it|come to think of it|in fact|"
           r"it'?d be (?:good|great|nice|best|better) if you (?:could|would)|if you could|if you can|"
           r"i'?d appreciate (?:it )?if you (?:could|would)|would you be able to|are you able to|can you please|"
           r"i need you to|you need to|you have to|you must|i'?m asking you to|i ask you to|could you please|"
           r"would you please|please just|do me a favou?r and|"
           r"wait|hmm+|um+|uh+|sorry|ugh|look|listen|right|alright|fine|now|then|oops|whoops|"
           r"on second thought|second thought|scratch that|never ?mind|one more thing|btw|by the way|also,|"
           r"could you|can you|would you|will you|could u|can u|would u|will u|would you mind|do you mind|"
           r"you can|you should|you may|you could|you might as well|go ahead and|i need you to|i want you to|"
           r"i'?d like you to|i would like you to|i'?d like it if you|i'?d appreciate it if you|"
           r"i'?d prefer (?:it )?if you|i'?d rather you|i would rather you|make sure (?:to|you)|be sure to|"
           r"feel free to|is it possible to|any chance you could|mind|pretty please|i'?m asking you to|"
           r"i'?m going to ask you to|let'?s|time to|i think you should|you'?d better|better)[\s,]+)*")
_MEMORY_VERB = (r"(?:forget(?:ting)?|unlearn|(?:stop|quit) (?:remembering|storing|keeping|tracking|saving|holding)|"
                r"(?:don'?t|do not|dont|no need to|(?:you|we) (?:don'?t|do not|dont) (?:need|have) to|never|not) "
                r"(?:ever |even |bother to )?"
                r"(?:remember|store|save|keep|record|log|retain|hold on ?to|memori[sz]e|note(?: down)?|"
                r"write (?:that |this |it )?down|file|track|hang on ?to))")
# Verbs that mostly mean "take it out of the records" (an object like "the alarm code" is enough), and verbs
# that as often mean an errand ("drop the kids", "cut the onions"): those need the object to be a memory.
_ERASE_VERB = (r"(?:delete|deleting|erase|erasing|remove|removing|wipe(?: out| away)?|wiping(?: out)?|purge|purging|"
               r"scrub|scrubbing|expunge|unsave|unrecord|blank)")
_ERRAND_VERB = (r"(?:clear(?: out| away)?|clearing(?: out)?|drop|dropping|discard|get rid of|throw (?:away|out)|ditch|"
                r"toss|trash|nuke|dump|strike|scratch|scrap|cancel|cut|bin|nix|lose|take out|take off|deep-six|"
                r"let go of)")
_ACTION_VERB = rf"(?:{_ERASE_VERB}|{_ERRAND_VERB})"
# Matched at a clause start with `.match(text, pos)` (no "^": that would only match at the string's start).
_IMPERATIVE = lazy(rf"{_PREFIX}(?P<verb>{_MEMORY_VERB}|{_ACTION_VERB})\b(?P<object>.*)$", re.I | re.S)
_DESIRE = lazy(
    r"(?P<verb>\bi (?:don'?t|do not|dont) want you (?:to )?(?:remember|know|keep|store|save|have|hold on ?to|"
    r"remembering|keeping|storing|saving|having|holding on ?to|hanging on ?to|hang on ?to)"
    r"|\bi (?:don'?t|do not|dont) want (?=.{1,80}? (?:stored|saved|kept|remembered|on file|recorded|tracked|logged|"
    r"in your memory)\b)"
    r"|\b(?:can|could) we (?:just )?pretend (?:that )?i never (?:told you|said|mentioned)(?: anything)?"
    r"|\bpretend (?:that )?i never (?:told you|said|mentioned)(?: anything)?"
    r"|\bi'?d (?:rather|prefer) (?:it if )?you (?:didn'?t|did not|not|don'?t) (?:hold|hang) on ?to"
    r"|\bi'?d (?:rather|prefer) (?:it if )?you (?:didn'?t|did not|not|don'?t) (?:remember|keep|store|save|have|know)"
    r"|\bi would (?:rather|prefer) (?:it if )?you (?:didn'?t|did not|not) (?:remember|keep|store|save|have|know)"
    r"|\bi (?:want|need|would like|'?d like) you to (?:forget|delete|erase|remove|wipe|drop|clear|get rid of)"
    r"|\bi (?:don'?t|do not) want (?:you )?(?:to )?(?:have|keep) (?:it |that |this )?(?:on file|on record|stored|saved)"
    r"|\bcan you not (?:remember|keep|store|save)"
    r"|\bplease don'?t (?:hold|hang) on ?to"
    r"|\b(?:no|there'?s no) need (?:for you )?to (?:remember|keep|store|save|hold on ?to))\b(?P<object>.*)$",
    re.I | re.S)
_PASSIVE = lazy(
    r"^(?:please |pls |just |and |so )?(?:i want |i need |i'?d like |can you (?:get |have )?|could you (?:get |have )?"
    r"|please (?:get |have )?|make sure )(?P<object>.{2,120}?)\s+(?:is |are |gets |get )?"
    r"(?P<verb>(?:deleted|erased|removed|wiped|forgotten|gone|cleared|purged|scrubbed|off (?:the|your) records?|"
    r"out of (?:your|the) (?:memory|records|system|notes|files)))\b", re.I | re.S)
_PASSIVE_MODAL = lazy(
    r"^(?P<object>.{2,120}?)\s+(?:should|must|needs? to|has to|can) (?:be |get |go )?(?P<verb>deleted|erased|removed|"
    r"wiped|forgotten|gone|cleared|purged)\b", re.I | re.S)
# "Take the numbers out of your memory", "get him off your records": a thing moved out of the memory.
_TAKE_OUT = lazy(r"\b(?P<verb>take|get|keep|leave|cut)\s+(?P<object>[^.;!?]{1,60}?)\s+(?:out of|off|from)\s+"
                 r"(?:your|the|ur)\s+(?:memory|memories|records?|notes|files|system|head|brain|database|profile)\b",
                 re.I)
_RATHER_NOT = lazy(r"\bi(?:'?d| would) (?:rather|prefer)(?: it if)? (?P<object>.{1,80}?) (?:not be|wasn'?t|"
                   r"weren'?t|"
                   r"isn'?t|didn'?t get|not get|not stay) (?:remembered|saved|stored|kept|recorded|on file|"
                   r"in (?:your|the) memory)", re.I)
# "I can relax, forget my troubles, and get lost in another world": a list of what someone does, not an order.
_LIST_OF_DOINGS = lazy(r"\b(?:i|we|you|he|she|they|it|people)\s+(?:can|could|will|would|might|may|just|"
                       r"like to|love to|get to|used to|want to|tend to|try to|need to|have to|help me)\b"
                       r"(?![^.!?]*\b(?:please|can you|could you|would you)\b)[^.!?]*$", re.I)
# Where an imperative may start inside a sentence: its start, after a comma or dash, after and/but/so/then.
_CLAUSE_STARTS = lazy(r"[,;:—–]\s*(?:(?:and|but|so|then|or)\s+)?|\s-\s+|\b(?:but|so|then)\s+|\s(?=(?:could|can|"
                      r"would|will) (?:you|u)\b"
                      r"|please\b)|(?<!\bif)(?<!\bwhen)(?<!\bhow)(?<!\bthat)\s(?=you (?:can|could|may)\b)", re.I)
_REPORTED = lazy(r"\b(?:told|tells|telling|asked|asks|wants?|wanted|said|says|saying|keeps? saying|reminded|"
                 r"advised|suggested|warned|begged|urged|convinced|asking|want)\s+(?:me|us|him|her|them|"
                 r"everyone|people)\s+(?:to\s+)?$|\b(?:he|she|they|mom|mum|dad|my \w+|someone|everyone|"
                 r"people|the \w+)\s+(?:said|says|told|tells|asked|wrote|texted|yelled)\b[^.]*$|\b(?:to|how to|"
                 r"whether to|if i should|should i|shall i|did you|do you|can i|could i|will i|would i|"
                 r"you'll|you will|won't you|you never|you always|you didn't|did i|have you|i'll|i will|"
                 r"i'm going to|i am going to|i'd|i should|i could|i might|i can|trying to|try to|want to|"
                 r"need to|have to|going to|gonna|wanna|hard to|easy to)\s+$", re.I)
_QUESTION_CAPABILITY = lazy(r"^\s*(?:do|does|did|will|would|can|could|have|has|is|are)\s+(?:you|it|the "
                            r"assistant|ai)\s+(?:ever\s+|actually\s+|really\s+)?(?:forget|delete|erase|remove)"
                            r"\b(?:\s+(?:things|stuff|anything|everything|what|stuff like that|old stuff|"
                            r"memories|over time|eventually|automatically))?\s*[?.!]*\s*$", re.I)
# What a memory request points at when its verb also acts on things ("delete my phone number" but not
# "delete the draft email"): a reference to what was said or stored, or a piece of personal information.
_MEMORY_REFERENCE = lazy(
    r"\b(?:what i(?:'ve| have)? (?:just |already |once |ever |had )?(?:told|said|mentioned|shared|wrote|typed|sent|say|"
    r"tell)|"
    r"what(?:ever)? you (?:know|have|remember|stored|"
    r"saved|kept|noted|'ve got)|that i (?:told|said|mentioned|shared)|i (?:told|said|mentioned|shared|gave you)|"
    r"from (?:your|the) "
    r"(?:memory|memories|records?|notes|files|database|system|brain|history|profile|head)|(?:your|the) memory|"
    r"you(?:'ve| have)? (?:got|stored|saved|noted|on file|kept)|on file|on record|everything|anything|all (?:the )?"
    r"(?:info|information|details|data|stuff|things|notes|mentions|records)|any (?:mention|record|note|trace)|"
    r"(?:info|information|details|data|note|notes|record|records|memory|memories|mention|mentions|stuff)\b "
    r"(?:about|on|regarding|re|related|concerning)|the (?:bit|part|thing|things) (?:about|on|regarding|re|"
    r"concerning)|the last|my last|"
    r"the previous|from memory|out of memory|all of it|it all)\b", re.I)
_PERSONAL = lazy(
    r"^\s*(?:my|our|his|her|their|the|\w+'s)\s+(?:(?:old|new|previous|current|home|work|personal|private|cell|mobile|"
    r"office|real|full|other|second|first|last|backup|emergency|billing|shipping|mailing|email)\s+)*"
    r"(?:phone(?: number)?|number|cell|mobile|address|email(?: address)?|e-mail|birthday|birth ?date|date of birth|"
    r"dob|age|salary|income|pay|wage|ssn|social security(?: number)?|passport(?: number)?|id(?: number)?|"
    r"license(?: number| plate)?|licence(?: number| plate)?|plate|bank|account number|iban|routing number|"
    r"card(?: number)?|pin|password|passcode|login|username|zip(?: code)?|postcode|post code|location|"
    r"weight|height|diagnosis|medication|meds|prescription|health|medical|condition|therapist|therapy|"
    r"allergy|allergies|debt|debts|loan|mortgage|rent|credit score|net worth|savings|ex|ex-\w+|"
    r"(?:ex-)?(?:wife|husband|boyfriend|girlfriend|partner)|maiden name|middle name|name|nickname|schedule|"
    r"workplace|employer|job|company|boss|manager|landlord|doctor|dentist|school|kid'?s school|"
    r"kids'? names?|children'?s names?|religion|politics|political views|sexuality|orientation|"
    r"criminal record|record|history|finances|financial \w+|details|info|information|data|stuff)\b", re.I)
# Things a delete/remove acts on outside the memory: a file, a message, a calendar entry, code.
_ARTEFACT = lazy(
    r"\b(?:file|files|folder|directory|draft|drafts|email|emails|e-mail|inbox|message from|photo|photos|picture|"
    r"pictures|pic|pics|image|images|screenshot|video|videos|app|apps|application|"
    r"(?<!checking )(?<!savings )(?<!bank )accounts?(?!\s+(?:details|numbers?|info|information))|tab|tabs|"
    r"branch|commit|repo|column|row|rows|line|lines|paragraph|sentence|word|comma|slide|slides|page|pages|post|"
    r"posts|tweet|comment|comments|calendar|event|meeting|appointment from|reminder|alarm(?!\s+code)|cart|order|"
    r"subscription|"
    r"playlist|song|songs|contact from|cache|cookies|history from|browser|download|downloads|spreadsheet|sheet|"
    r"doc|docs|document|documents|table|database table|entry from|item from|list|from (?:the|my) list|"
    r"chart|graph|source code|function|variable|test|tests|container|server|key from|password manager|"
    r"from my (?:phone|laptop|computer|calendar|inbox|drive|desktop|cart)|garage|closet|fridge|room|"
    r"stain|weeds|trash|garbage|bins?|mail|the kids|the dog|the car|off at|by at|at the|to the|"
    r"reservation|booking|flight|ticket|tickets|recipe|ingredients?|onions?|garlic|salt|sugar|the oven|the pan)\b"
    r"(?!\s+(?:code|codes|number|numbers|password|passcode|pin|combo|combination|address)\b)",
    re.I)
# "the Daniel crush stuff", "the fence dispute thing": a bundle of what was said, named by its topic.
_STUFF_TAIL = lazy(r"\b(?:stuff|thing|things|saga|story|drama|business|situation|mess|details|info|"
                   r"information|data|history|episode|incident|topic|subject|issue|conversation|chat|convo|"
                   r"talk|dispute|fight|news|plan|plans|question|questions|problem|problems|worries)\s*$", re.I)
_DEICTIC = lazy(
    r"^\s*(?:(?:all (?:of )?)?(?:that|this|it)|the (?:thing|stuff|bit|part) i just (?:said|told you|wrote|typed|"
    r"mentioned|shared|sent)|(?:that )?i (?:just )?(?:told you|said|mentioned|wrote|typed)(?: (?:that|this|it))?|"
    r"that (?:last )?(?:one|bit|part|message|line|thing|comment|remark)|"
    r"(?:the|that) last (?:thing|one|message|bit|part|sentence|line|comment|note|remark|entry)|(?:my|the) (?:last|"
    r"previous|latest|most recent) (?:message|one|entry|note|comment|remark|thing(?: i said)?)|what i just "
    r"(?:said|told you|wrote|typed|mentioned|shared|sent)|everything i just (?:said|told you|wrote)|"
    r"the (?:previous|last) (?:message|one)|what i said (?:just now|a (?:second|minute|moment) ago)|"
    r"(?:that|this|it) (?:last )?(?:bit|part|one)?)"
    r"(?:\s+(?:i (?:just )?(?:said|told you|wrote|typed|mentioned|sent))?)?\s*$", re.I)
_EVERYTHING = lazy(r"^\s*(?:everything|all of it|all|it all|every ?thing (?:i'?ve|i have) (?:ever )?"
                   r"(?:told|said to) you|everything (?:i'?ve|i have|you have|you'?ve|you know)"
                   r"(?: ever)?(?: (?:told|said|heard|stored|saved|learned|got|"
                   r"remembered))?(?: you)?(?: about me)?|"
                   r"all (?:my|your) (?:data|memories|info|information)|(?:your|all your) memory|me|"
                   r"anything about me|everything about me)\s*$", re.I)
_ABOUT = lazy(
    r"^\s*(?:about\s+|of\s+)?(?:(?:everything|anything|all(?: of it)?|all (?:the |your |my )?(?:stuff|info|"
    r"information|details|things|notes|memories|mentions|records|data)|"
    r"whatever)\s+(?:(?:that\s+)?(?:i(?:'ve| have)? (?:ever )?(?:told|said|mentioned|shared)(?: to)?(?: you)?|you "
    r"(?:know|have|remember|heard|learned|stored)|related)\s+)?(?:about|on|regarding|re|concerning|to do with|"
    r"related to|with|involving|around)\s+)(?P<rest>.+)$", re.I | re.S)
_TOPIC_LEAD = lazy(
    r"^\s*(?:about\s+)?(?:(?:what|everything|anything|all|whatever|the (?:stuff|things?|bits?|part|info|"
    r"information|details|story|note|notes|mention|memory|memories|record))\s+(?:that\s+)?)?(?:i(?:'ve| have| had)? "
    r"(?:ever |just |once |already |earlier )?(?:told|said|mentioned|shared|wrote|typed|tell|say|said to|"
    r"talked about|discussed|brought up|went on about|let slip)(?: to| with)?(?: you)?(?: (?:earlier|before|"
    r"last (?:week|month|time)|the other day|yesterday|ago))?\s*|you (?:know|have|remember|heard|learned|"
    r"stored|saved|noted|wrote down|kept)\s*)(?:about|on|regarding|re|concerning|of|with|involving|around|that)?"
    r"\s*(?P<rest>.*)$", re.I | re.S)
_STUFF_LEAD = lazy(r"^\s*(?:about\s+)?(?:the (?:stuff|things?|bits?|part|info|information|details|story|note|"
                   r"notes|mention|mentions|memory|memories|record|records|fact|facts|conversation)|any "
                   r"(?:mention|record|note|trace)s?(?: of)?|all mentions?(?: of)?|mentions? of)\s+"
                   r"(?:about|on|regarding|re|concerning|of|with|involving|around)?\s*(?P<rest>.+)$",
                   re.I | re.S)
_TRAIL = lazy(
    r"\s*(?:,|;|—|–|\s-\s|\(|\.\.\.)\s*(?:i|we|he|she|they|it|that|this|there|you|because|since|as|so|but|and|not|"
    r"no|please|pls|thanks|thank|thx|ok|okay|cause|cuz|just|if|when|now|anyway|actually|honestly|seriously|lol|haha|"
    r"let'?s|never ?mind|whatever|though|really|obviously|long story|why|what|how|ugh|oops|lol|god|omg|all of it|"
    r"wasn'?t|isn'?t|was|is|sorry|my bad|"
    r"any of it|all|everything|every bit|remove|delete|erase|wipe|forget|drop|clear)\b.*$"
    r"|\s+(?:(?:stored|saved|kept|remembered|recorded|tracked|logged|on file|on record)|"
    r"from (?:(?:your|the|my) )?(?:memory|memories|records?|"
    r"notes|"
    r"files|database|system|brain|history|profile|"
    r"head|list)|(?:out of|off) (?:your|the) (?:memory|records?|notes|files|system|head)|for me|for good|"
    r"completely|entirely|permanently|forever|totally|right now|now|asap|please|pls|thanks|thank you|too|lol|lmao|"
    r"haha+|tbh|"
    r"as well|altogether|at all|anymore|any more|from now on|going forward|okay|ok|again|immediately|right away|"
    r"asap|now please|for now|quickly|already|"
    r"(?:because|since|as|cause|cuz|i (?:don'?t|do not) want|it'?s|it is|that'?s|that is|we|they|he|she|"
    r"if you|so that|so) .*)\s*$", re.I | re.S)
_FILLER_EN = lazy(r"\b(?:please|pls|thanks|thank you|ok|okay|actually|just|hey|oh|so|also|and|the|a|an|"
                  r"that|this|it|i|you|me|my|to|of|on|off|record|don'?t|do|not|save|remember|store|keep)\b",
                  re.I)
_DISMISSAL_OBJECT = lazy(r"^\s*(?:(?:about )?it|about that|that (?:idea|plan|thought)|the whole (?:thing|"
                         r"idea)|i asked|i said anything|i (?:even )?(?:asked|mentioned) it|"
                         r"what i (?:just )?asked)\s*[.!]*\s*$", re.I)


def _english(sentence: str) -> ForgetRequest | None:
    """The request a sentence makes; of several readings ("I don't want anything kept about Coach Dave, remove it
    all"), the one that names the most (`_RANK`)."""
    if _QUESTION_CAPABILITY.search(sentence) or re.search(r"\b(?:if i (?:ask|tell|want|say)|later on|later if|in the "
                                                         r"future|someday|some day|how does (?:that|it|this) work|"
                                                         r"would you ever|hypothetically|if i asked|if i were to|"
                                                         r"suppose i|what if i|would you actually|"
                                                         r"in theory)\b", sentence, re.I):
        return None  # a question about forgetting, not a request
    named = _OFF_RECORD_THING.search(sentence)
    if named and not _REPORTED.search(sentence[:named.start()]):  # "take my bank details off the record"
        request = _object_en(named.group("obj"), sentence[named.start():named.end("verb")], memory=True)
        if request is not None and request.kind in ("topic", "field", "entity"):
            return request
    request = _off_record_en(sentence)
    if request:
        return request
    found: list[ForgetRequest] = []
    for start in [0, *(m.end() for m in _CLAUSE_STARTS.finditer(sentence))]:
        if start and (_REPORTED.search(sentence[:start]) or _LIST_OF_DOINGS.search(sentence[:start])):
            continue
        match = _IMPERATIVE.match(sentence, start)
        if match is None:
            continue
        request = _imperative_en(match.group("verb"), match.group("object"), sentence[start:match.end("verb")],
                                 opening=start == 0)
        if request:
            found.append(request)
            break
    match = _DESIRE.search(sentence)
    if match and not _REPORTED.search(sentence[:match.start()]):
        request = _object_en(match.group("object"), match.group(0)[:match.end("verb") - match.start()], memory=True)
        if request:
            found.append(request)
    match = _TAKE_OUT.search(sentence)
    if match and not _REPORTED.search(sentence[:match.start()]) and not _LIST_OF_DOINGS.search(
            sentence[:match.start()]):
        request = _object_en(match.group("object"), match.group("verb"), memory=True)
        if request:
            found.append(request)
    match = _RATHER_NOT.search(sentence)
    if match and not _REPORTED.search(sentence[:match.start()]):
        request = _object_en(match.group("object"), match.group(0), memory=True)
        if request:
            found.append(request)
    for passive in (_PASSIVE_MODAL, _PASSIVE):
        match = passive.match(sentence.strip())
        if match:
            obj = match.group("object")
            verb = match.group("verb").lower()
            memory = verb.startswith(("forgotten", "off", "out of")) or bool(_MEMORY_REFERENCE.search(obj))
            if not _ARTEFACT.search(obj) and (memory or _PERSONAL.match(obj)) and not re.match(
                    r"^\s*(?:i|we|he|she|they|it|you|there)\b(?! want| need|'d like| would like)", obj, re.I):
                obj = re.sub(r"^\s*(?:i want|i need|i'?d like|can you (?:get|have)?|could you (?:get|have)?|"
                             r"please (?:get|have)?|make sure)\s+", "", obj, flags=re.I)
                obj = re.sub(r"^\s*(?:keep|get|take)\s+", "", obj, flags=re.I)  # "keep my address out of your memory"
                request = _object_en(obj, match.group("verb"), memory=True)
                if request:
                    found.append(request)
                    break
    return min(found, key=lambda r: (r.tentative, _RANK[r.kind])) if found else None


_OFF_RECORD_EN = lazy(
    r"\boff[- ]the[- ]record\b|\bnot for (?:the record|your memory|memory)\b"
    r"|\b(?:please )?(?:don'?t|do not|dont|no need to|never) (?:ever )?(?:remember|save|store|keep|record|log|note|"
    r"write down|memori[sz]e|file) (?:this|the following|what i'?m (?:about to say|going to say|saying)|any of this|"
    r"this one|this bit|this part)\b"
    r"|\b(?:this|the following|what i'?m about to say) (?:is|stays|should stay) off the record\b"
    r"|\b(?:this|the following|what i'?m about to say) (?:shouldn'?t|should not|isn'?t|is not|doesn'?t|does not) "
    r"(?:need to )?(?:be )?(?:remembered|saved|stored|recorded|written down|kept|go in(?:to)? (?:your|the) "
    r"(?:memory|records|notes))\b"
    r"|\bkeep (?:this|it)(?: one| bit| part)? (?:out of|off) (?:your|the) (?:memory|notes|records|files|head|system)"
    r"|\bnot to be (?:saved|remembered|stored|kept|recorded|logged|written down)\b"
    r"|\bnot (?:something|anything|one) (?:to|you should|you need to|for you to) (?:remember|save|store|keep|record|"
    r"log|write down)\b"
    r"|\b(?:no need to|you don'?t need to|don'?t have to) (?:remember|save|store|keep|record|log) (?:this|it)\b"
    r"(?! later)"
    r"|\bfor (?:your|the) ears only\b|\bdon'?t (?:make a note of|take note of|file) (?:this|it)\b"
    r"|\b(?:strictly )?between (?:you and me|us),? (?:and )?(?:don'?t|do not|not) (?:remember|save|store|keep|record)"
    r"|\bjust venting,? (?:don'?t|no need to) (?:remember|save|store|keep)"
    r"|\b(?:don'?t|do not|never) (?:log|save|store|keep|record|remember|write down|note) (?:it|this)(?: anywhere|"
    r" at all|"
    r" down)?\s*[:—–]", re.I)


# A thing stored before, taken off the record: a request about it, not about the message it is in.
_OFF_RECORD_THING = lazy(r"\b(?P<verb>take|get|keep|put)\s+(?P<obj>(?!(?:this|it|that|these|those|the following|"
                         r"what)\b)[^.!?]{2,80}?)\s+off\s+(?:the|your)\s+records?\b", re.I)


def _off_record_en(sentence: str) -> ForgetRequest | None:
    match = _OFF_RECORD_EN.search(sentence)
    if match is None or _REPORTED.search(sentence[:match.start()]):
        return None
    cue = match.group(0)
    return ForgetRequest("this" if re.search(r"off|this|following|about to|going to|saying|not to be|not "
                                             r"(?:something|anything|one)|ears|between|venting", cue, re.I)
                         else "previous", "", cue)


def _imperative_en(verb: str, obj: str, cue: str, *, opening: bool = True) -> ForgetRequest | None:
    request = _imperative(verb, obj, cue, lenient=False)
    # only an order that opens its sentence ("wipe the japan trip planning"), not a step in a list of doings ("I'll
    # tokenize the reviews, remove stopwords")
    if request is None and opening and re.fullmatch(_ERASE_VERB, verb.strip(), re.I):
        request = _imperative(verb, obj, cue, lenient=True)
        return replace(request, tentative=True) if request is not None and request.kind in _NAMING else None
    return request


# What one has and also tells an assistant about: a booking, a flight, an appointment (not a file or a photo)
_LIFE_ITEM_EN = lazy(r"\b(?:appointments?|reservations?|bookings?|flights?|tickets?|meetings?|events?)\b", re.I)
_LIFE_ITEM_ZH = lazy(r"行程|预约|航班|机票|门票|会议|周会|例会|课")


def _imperative(verb: str, obj: str, cue: str, *, lenient: bool) -> ForgetRequest | None:
    if re.match(r"\s*(?:and|or|but|as|than|so|too|enough|very|to|up|out|down|away|off|in|into|with|by)\b", obj, re.I) \
            and not re.match(r"\s*(?:about|out of (?:your|the) (?:memory|head))\b", obj, re.I):
        return None  # "the sky was so clear and ...": not a verb with an object
    memory_verb = re.match(_MEMORY_VERB, verb, re.I) is not None and not re.match(r"^forget", verb, re.I)
    if re.match(r"^forget", verb, re.I):
        # "forget to", "forget about it", "forget it, ..." are a reminder or a dismissal, not a request
        if re.match(r"^\s*(?:to|how|why|when|where|whether|if|what time|who|is|was|are|were|has|had|means|meant|"
                    r"sounds|seems|'s|can|could|would|will|might|must|should|does|did|me not|-me-not)\b", obj, re.I):
            return None
        if re.search(r"[,;.—–-]\s*(?:let'?s|instead|how about|what about|we (?:should|can|could)|i'?ll|"
                     r"never ?mind|doesn'?t matter|not important|whatever)\b", obj, re.I):
            return None  # "forget about the budget, let's talk about the trip": a change of subject
        if _DISMISSAL_OBJECT.match(obj) or re.match(r"^\s*(?:about\s+)?it\b\s*(?:[,;.!—–-]|$)", obj, re.I):
            return None
        if re.match(r"^\s*(?:i|we|you|he|she|they)\b(?! (?:told|said|mentioned|shared|ever|just|once))", obj, re.I):
            return None  # "forget I asked", "forget we talked": a dismissal
        return _object_en(obj, cue, memory=True)
    if memory_verb:
        return _object_en(obj, cue, memory=True)
    # delete, remove, erase ...: only when what follows is a memory, not a file, an email or an errand
    target = _trim(obj)
    # "delete my work email" is the address; "delete the email from Sam" is a message
    address = re.fullmatch(r"\s*(?:my|our|his|her|their|\w+'s)\s+(?:\w+\s+)?(?:email|e-mail)(?: address)?\s*", target,
                           re.I)
    life_item = lenient and not _ARTEFACT.search(_LIFE_ITEM_EN.sub(" ", target))
    if _ARTEFACT.search(target) and not address and not life_item and not re.search(
            r"\bwhat (?:i|you (?:know|have|remember|stored|saved))\b|\bfrom (?:your|the) (?:memory|records)\b|"
            r"\byour memory\b|\bthat i (?:told|said)\b|\b(?:everything|anything|stuff|all) (?:about|on|regarding)\b",
            obj, re.I):
        return None
    erase = re.fullmatch(_ERASE_VERB, verb.strip(), re.I) is not None
    # "delete my student id", "erase Kevin's number": a possessed thing is the user's information; "delete the
    # staging database" is a task, unless what follows the article is a bundle of talk ("the fence dispute")
    possessed = re.match(r"^\s*(?:all (?:of )?)?(?:my|our|his|her|their|[A-Z][a-z]+'s)\s+\w", target) is not None
    talk = re.search(r"\b(?:stuff|saga|story|drama|dispute|fight|gossip|situation|business|mess|news|details|info|"
                     r"(?:alarm|door|gate|garage|safe|lock|wifi|wi-fi) (?:code|password))\b", target, re.I)
    if not (lenient or _MEMORY_REFERENCE.search(obj) or _PERSONAL.match(target) or _STUFF_TAIL.search(target)
            or ((erase or re.match(r"scratch|strike", verb, re.I)) and (possessed or talk or _DEICTIC.match(target)))
            or re.fullmatch(r"all (?:of )?(?:that|this|it)|it all", target, re.I)  # "can you get rid of all that?"
            or (erase and re.fullmatch(r"(?:him|her)(?: (?:out|completely|entirely|too))?", target, re.I))):
        return None
    # "clear that" is a request about the last message only with a verb or words of memory
    if re.match(r"^\s*(?:it|that|this)\s*$", target, re.I) and not re.search(
            r"\b(?:from (?:your|the) memory|don'?t (?:save|keep|store))", obj, re.I) and not re.search(
            r"\b(?:scratch|strike|delete|erase|remove|wipe|drop)\b", verb, re.I):
        return None
    return _object_en(obj, cue, memory=False)


def _trim(text: str) -> str:
    """Cut reasons, politeness and "from your memory" off the end of a target, one after another."""
    for _ in range(6):
        cut = _TRAIL.sub("", text).strip(" .!?,:;\"'")
        if cut == text:
            break
        text = cut
    return text


def _object_en(obj: str, cue: str, *, memory: bool) -> ForgetRequest | None:
    obj = re.sub(r"^(\s*(?:anything|everything))\s+(?:kept|stored|saved|remembered|on file)\b", r"\1", obj, flags=re.I)
    if re.match(r"^\s*(?:that|this|it)\s*(?:[,;.!—–-]|$)", obj, re.I):
        kind = "this" if re.match(r"^\s*this\b", obj, re.I) else "previous"
        return ForgetRequest(kind, "", cue.strip())
    target = _trim(obj)
    target = re.sub(r"^\s*(?:about|of|on|regarding)\s+(?=(?:my|our|his|her|the|that|this|what|everything|all)\b)",
                    "", target, flags=re.I)
    if not target or _DEICTIC.match(target):
        if re.search(r"\b(?:this|the following|what i'?m about to|any of this)\b", target or cue, re.I):
            return ForgetRequest("this", "", cue.strip())
        return ForgetRequest("previous", "", cue.strip())
    if _EVERYTHING.match(target):
        return ForgetRequest("everything", "", cue.strip())
    about = _ABOUT.match(target)
    if about:
        rest = _clean_en(about.group("rest"))
        if not rest:
            return None
        if re.match(r"(?:him|her|them)\b", rest, re.I):  # "anything about him, the twins, the crypto"
            return ForgetRequest("entity", _PRONOUN, cue.strip())
        return ForgetRequest("entity" if _names_only(rest) else "topic", rest, cue.strip())
    lead = _TOPIC_LEAD.match(target)
    if lead and lead.group("rest").strip() and lead.group(0).strip() != lead.group("rest").strip():
        rest = _clean_en(lead.group("rest"))
        if not rest or _DEICTIC.match(rest):
            return ForgetRequest("previous", "", cue.strip())
        return ForgetRequest("topic", rest, cue.strip())
    stuff = _STUFF_LEAD.match(target)
    if stuff:
        rest = _clean_en(stuff.group("rest"))
        return ForgetRequest("topic", rest, cue.strip()) if rest else None
    rest = _clean_en(target)
    if re.fullmatch(r"(?:him|her|them)(?: (?:completely|entirely|totally|too))?", rest, re.I):
        return ForgetRequest("entity", _PRONOUN, cue.strip())  # resolved to a name of the message in `detect`
    if not rest or re.fullmatch(r"(?:things|stuff|anything|something|nothing|whatever|everyone)", rest, re.I):
        return None
    demonstrative = re.fullmatch(r"(?:that|those)\s+(?:\w+\s+)?\w+", rest, re.I)
    if demonstrative and not re.search(r"\b(?:i|you|we|he|she|they|it|is|was|are|were)\b", rest, re.I):
        return ForgetRequest("topic", re.sub(r"^(?:that|those)\s+", "", rest, flags=re.I), cue.strip())
    if re.match(r"^(?:that|how|when|where|why|if|whether)\b", rest, re.I) and not memory:
        return None
    if re.match(r"^that\s+", rest, re.I):  # "forget that I mentioned my salary"
        return ForgetRequest("topic", _clean_en(re.sub(r"^that\s+", "", rest, flags=re.I)), cue.strip())
    if _PERSONAL.match(rest):
        return ForgetRequest("field", rest, cue.strip())
    if _names_only(rest) and re.search(r"[A-Z]", rest):  # "Forget Derek", "forget about Dr. Feldman"
        return ForgetRequest("entity", rest, cue.strip())
    return ForgetRequest("topic", rest, cue.strip())


_RELATION = lazy(r"\b(?:my|our|his|her|their|the|a|an|old|former|ex|ex-|late|dear|cousin|aunt|auntie|uncle|"
                 r"brother|sister|friend|buddy|boss|coworker|co-worker|colleague|neighbou?r|roommate|landlord|"
                 r"doctor|dr|mr|mrs|ms|miss|prof|coach|grandma|grandpa|grandmother|grandfather|mom|mum|dad|"
                 r"son|daughter|wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|nephew|niece|kid|"
                 r"stepdad|stepmom|in-law|and|or|him|her|them|guy|girl|man|woman|person|ex-\w+)\b\.?", re.I)


def _names_only(text: str) -> bool:
    """"Mark", "my cousin Mike", "Aunt Carol", "him": a person or thing named, nothing said about it."""
    rest = _RELATION.sub(" ", text).replace("'s", " ").strip(" ,.")
    words = re.findall(r"[\w'-]+", rest)
    return all(w[0].isupper() for w in words) if words else bool(re.search(r"[a-z]", text))


def _clean_en(text: str) -> str:
    text = _trim(text)
    text = re.sub(r"^(?:about|regarding|on|re)\s+", "", text, flags=re.I)
    return text.strip()


# -- Chinese ---------------------------------------------------------------------------------------------

_ZH_FORGET = r"(?:忘掉|忘记掉|忘记|忘了|忘却)"
_ZH_UNSTORE = (r"(?:别|不要|不用|无需|不需要|甭|千万别|可别|请勿|勿|不必|用不着|没必要|不许|不准|可以不|能不能不|"
               r"能不|就不)(?:再|继续|帮我|给我|替我)?"
               r"(?:记录|记下|记住|记着|保存|保留|存档|备注|留着|存着|留存|写进|写下|收录|记|存|留)(?:下来|下|着|住|进去|起来)?")
_ZH_DELETE = (r"(?:删掉|删了|删除|删去|删|"
              r"(?<![两还结付算缴理说分查弄搞看认讲问摸])(?:清除|清掉|清空|清理掉|清理|清了|清一下|清出去)|"
              r"抹掉|抹去|抹除|抹了|去掉|移除|"
              r"丢掉|丢了|扔掉|撤掉|撤回|作废|划掉|拿掉|擦掉|擦除|擦了|(?i:delete|remove|erase|clear|wipe)掉?)")
_ZH_NOT_FORGET = lazy(r"(?:别|不要|不能|不会|不可以|千万别|可别|勿|没|不)(?:再|给)?忘|忘不了|忘不掉|难忘|健忘|"
                      r"忘性|遗忘症|(?:会|会不会|容易|经常|总是|老是|总|老)(?:把[^，。！？]{0,12})?[^，。！？]{0,3}忘|"
                      r"(?:想|希望|真想|好想|恨不得|巴不得|但愿)(?:把[^，。！？]{0,12})?[^，。！？]{0,4}忘")
_ZH_FORGOT_TO = lazy(r"忘(?:了|记)(?:带|拿|买|交|说|关|锁|吃|喝|做|写|问|打|发|回|去|充|付|还|叫|通知|提醒|"
                     r"告诉|看|"
                     r"帶|把|给|跟|和|在|是|要|穿|戴|开|浇|喂|取|存钱|预约|约|请|报|填|签|算|讲|放|收|倒|洗|"
                     r"保存|备份|订|定|申请|续|缴|办|点|上|下|接|送|刷|查|检查|确认|回复)")
_ZH_SUBJECT_BEFORE = lazy(r"(?<![帮给替让叫请])(?:我|我们|他|她|他们|她们|咱|咱们|俺|人家|老婆|老公|妈|爸|妈妈|"
                          r"爸爸|儿子|女儿|孩子|"
                          r"同事|老板|朋友|室友|男朋友|女朋友|对象|媳妇|领导|奶奶|爷爷|姐|哥|弟|妹|它|谁|"
                          r"[\u4e00-\u9fff]{1,3}(?:老师|经理|总|哥|姐))"
                          r"(?:又|也|都|竟然|居然|差点|完全|真的|还|早就|早|全|给|就|还是|一下子|根本|经常|总是|"
                          r"老是|已经)*(?:把[^，。！？]{0,20})?$")
_ZH_REPORTED = lazy(r"(?:(?:让|叫|要|劝|求|逼|请)(?:我|他|她|他们|她们|人|别人|我妈|我爸|"
                    r"[\u4e00-\u9fff]{1,2}(?=把))|"
                    r"跟我说|告诉我|说让|说要|他说|她说|他们说|说：|说:|问我|问：|问:|"
                    r"(?:怕|担心|万一|如果|要是|假如|假设|是不是|会不会)[^，。！？]{0,8}$|"
                    r"教我|逼我|求我|提醒我|嘱咐我|建议我|催我)[^，。！？]{0,30}$")
_ZH_ARTEFACT = lazy(r"文件|照片|图片|相片|相册|邮件|草稿|文档|视频|截图|app|APP|应用|软件|群聊|好友|联系人|"
                    r"购物车|"
                    r"订单|日程|闹钟|提醒事项|备忘录|帖子|评论|朋友圈|微博|代码|分支|表格|这一行|那一行|这段话|"
                    r"这句话里|这个词|那个词|缓存|浏览记录|歌单|歌|行程|预约|课|航班|机票|门票|订阅|账号|账户|"
                    r"草稿箱|收件箱|PPT|ppt|幻灯片|页|段落|标点|图片|链接|附件|便签|待办|清单|列表|日历|周会|例会|会议|"
                    r"油污|垃圾|灰|污渍|水印|C盘|内存|手机里|电脑里|存档|游戏|桌面|白板|docx|pdf|xlsx")
# Words that say the object is something said or stored: strictly ("你记的", "关于") and, more loosely, what names a
# piece of talk ("那件事", "的信息", "刚才").
_ZH_STRICT_WORDS = (r"记忆|你记的|你存的|你那里|你那边|你这里|你这边|你那儿?|我(?:跟|和|对|给|同)你(?:说|讲|提|聊|"
                    r"透露)|"
                    r"我说过|我提过|我讲过|我告诉过?你|关于|相关|有关")
_ZH_MEMORY_STRICT = lazy(_ZH_STRICT_WORDS)
_ZH_MEMORY_REF = lazy(_ZH_STRICT_WORDS + r"|记录|那件事|这件事|那个事|那些事|信息|资料|数据|内容|那些|这个|"
                                               r"那个|的事|"
                      r"的信息|的资料|的内容|的情况|的东西|的部分|那段|那句|那条|这句|这条|刚才|刚刚|上一|前面|"
                      r"之前说|都|全部|所有|统统|一切")
_ZH_DEICTIC = lazy(r"^(?:刚才|刚刚|方才|上一|前面|之前|上面|刚|前一)?(?:那|这|上)?一?(?:句|条|段|个|些|件事|"
                   r"句话|条消息|"
                   r"段话|条信息|个信息|部分|次|回|条记录|说的|讲的|发的|打的|提的)*(?:话|内容|事|东西|消息)?$")
_ZH_THIS = lazy(r"^(?:这|以下|下面|接下来|后面|这段|这些|这个|这句|这条|这事)")
_ZH_ABOUT = lazy(r"(?:关于|有关|跟|和|与)(?P<rest>.+?)(?:有关|相关)?的?(?:所有|全部|一切)?(?:事情?|信息|内容|"
                 r"东西|记录|"
                 r"资料|部分|情况|话|聊天|记忆|一切)?(?:都|全|全部|统统|一概)?$")
_ZH_RELATED = lazy(r"^(?P<rest>.+?)(?:相关|有关)的?")
_ZH_FILL = lazy(
    r"能不能|可不可以|能否|可否|好不好|行不行|可以吗|好吗|行吗|还是|什么的|之类的?|这种|那种|这类|你那(?:儿|里|边)|"
    r"卧槽|我靠|天哪|天啊|妈呀|哎呀|哎哟|哎呦|唉呀|艾玛|我的天|"
    r"你这(?:儿|里|边)|那边|这边|emm+|hmm+|ok|okay|赶紧|马上|立刻|直接|哈哈+|一股脑儿?|"
    r"从你那(?:儿|里|边)?|(?:存|记|留|保存)着|可以|请你|请|麻烦你?|拜托你?|帮我|帮忙|给我|替我|"
    r"全都|全部|统统|通通|一概|一下|以后|里面?|里头|中的?|之中|"
    r"(?:你的?)?(?:记忆|记录|脑子|数据库|存档|资料库|备忘)|我(?:之前|以前|上次|那天|刚才|曾经)?(?:跟|和|对|给|同)"
    r"你(?:说|讲|提|聊|透露|分享)(?:过|起)?的?|千万|(?:之前|以前|上次|那天|曾经)?(?:跟|和|对|给|同)你(?:说|讲|提|聊)(?:过|起)?的?|"
    r"我(?:之前|以前|上次|那天|曾经)?(?:说|讲|提|告诉你|透露|分享)过?的|"
    r"(?:之前|以前|上次|那天|曾经)(?:说|讲|提)(?:过|到)?的|的事情?$|的信息$|的内容$|的资料$|的记录$|的情况$|的东西$|"
    r"的部分$|的话$|这个|那个|这些|那些|这条|那条|[，,。.!！?？~～…]|\s+|、$")  # "看房、首付": two parts
# Fillers of one character go only where they are a word of their own: "你就别记了" loses 你, 就 and 了, "新能源"
# keeps its 能 and "从前" its 从 (jieba's segmentation says which).
_ZH_FILL_CHARS = frozenset("唉哎嗯呃诶欸吗先么能你把将就都吧啊呀哈啦呗哦噢嘛了呢再也从")


def _zh_unfill(text: str) -> str:
    out = _ZH_FILL.sub("", text)
    if not any(c in _ZH_FILL_CHARS for c in out):
        return out
    return "".join(w for w in segment(out) if w not in _ZH_FILL_CHARS)


# Words that make a sentence a request to the assistant rather than a report ("帮我删了吧" / "我删了").
_ZH_REQUEST = lazy(r"吧|请|帮我|帮忙|给我|替我|你|能不能|能否|可不可以|可以|麻烦|拜托|一下|行吗|好吗|么|吗|都给|"
                   r"那个|这个|那些|这些|那件|这件|那句|这句|那条|这条|刚才|刚刚|上一[句条个段]|(?:全|都|统统|一概)(?:部)?(?:删|清|忘|抹)")
_ZH_DISMISS = lazy(r"算了|没事|无所谓|不重要|没关系|当我没说|别管了|不提了|不说了|随便")
_ZH_PERSONAL = lazy(r"^(?:我|我的|我家|我们家|我家的|我自己的?)?(?:具体|详细|完整|准确)?的?"
                    r"(?:私人|个人|工作|公司|单位|家里|家庭|家|新|旧|老|备用|常用|"
                    r"以前|现在)?的?(?:手机号码?|电话号码?|电话|手机|号码|微信号?|QQ号?|邮箱|"
                    r"地址|住址|家庭住址|身份证号?码?|身份证|生日|出生日期|年龄|工资|薪水|收入|月薪|年薪|银行卡号?|"
                    r"卡号|密码|车牌号?|护照号?码?|体重|身高|病|病情|诊断|药|存款|贷款|房贷|负债|欠款|公司|单位|"
                    r"工作单位|学校|小区|门牌号|家庭情况|前任|前女友|前男友|前妻|前夫|病史|社保号?|医保卡?号?|"
                    r"信用卡号?|支付宝|账号|定位|位置|行踪)")


# A request that goes before what it covers: after a colon or dash, or first in the message and then a full stop.
_ZH_AHEAD = lazy(r"(?P<cue>" + _ZH_UNSTORE + r"|(?:说完|听完)?(?:你)?(?:就)?" + _ZH_FORGET + r"(?:掉)?|"
                 r"(?:别|不要)往(?:你的)?(?:记忆|脑子|本子)里?(?:放|存|记))"
                 r"(?:进|到)?(?:你的)?(?:记忆|脑子|本子)?(?:里|中)?(?:这条|这句|这些)?(?:啊|哈|哦|呀|噢|了|吧)*"
                 r"(?:[，,][^，,。！？!?：:]{1,14})?\s*(?:[：:]|——|--|…+|\.{3})")
_ZH_FIRST = lazy(r"^\s*(?:啊|哈|嗯|唉|哎|诶)?[，,]?" + _ZH_UNSTORE + r"(?:啊|哈|哦|呀)?[。.！!]")


def _content_words(text: str) -> int:
    return sum(1 for t in align.tokens(text) if t.tag in ("word", "name", "num", "qualifier"))


def _chinese(sentence: str) -> ForgetRequest | None:
    text = re.sub(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])", "，", sentence.strip())  # a space is a comma in chat
    ahead = _ZH_AHEAD.search(text)
    if ahead and not _ZH_REPORTED.search(text[:ahead.start()]) and not _BACK.search(text) \
            and _content_words(text[ahead.end():]) >= 5:
        # "不要写进记忆里：我和老公在谈离婚", "不要保存哈，就是想找个地方说说：...": the request opens what it covers
        return ForgetRequest("this", "", ahead.group("cue"))
    if re.search(r"怎么(?:弄|办|做|才能|样才能|删|清)|如何|有没有办法|能恢复|会不会|是不是(?:真的)?会", text):
        return None  # a question about how to delete something, not a request to forget
    pretend = re.search(r"(?P<obj>[^，。！？]{0,20}?)(?:你)?(?:就)?当(?:我|作我|做我)?没(?:提过|说过|讲过|说|讲|"
                        r"提|听见|听到|看见|看到)", text)
    if pretend and not _ZH_REPORTED.search(text[:pretend.start()]) and not _ZH_DISMISS.search(text[:pretend.start()]):
        # "相亲那摊子事你就当我没提过吧"; after "算了" it only drops a suggestion
        target = _zh_clean(pretend.group("obj"))
        if not target or _ZH_DEICTIC.match(target) or re.search(r"刚才|刚刚|上面|上一|前面", target):
            return ForgetRequest("previous", "", pretend.group(0))
        return ForgetRequest("topic", target, pretend.group(0))
    off = re.search(_ZH_UNSTORE + r"\s*[：:]|(?:说个事|跟你说个事|说件事|告诉你个秘密|"
                                  r"说个秘密)[，,]?\s*(?:你)?" + _ZH_UNSTORE
                    + r"(?:哈|啊|哦|呀|噢)?\s*[，,…。.]|(?:这句|这条|这段|这些|以下|下面的?|接下来的?|这事|这件事|"
                      r"这个)(?:话|"
                                  r"内容)?(?:你)?"
                    + _ZH_UNSTORE
                    + r"|私下(?:跟你)?说|悄悄(?:跟你)?说|说了你(?:也)?(?:别|不要)记|不用记[，,、]?(?:我)?就是|"
                    r"(?:别|不要|不用)(?:给我)?(?:记|存|保存|记录)(?:下来|下)?[，,：:]|不要记录在案|别记在?(?:小)?本子上|"
                    r"别往心里记|你(?:听听|听一下)就好|听完就忘|听过就忘|听了就忘", text)
    asked = _zh_asked_field(text[:off.start()]) if off else None
    if off and asked:  # "我工资多少这个别记了": the salary, named by asking, no value in the message
        return ForgetRequest("field" if _ZH_PERSONAL.match(asked) else "topic", asked, off.group(0))
    if off and not _ZH_REPORTED.search(text[:off.start()]):
        return ForgetRequest("this", "", off.group(0))
    # the first cue in the message names the target: "把关于老王的都删了吧，...，没必要留" is about 老王
    cues = sorted(((match, kind) for cue_pattern, kind in ((_ZH_UNSTORE, "unstore"), (_ZH_FORGET, "forget"),
                                                           (_ZH_DELETE, "delete"))
                   for match in re.finditer(cue_pattern, text) if kind != "unstore" or not _inside_word(text, match)),
                  key=lambda found: found[0].start())
    found = [request for request in (_chinese_at(text, match, kind) for match, kind in cues) if request]
    found = [r for r in found if not r.tentative] or found  # "招行卡号给我删了，别留着": 别留着 says it is the memory
    if not found:
        return None
    first = found[0]
    # "写网文这事，…全删了吧，笔名也别留": the later cues name more parts of the same topic
    named = search_words(first.target)
    more = [r.target for r in found[1:] if first.kind == "topic" and r.kind in ("topic", "field")
            and search_words(r.target) not in named and named not in search_words(r.target)]
    if more and named:
        return replace(first, target="、".join(dict.fromkeys([named, *more])))
    if first.kind == "field" and re.search(r"我自己的", text) and not first.target.startswith("我"):
        return replace(first, target="我的" + first.target)  # "身份证号那个你删一下吧，我自己的那个": mine
    return first


# What may follow a verb of keeping inside one of jieba's words and still leave it that verb ("记在", "存下", "留着")
_VERB_TAILS = frozenset("在下着住进起到了入上得")


def _inside_word(text: str, match: re.Match[str]) -> bool:
    """Is a keeping cue's last character the start of a longer word ("别记仇" holds a grudge, "别留恋" lingers), by
    jieba's segmentation rather than a list of idioms? Only 记, 存 and 留 are read so: a slip after 删 ("删调吧",
    jieba's one word) still deletes."""
    if text[match.end() - 1] in _VERB_TAILS:
        return False  # the cue ends with its own tail ("别记下" before "来")
    at = 0
    for word in segment(text):
        if at <= match.end() - 1 < at + len(word):
            tail = word[match.end() - at:]
            return bool(tail) and tail[0] not in _VERB_TAILS and bool(re.match(r"[\u4e00-\u9fff]", tail))
        at += len(word)
    return False


def _zh_asked_field(before: str) -> str | None:
    """What a clause names by a question word in place of its value ("我工资多少", "保险柜放哪儿、密码怎么设的"):
    a thing the user told before, not something said now; None when the clause holds a value or asks nothing."""
    clauses = [c for c in re.split(r"[，,。！？!?；;]", before) if _zh_clean(c)]
    if not clauses or re.search(r"\d", clauses[-1]):
        return None
    if not re.search(r"多少|哪儿|哪里|哪个|哪家|哪天|什么|怎么|几[个岁号点位]", clauses[-1]) \
            or re.search(r"(?:哪|什么|多少)[^，,]{0,3}(?:都|也)", clauses[-1]):  # "哪个数都别存": any of them
        return None
    return _zh_clean(re.sub(r"^(?:对了|还有|另外)", "", clauses[-1])) or None


def _chinese_at(text: str, match: re.Match[str], kind: str) -> ForgetRequest | None:
    request = _chinese_request(text, match, kind)
    if request is not None and re.fullmatch(r"(?:(?:他|她|它|他们|她们|这个人|那个人)(?:有关|相关)?|相关|有关)",
                                            request.target):
        # "我跟小敏那段都过去了，所有跟她有关的你都删掉", "华锐科技不合作了，相关的你都删掉": what came before
        return _zh_pronoun(text[:match.start()], request.cue)
    return request


_ZH_PERSON = lazy(r"(?:老|小|阿)[\u4e00-\u9fff]|[\u4e00-\u9fff]{1,2}(?:总|哥|姐|叔|姨|师傅|老师|医生)")


def _zh_pronoun(before: str, cue: str) -> ForgetRequest | None:
    """What a pronoun (他, 它, 相关的) stands for: a person named before it ("小敏", "老周", "王总"), else the
    nouns of the first clause that has any ("嘉兴那套房已经卖了" -> 嘉兴那套房, "我一想到煤球就哭" -> 煤球), read by
    jieba's part-of-speech tagger rather than by a list of words; "老捷达" is an old Jetta, not a Mr. Jie."""
    import jieba.posseg

    for person in _ZH_PERSON.finditer(before):
        if not person.group(0).startswith(("老", "小", "阿")):
            return ForgetRequest("entity", person.group(0), cue)  # "王总", "张姐": a title names a person
        words = list(jieba.posseg.cut(before[person.start():]))
        spelled, flags = "", []
        for word in words:
            if len(spelled) >= len(person.group(0)):
                break
            spelled += word.word
            flags.append(word.flag)
        if spelled == person.group(0) and "nr" in flags:
            return ForgetRequest("entity", person.group(0), cue)
    for clause in re.split(r"[，,。.！!？?；;：:…]", before):
        words = list(jieba.posseg.cut(clause))
        nouns = [i for i, w in enumerate(words) if w.flag.startswith("n") and w.word not in ("事", "事情", "信息")]
        if nouns:
            named = "".join(w.word for w in words[nouns[0]:nouns[-1] + 1])
            return ForgetRequest("entity" if all(w.flag in ("nr", "nz", "nt", "eng") for w in words[nouns[0]:
                                                 nouns[-1] + 1]) else "topic", named, cue)
    # no noun ("那趟旅行取消了": 旅行 reads as a verb): the first clause is the topic, for relevance to judge
    first = _zh_clean(next((c for c in re.split(r"[，,。.！!？?；;：:…]", before) if _zh_clean(c)), ""))
    return ForgetRequest("topic", first, cue) if first else None


def _chinese_request(text: str, match: re.Match[str], kind: str) -> ForgetRequest | None:
    request = _zh_request(text, match, kind, lenient=False)
    if request is None and kind == "delete":
        request = _zh_request(text, match, kind, lenient=True)
        return replace(request, tentative=True) if request is not None and request.kind in _NAMING else None
    return request


def _zh_request(text: str, match: re.Match[str], kind: str, *, lenient: bool) -> ForgetRequest | None:
    before, cue, after = text[:match.start()], match.group(0), text[match.end():]
    clause_before = re.split(r"[，,：:；;…。！？!?]", before)[-1]
    if kind == "delete" and re.search(r"(?:不|别|不要|不用|没|没有|不能|不想)$", before):
        return None  # "聊天记录能不能不删": keeping, not deleting
    if _ZH_REPORTED.search(before):
        return None
    if kind == "forget" and _ZH_DISMISS.search(before[-8:]) and not _ZH_MEMORY_STRICT.search(text):
        return None  # "算了算了，忘了吧": let it go
    if kind == "forget":
        if _ZH_NOT_FORGET.search(text[max(0, match.start() - 6):match.end()]) or _ZH_FORGOT_TO.match(text,
                                                                                                       match.start()):
            return None
        if _ZH_SUBJECT_BEFORE.search(clause_before) and not re.search(r"(?:帮我|给我|替我|请你?|你)把", clause_before):
            return None
        if re.match(r"(?:了|掉)?(?:吗|么|没|没有)", after) and not re.search(r"能不能|可不可以|可以|能否|会", text):
            return None
        if cue == "忘了" and re.match(r"\s*[\u4e00-\u9fff]", after) and not re.match(r"\s*(?:吧|啊|呀|哈|呗|吗|"
                                                                                     r"哦|嘛|它|他|她|这|那|关于|"
                                                                                     r"我的|我说|刚才|以前|之前)",
                                                                                     after):
            return None  # "忘了X" with X a thing: the user forgot it
    if kind == "delete" and _ZH_SUBJECT_BEFORE.search(clause_before) and not re.search(
            r"(?:帮我|给我|替我|请你?|你)把", clause_before):
        return None  # "我儿子把游戏删了": someone did it
    clause = clause_before + cue + re.split(r"[，,。.！!？?；;]", after, maxsplit=1)[0]
    if kind in ("forget", "delete") and re.match(r"(?:了|掉了)?\s*(?:[，,。.！!～~]|$)", after) \
            and not _ZH_REQUEST.search(clause) and not cue.endswith("掉") and not clause.startswith("把") \
            and not _KEEP[3].search(after):
        return None  # "邮箱密码忘记了", "聊天记录删了": what happened, not a request; "..., 房东那个留着" is one
    if kind == "forget" and re.match(r"(?:了|掉)?(?:它|他|她)(?:吧|啦|呗)?", after) and not _ZH_MEMORY_REF.search(text):
        return None  # "忘了它吧": let it go
    object_text = _zh_object(before, after, kind)
    if lenient and (_ZH_ARTEFACT.search(_LIFE_ITEM_ZH.sub("", text)) or "?" in text or "？" in text):
        return None  # "共享文档里把兵马俑那天删掉吧", "鸡蛋就去掉吧" in a shopping list: an edit, not the memory
    if kind == "delete" and _ZH_ARTEFACT.search(object_text) and not _ZH_MEMORY_STRICT.search(object_text) \
            and not lenient:  # leniently, only a life item is left (the whole message was read just above)
        return None
    if kind == "delete" and not (lenient or _ZH_MEMORY_REF.search(before + after)
                                 or _ZH_PERSONAL.match(_zh_clean(object_text))
                                 or _zh_clean(object_text) == "" or re.match(r"\s*(?:我|咱)", object_text)):
        return None
    target = _zh_clean(re.sub(_ZH_DELETE + "|" + _ZH_UNSTORE, "", object_text))
    at = before.rfind(object_text) if object_text else -1
    if at > 0 and re.match(r"\s*(?:那|这)(?:个|次|趟|段|件)", object_text) and len(search_words(target)) <= 3:
        # "冰岛去不成了，那个行程的事别记了": the trip the message named before
        named = _zh_pronoun(before[:at], cue)
        if named is not None and (named.kind == "entity" or search_words(target) == "人"):
            return named  # "我跟老周闹翻了，那个人的事都删了吧"
        if named is not None and named.target not in target:
            target = named.target + search_words(target)
    if target in ("他", "她", "它", "他们", "她们", "这个人", "那个人", "相关", "有关"):  # "老周这个人……关于他的全删"
        return _zh_pronoun(before, cue)
    back = re.search(r"刚才|刚刚|刚|方才|上一|上面|前面|最后(?:那|这)?[句条]", target) and len(target) <= 8
    # "我刚那话说得太过分了，你删掉吧": the words just said, however the message goes on about them
    back = back or bool(re.match(r"(?:我|你)?(?:刚才|刚刚|刚|方才)(?:那|这)(?:几)?(?:句|段|条)?话", target))
    if not target or _ZH_DEICTIC.match(target) or back:
        if kind == "forget" and (_ZH_DISMISS.search(text) or not re.search(r"刚才|刚刚|那句|那条|上一|前面|这句|这条|"
                                                                          r"那个|这个|那些|这些|说的|讲的", text)):
            return None  # "算了，忘了吧": let it go
        if _ZH_THIS.match(object_text.strip()):
            return ForgetRequest("this", "", cue)
        return ForgetRequest("previous", "", cue)
    if re.fullmatch(r"(?:我|你|所有|一切|全部|所有的?东西|所有记忆|你记的所有|关于我的(?:一切|所有)?)", target):
        return ForgetRequest("everything", "", cue)
    person = re.match(r"\s*(?:那个)?(?P<who>[A-Za-z][A-Za-z0-9-]*|(?:老|小|阿)[\u4e00-\u9fff]|"
                      r"[\u4e00-\u9fff]{1,3}?)(?:这个人|这人|"
                      r"那个人)?(?:的(?:所有|全部|一切)的?(?:信息|事情?|资料|东西|记录|内容)?)?(?:帮我|给我|替我)?\s*$",
                      object_text)
    if person and (re.search(r"这个人|这人|"
                             r"那个人", object_text) or re.fullmatch(r"[A-Z][\w-]*|(?:老|小|阿)[\u4e00-\u9fff]",
                                                                             person.group("who"))):
        return ForgetRequest("entity", person.group("who"), cue)  # "老王这个人，从你脑子里清出去", "那个Kevin"
    light = _zh_unfill(object_text)  # "之前跟你聊的" goes before "跟" can read as "about"
    about = _ZH_ABOUT.search(light) or _ZH_RELATED.search(light)
    everything = re.search(r"都|全|所有|一切|统统|通通", text) is not None
    if about and _zh_clean(about.group("rest")):
        rest = _zh_clean(about.group("rest"))
        return ForgetRequest("entity" if everything else "topic", rest, cue)
    owner = re.fullmatch(r"(?P<rest>[\u4e00-\u9fff]{1,6}?)的(?:事情?|信息|内容|资料|一切|所有|东西)", target)
    if owner and everything:  # "小刘的事你都给我忘了吧"
        return ForgetRequest("entity", owner.group("rest"), cue)
    if _ZH_PERSONAL.match(target):
        return ForgetRequest("field", target, cue)
    return ForgetRequest("topic", target, cue)


def _zh_object(before: str, after: str, kind: str) -> str:
    """The words naming what to forget: after the cue ("忘掉X", "别再记X了"), or before it ("把X删了", "X别记了",
    "关于我离婚的那些事，你都删掉吧"): the clause that says the most once request words are taken out, the
    one marked as a topic (关于, 相关, 那件事, 这个) first."""
    tail = re.split(r"[，,。.!！?？；;]", after, maxsplit=1)[0]
    tail = re.sub(r"^(?:了|掉|吧|啊|呀|呗|哈|哦|嘛)+", "", tail)
    if _zh_clean(tail) and not _junk(_zh_clean(tail)):
        return tail
    clauses = [c for c in re.split(r"[，,：:；;]", before) if c.strip()][-3:]
    pieces = [c[c.index("把") + 1:] if "把" in c else c for c in reversed(clauses)]
    useful = [p for p in pieces if _zh_clean(p) and not _junk(_zh_clean(p))]
    marked = [p for p in useful if re.search(r"关于|相关|有关|的事|那件事|这件事|那事|这事|这个|那个|那些|这些|"
                                             r"那段|的记录|的信息", p)]
    return (marked or useful or [""])[0]


def _junk(target: str) -> bool:
    """A leftover of request words, not a thing: "不", "还", "那边", "全部"."""
    return (len(target) <= 1 and re.fullmatch(r"[\u4e00-\u9fff]", target) is not None) or re.fullmatch(
        r"(?:吧|了|啊|呀|哈|呗|哦|好吗|好不好|行吗|可以吗|就行|就好|算了|拉倒|得了|以后|从此|永远|彻底|干净|掉|光|不|还|"
        r"都|全|也|没|别|要|想|不想|不要|已经|其实|反正|当时|那|这|人|事|他|她|它|新的?|旧的?|"
        r"所有的?)+", target) is not None


def _zh_clean(text: str) -> str:
    out = _zh_unfill(_ZH_DISMISS.sub("", text))
    # "以后不要再提林一川" names 林一川; "那只新能源股票" is the stock
    out = re.sub(r"^(?:之前|以前|上次)|^(?:以后|今后)?(?:不要|别|不用|甭)(?:再)?(?:提|说|讲)(?:起|到)?|"
                 r"^(?:那|这)[只台套家位趟辆份张笔]", "", out)
    out = re.sub(r"^(?:的|是|说|提|讲|关于)+|(?:的|是|里|中|全|都)+$", "", out)
    return out.strip()


def search_words(target: str) -> str:
    """The target as a search query: without the words that only say "that business" ("the layoff stuff", "all of
    the IRS audit stuff", 追尾那件事, 考研那段经历, 那一堆破事) and what follows them in Chinese."""
    if _CJK.search(target) and not re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}", target):
        out = re.sub(r"(?:的)?(?:那|这)(?:件|段|场|次|阵子|一串|一堆|一段|些|回)?(?:破事|事情?|经历|纠纷|日子|时间|"
                     r"过程)?"
                     r".*$", "", target)
        out = re.sub(r"(?:的)?(?:所有|全部|一切)?(?:的)?(?:破事|事情?|经历|纠纷|东西|信息|内容|记录|资料|情况)$|"
                     r"相关的?$|"
                     r"有关的?$", "", out)
        return out or target
    out = re.sub(r"^(?:(?:all|any|some) (?:of )?)?(?:the whole |the |all |that |those |these |my |our )?", "", target,
                 flags=re.I)
    out = re.sub(r"^(?:stuff|things|info|details|bits?) (?:about|on|regarding|with)\s+(?:the |my |our )?", "", out,
                 flags=re.I)
    out = re.sub(r"\b(?:stuff|thing|things|saga|business|situation|mess|drama|info|information|details|story|"
                 r"episode|bit|bits|part)\b", " ", out, flags=re.I)
    return " ".join(out.split()) or target


# Fillers removed before deciding whether a message says anything besides its cue (`_has_content`).
_FILLER_ZH = lazy(r"[吧啊呀哈啦呗哦嘛了呢的你我请就都也]")
