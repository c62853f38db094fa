"""Hand-written cues for the three intents the utility metrics depend on.

ReDial/IARD conversations are between two people; arena conversations are
between a person and a system, and look different: systems answer with
numbered lists ("I would recommend the following items: 1: X 2: Y"), users
answer tersely ("seen it, something newer?", "thanks, I'll watch that", "is
that even a movie?"). The classifier trained on IARD has never seen these, so
the offline annotator combines its probabilities with the cues below.

Each cue is a regular expression over lower-cased text. `strong` cues decide on
their own; `weak` cues only count when the context makes them unambiguous
(for the user: the system has just recommended something). The cues were
written and adjusted on IARD's training part and on the arena-style sets in
assets/acts, each of which was measured once as a held-out set before its
errors were read (see BENCHMARKS.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RULES_VERSION = "11"

_I_WILL = r"(?:i'll|i will|gonna|i'm (?:going to|gonna)|i am (?:going to|gonna)|i (?:should|might|must|definitely|will definitely|'ll definitely|'ll have to|will have to)|we'll|we will|let's|def(?:initely)? (?:will|going to)|gotta|got to)"
# Titles reach the cues as this placeholder (see features.view_dialogue).
TITLE = "xtitlex"
_OBJ = r"(?:it|that|this|them|those|these|both|xtitlex|the first|the second|the last|number \d|#\d|\d)"
_WATCH = r"(?:watch|see|rewatch|re-watch|try|start|binge|read|listen to|play|add|take|go with|go for|pick|rent|stream|queue|put on|look for|look up|look into|get)"

# --- user: accept ---------------------------------------------------------
# Texts are lower-cased with titles replaced by TITLE.
ACCEPT_STRONG = [
    rf"\b{_I_WILL}\s+(?:\w+\s+){{0,2}}?{_WATCH}\s+(?:\w+\s+)?{_OBJ}\b",
    rf"\b{_I_WILL}\s+(?:\w+\s+){{0,2}}?(?:check|give)\s+{_OBJ}\s+(?:out|a (?:try|shot|go|watch|look|chance))\b",
    rf"\b(?:i'll|i will|i'm (?:going to|gonna)|i am going to)\s+(?:\w+\s+)?(?:watch|rewatch|go with|go for)\s+[\w' :-]{{1,40}}?\s*(?:then|tonight|tomorrow|later|now|this weekend|first)?\s*(?:[,.!]|$)",
    r"\badd(?:ing|ed)?\s+(?:it|that|this|them|those|these|xtitlex|\w+)?\s*to (?:my|our|the) (?:\w+ )?(?:list|watch ?list|queue)",
    r"\bthat'?s (?:exactly|just|precisely) what i\b",
    r"\bi'?ll take (?:number |#|no\.? ?)?\d\b",
    r"^(?:(?:ok(?:ay)?|alright|fine|then),? )?(?:[\w'-]+ ){1,4}it is\s*(?:[,.!]|then\b|$)",
    r"\bxtitlex it is\b",
    r"\bthat settles it\b",
    r"\b(?:sounds|looks|seems) (?:like )?(?:a )?(?:really |very |pretty |so )?(?:good|great|interesting|fun|awesome|perfect|amazing|cool|promising|intriguing)\b.*\b(?:watch|check it|list|give it)\b",
    r"\b(?:ordered|bought|downloaded|rented|borrowed|reserved|booked|queued up) (?:it|that|this|them|xtitlex)\b",
    r"\bxtitlex,? (?:yes|yep|yeah|for sure|definitely)\b",
    r"\b(?:watching|rewatching|re-watching|binging|bingeing|reading|ordering|downloading|renting|streaming|starting|buying|playing) (?:it|that|this|them|xtitlex)?\s*(?:now|tonight|today|tomorrow|this weekend|right now|later|first)\b",
    r"\b(?:watching|rewatching|binging) (?:it|that|this|xtitlex)[.!]*$",
    r"\bput(?:ting)? (?:it|that|this|xtitlex) on\b|\b(?:queued|added|saved|bookmarked) (?:it|that|this|xtitlex)\b",
    r"\byou(?:'ve)? (?:convinced|sold) me\b|^sold\b|\bsold[.!]*$",
    r"\b(?:we'll|i'll|let's) (?:do|have) (?:that|this|it|xtitlex|the (?:first|second|last) one)\b",
    r"\b(?:exactly|just|precisely) (?:what i (?:want|wanted|need|needed|was looking for|had in mind)|the vibe)\b",
    r"\bi (?:should|need to|have to|gotta|must) (?:finally |definitely |really )?(?:watch|see|start|read|try|check)\b",
    r"\b(?:been meaning to|been wanting to|dying to|can't wait to) (?:watch|see|read|try|check)\b",
    r"\bnow i (?:really )?(?:want|need) to (?:see|watch|read)?\b",
    r"\b(?:(?:it'?s|that'?s|is) )?on my (?:list|watch ?list)\b",
    r"\b(?:going|go) (?:with|for) (?:that|this|it|xtitlex|the (?:first|second|last|latter|former))\b",
    r"\bdefinitely (?:watching|seeing|reading|checking)\b|\bwill be a (?:hit|winner)\b",
    r"^xtitlex,? (?:definitely|for sure|please|it is|sounds (?:good|great|perfect|fun))\b|^(?:definitely|for sure) xtitlex\b",
    rf"\b{_I_WILL} (?:\w+ )?(?:watch|rewatch|re-watch|see|try|read|start|check out)(?: it| that| this)?(?: again)?[.!]*$",
    rf"\b{_I_WILL}\b[^.!?]{{0,40}}\band (?:watch|see|try|start) (?:it|that|this|xtitlex)\b",
    r"\bi'?m convinced\b|^[\w' ]{2,30}? (?:yes|yep|yeah)[,;] ",
    # "..., will watch again this weekend": the subject dropped
    r"(?:^|[,.!;] ?)(?:will|gonna|going to|def(?:initely)? will) (?:\w+ )?(?:watch|see|rewatch|try|start|check|give)\b",
]
# Only when the system has just recommended something, in a short message.
ACCEPT_WEAK = [
    r"^(?:(?:aww+|ooh|oh|ah),? )?(?:ok(?:ay)?|cool|great|nice|awesome|perfect|yes|yeah|yep|sure|sounds good|ooh|oh|alright)\b.*(?:thanks?|thank you)",
    r"^(?:(?:aww+|ooh|oh),? )?(?:yes|yeah|ok(?:ay)?),? please\b|\bwill do\b|\bi'?m in[.!]*$|\bcount me in\b",
    r"^(?:(?:ok(?:ay)?|then),? )?(?:the )?(?:first|second|third|fourth|last|1st|2nd|3rd|4th) one\b|^(?:ok(?:ay)?,? )?xtitlex (?:then|please)\b",
    r"\b(?:sounds|looks|seems) (?:like )?(?:a )?(?:really |very |pretty |so )?(?:good|great|interesting|fun|awesome|perfect|amazing|cool|promising)\b",
    r"^(?:(?:lol|haha|ooh|oh|aww|wow),? )?(?:perfect|great|awesome|excellent|wonderful|fantastic)\b",
    r"^(?:ok(?:ay)?,? )?(?:sure|yes|yeah|yep|yup|alright|why not)[.!]*$",
    r"\b(?:sounds|looks) (?:lovely|fun|nice|wonderful|cool)\b",
    r"\b(?:great|good|nice|awesome|excellent|perfect|fantastic|brilliant|wonderful) (?:suggestion|pick|idea|recommendation|rec|choice|call|one)\b(?!.*\?)",
    r"(?:'ll|\bwill|\bwould|\bgonna|\bgoing to) love (?:it|that|this|xtitlex)\b",
    r"^xtitlex[!.]",
    r"^(?:(?:oh|ha|haha),? )?(?:i )?(?:think|bet|hope) so\b",
    r"\b(?:will|going to) be (?:so |really )?(?:thrilled|happy|excited|stoked|glad|pleased|delighted)\b|\b(?:is|are|'s) going to love\b",
    r"\bsorted\b|\bthat'?s (?:the|my|our) (?:plan|pick)\b|^(?:ok(?:ay)?,? )?(?:that|it) works\b",
    r"\bexactly (?:the|my) kind of (?:thing|movie|film|show)\b",
    r"(?:^|[,.!] ?)(?:perfect|great|awesome|excellent|wonderful|fantastic|sounds good)[.!]*$",
    r"^(?:hell|heck|oh|ooh) yes\b|\bthat'?s what i'?m talking about\b",
    r"^(?:ok(?:ay)?,? |then,? )?xtitlex(?: then|,? please|,? thanks?)\b",
]
ACCEPT_BLOCK = [
    r"\b(?:won'?t|will not|not going to|don'?t want to|do not want to|wouldn'?t|not gonna)\s+(?:\w+\s+){0,2}?(?:watch|see|try|check)",
    r"\bi'?ll pass\b|\bpass on\b",
    r"^neither\b|\bnone of\b|\b(?:doesn'?t|don'?t|does not|do not) (?:\w+ )?sound\b",
    r"^(?:do|does|did|should|would|can|could|is|are|am) i\b[^.!]*\?\s*$",  # "do i need to see the first one?"
    r"\bnot (?:a )?(?:good|great) (?:suggestion|pick|idea|recommendation|choice)",
    r"\b(?:maybe|even if)\b.*\b(?:watch|see) (?:it|that|this|xtitlex) again\b",
    # "maybe I should try something different": the wish is for another item
    r"\b(?:watch|see|try|check out|go with|go for) (?:something|anything) (?:else|different|new|other)\b",
]
# Closing the conversation politely accepts nothing in particular: weak cues do not count.
CLOSING = [
    r"\b(?:bye|goodbye|good (?:day|night)|great (?:day|night)|take care|same to you|for (?:your|all your|all the|the) help|for the info|for letting me know|for the heads up|good to know)\b",
]

# --- user: reject ---------------------------------------------------------
# Only when the system has just recommended something, in a short message.
REJECT_STRONG = [
    r"\b(?:didn'?t|did not|don'?t|do not|never) (?:really |much |particularly )?(?:like|enjoy|care for|love|dig)\b",
    r"\bnot (?:really |a |too |that |very |much of a |big |huge )*(?:fan|into|interested|keen|my (?:thing|type|style|cup of tea|genre|taste)|what i)\b",
    r"\b(?:isn'?t|aren'?t|is not|are not) (?:really )?my (?:thing|type|style|cup of tea|genre|taste)\b|\bnot in the mood\b",
    r"\bnot (?:a |much of a |really a )?\w+ (?:person|guy|gal|girl|fan)\b",
    r"\b(?:not|doesn'?t|don'?t|isn'?t)\b.*\bmy kind of\b",
    r"\bi (?:don'?t|do not|never) (?:really )?(?:do|watch|read|listen to)\b|\bnever (?:liked|enjoyed|cared for|been a fan)\b",
    r"\b(?:bores?|bored) me\b|\bcouldn'?t get into\b|\bturned it off\b|\bput me to sleep\b|\bfell asleep\b",
    r"\bkeep (?:saying|suggesting|recommending|repeating)\b|\bthe same thing\b",
    r"^no way\b|^no,? i won'?t\b|\bdoes (?:it|that|this) (?:even )?exist\b",
    r"\b(?:hate|hates|hated|dislike|dislikes|disliked|loathe|loathes|can'?t stand|cannot stand|not for me)\b",
    r"\bno,? thanks?\b|\bno thank you\b",
    r"\bnone of (?:these|those|them|that)\b|^neither\b",
    r"\b(?:is|was) (?:that|this|it|xtitlex) (?:even (?:a )?(?:real )?|a (?:real )?|real )(?:movie|film|thing)\b",
    r"\b(?:doesn'?t|does not|don'?t|do not) (?:even )?exist\b|\b(?:is|was) (?:it|that|this|xtitlex) (?:even )?real\b",
    r"\b(?:terrible|awful|bad|boring|lame|weird|stupid|horrible) (?:recommendation|suggestion|pick|choice|idea)\b",
    r"\b(?:sounds|looks|seems) (?:\w+ )?(?:boring|bad|terrible|awful|lame|dumb|depressing|dull|confusing)\b",
    r"\bthat'?s not (?:a |an |what|it|right|relevant)|\bnot what i (?:asked|want|meant|was looking)",
    r"\b(?:same|that) (?:movie|film|one) (?:you|again)\b|\b(?:you )?(?:already|just) (?:suggested|recommended|said) (?:that|it|this)\b",
    r"\bwhy (?:are|would|did) you (?:recommend|suggest)",
    r"\bi don'?t want (?:a|an|that|this|it|xtitlex|something)\b",
    r"\b(?:already|have|'ve|just|recently) (?:seen|watched|saw|read)\b.*\b(?:else|others?|different|new|newer|recent|another|next)\b",
    r"\b(?:seen|watched|saw|read) (?:it|that|this|them|those|all|both|xtitlex)\b.*\b(?:else|others?|different|newer|another|recent|next)\b",
    r"\bxtitlex,? (?:no|nah|nope)\b|\b(?:the )?others?,? (?:no|nah|nope)\b|\bnot the others?\b",
    r"\bdidn'?t (?:understand|get) (?:it|a thing|the hype|the point)\b",
    r"\b(?:suggested|recommended|mentioned) (?:\w+ ){0,3}already\b",
    r"\bi'?ll pass\b|\bpass on (?:it|that|this|them|xtitlex)\b",
    r"\b(?:isn'?t|aren'?t|is not|are not|not) (?:really )?for me\b",
    r"\bnot (?:a |much of a )?(?:big |huge |great )?(?:reader|watcher|gamer|listener)\b",
    r"\b(?:already|just) (?:suggested|recommended|mentioned)\b",
    r"\bgave up on\b|\bstopped watching\b|\bcouldn'?t finish\b|\bwalked out\b",
]
REJECT_WEAK = [
    r"^(?:no|nah|nope|meh|eh|ugh|hmm+,? no)\b",
    r"\b(?:something|anything) (?:else|different|new|newer|more|less|from|after|since|made|released|recent|older|lighter|darker|shorter|funnier|without|other than|besides|not)\b",
    r"\b(?:ancient|outdated|so dated)\b|\bi (?:really )?don'?t want to (?:read|watch|see|sit|do|be)\b|\balready (?:own|have) (?:it|that|this|them|xtitlex)\b",
    r"\b(?:seen|watched|saw)\b.{0,25}\balready\b",
    r"\bi want something\b|\btry again\b|\b(?:tired|sick) of\b|\bxtitlex (?:is not|isn'?t|was not|wasn'?t) (?:a|an|even)\b",
    r"\b(?:creeps?|freaks?) me out\b|\bgives? me (?:the )?creeps\b|\bi (?:meant|asked for|said)\b",
    r"\b(?:babyish|kiddie|for babies|for little kids)\b",
    r"\bxtitlex (?:i(?:'ve)? (?:saw|seen|watched)|already seen)\b|^not (?:a|an|another|more)\b|\bi can'?t (?:watch|do|stand|handle)\b",
    r"\bnot so much\b|[,.] ?(?:no|nope|nah)[.!]*$|\bmakes? me (?:sad|sick|uncomfortable|anxious)\b",
    r"\btoo (?:old|scary|long|violent|sappy|boring|childish|slow|sad|dark|gory|cheesy|silly|depressing|romantic|much|confusing|disturbing|weird|strange|intense|heavy|loud|predictable|artsy|pretentious|mainstream|obscure|bleak|complicated|graphic|juvenile|quirky|serious|mushy|girly|nerdy|corny)\b",
    r"\bboring\b|(?:^|[,.] ?)(?:pass|skip(?: it| that)?|next\??)[.!]*$|\bso no[.!]*$",
    r"\b(?:already|have|'ve) (?:seen|watched|saw)\b|\b(?:seen|watched|saw) (?:it|that|this|them|those|all|both|xtitlex)\b",
    r"\bthat'?s (?:a |an )?(?:cartoon|kids? movie|children'?s movie)\b",
]
REJECT_BLOCK = [
    # "no, what is it about?": a question about the item, not a decision
    r"^(?:no|nope|nah)\b[,.!]*\s*(?:i (?:have|haven'?t)[^.?!]*[,.]\s*)?(?:what|who|when|where|how|is|was|does|did|can|could)\b[^.!]*\?\s*$",
    r"\b(?:love|loved|liked|enjoyed|favou?rites?|great|excellent|interesting|awesome|amazing|magical|beautiful|masterpiece|brilliant|wonderful|heard (?:it|that|this) (?:was|is) good|heard good things)\b(?!.*\b(?:didn'?t|don'?t|not)\b)",
    r"\bdon'?t think i'?(?:ve| have) (?:seen|watched)\b",
    r"\b(?:haven'?t|have not|never|not|didn'?t|did not|hasn'?t|has not) (?:\w+ )?(?:seen|watched|saw|see|heard)\b",
    r"\b(?:it|that|this|xtitlex) (?:is|was|'s) (?:\w+ )?(?:good|great|funny|okay|ok|fine|awesome|amazing|cute)\b",
    r"\b(?:have|did) you (?:ever )?(?:seen|watched|see|watch)\b",
    r"^no,? i (?:haven'?t|have not|didn'?t|did not)\b",
    r"^(?:no|nope|nah)[,.!]*\s+but\b",
    # answering "have you seen it?", or asking about the item, keeps it on the table
    r"^(?:no|nope|nah),? (?:never|not yet)\b|^no idea\b",
    r"\b(?:who'?s in it|who is in it|who stars in it|what'?s it about|what is it about|how long is it|is it (?:good|scary|long|sad|funny|violent))\b",
]

# --- system: recommend ----------------------------------------------------
RECOMMEND_STRONG = [
    r"\b(?:recommend|suggest)(?:ing|ed)? (?:the )?following\b",
    r"\bhere (?:are|is) (?:some|a few|a couple|another|one|my|a list|a good|several)\b",
]
RECOMMEND_CUES = [
    r"\b(?:recommend|suggest|propose)(?:s|ed|ing)?\b",
    r"\byou (?:might|may|would|will|should|could|'d|'ll|must) (?:\w+ )?(?:like|enjoy|love|want|check|try|watch|see|appreciate|dig|be into|give)\b",
    r"\b(?:how|what) about\b",
    r"\bhave you (?:ever )?(?:seen|watched|heard of|tried|checked out|caught)\b",
    r"\b(?:did|do) you (?:see|watch|like|know|enjoy)\b",
    r"\b(?:check out|try|consider|go (?:for|with)|give .{1,40} a (?:try|shot|go|watch))\b",
    r"\b(?:another|one more|also|or|maybe|perhaps|then)\b",
    r"\b(?:is|are) (?:a )?(?:great|good|fun|nice|classic|fantastic|excellent|funny|wonderful) (?:pick|choice|option|one|movie|film|classic)s?\b",
    r"\bi (?:think|bet|'m sure|am sure) you(?:'d| would| will|'ll)\b",
]

# A system turn that wishes the user well with a title already chosen.
AGENT_CLOSING = [
    r"(?:^|[.!?,] ?)enjoy (?:the |your )?(?:movie|film|show|book|album|it|xtitlex)\b|\bhope you (?:enjoy|like|love)\b",
    # asking how the user liked a title asks about their taste, it offers nothing
    r"\b(?:what did you think (?:of|about)|how did you like|did you (?:like|enjoy|love|hate))\b",
]


# The system asks whether the user wants more: whatever was offered before has been dealt with.
AGENT_OFFERS_MORE = [
    r"\b(?:would|do) you (?:like|want) (?:me to (?:find|suggest|recommend) )?(?:another|more|other|some more|any more)\b",
    r"\b(?:any|some) (?:more|other) (?:suggestions|recommendations|ideas)\?|\banything else\b.*\?",
    r"\b(?:can|could) i (?:help|assist) (?:you )?(?:with )?(?:any|some)(?:thing)? (?:more|else)\b",
]
# "Have you seen X?": answering it with a bare yes or no says whether, not what the user decides.
AGENT_SEEN_QUESTION = [r"\b(?:have you (?:ever )?(?:seen|watched)|did you (?:ever )?(?:see|watch|catch))\b"]
BARE_ANSWER = [r"^(?:(?:oh|ah|um+|hmm+),? )?(?:yes|yeah|yep|yup|no|nope|i have|i haven'?t|i did|i didn'?t|not yet)"
               r"(?:,? (?:i (?:have|haven'?t|did|didn'?t)|i've seen it|not yet))?[.!]*$"]


def _compile(patterns: list[str]) -> list[re.Pattern[str]]:
    return [re.compile(p) for p in patterns]


_C = {
    name: _compile(globals()[name])
    for name in (
        "ACCEPT_STRONG", "ACCEPT_WEAK", "ACCEPT_BLOCK", "CLOSING", "REJECT_STRONG", "REJECT_WEAK", "REJECT_BLOCK",
        "RECOMMEND_STRONG", "RECOMMEND_CUES", "AGENT_CLOSING", "AGENT_OFFERS_MORE", "AGENT_SEEN_QUESTION",
        "BARE_ANSWER",
    )
}


# Contractions typed without the apostrophe ("ill watch it", "dont like it").
_CONTRACTIONS = {
    "ill": "i'll", "im": "i'm", "ive": "i've", "dont": "don't", "didnt": "didn't", "doesnt": "doesn't",
    "wont": "won't", "cant": "can't", "isnt": "isn't", "arent": "aren't", "havent": "haven't",
    "wasnt": "wasn't", "thats": "that's", "whats": "what's", "youre": "you're", "couldnt": "couldn't",
    "wouldnt": "wouldn't", "lets": "let's", "hasnt": "hasn't", "its": "it's", "id": "i'd", "weve": "we've", "theyve": "they've",
}
_CONTRACTION_RE = re.compile(r"\b(" + "|".join(_CONTRACTIONS) + r")\b")


def normalise_text(text: str) -> str:
    text = text.lower().replace("’", "'").replace("‘", "'")
    text = _CONTRACTION_RE.sub(lambda m: _CONTRACTIONS[m.group(1)], text)
    return re.sub(r"\s+", " ", text).strip()


def _any(name: str, text: str) -> bool:
    return any(p.search(text) for p in _C[name])


@dataclass(frozen=True)
class UserCues:
    accept_strong: bool
    accept_weak: bool
    accept_block: bool
    reject_strong: bool
    reject_weak: bool
    reject_block: bool

    def as_vector(self) -> list[float]:
        return [float(v) for v in (self.accept_strong, self.accept_weak, self.accept_block,
                                   self.reject_strong, self.reject_weak, self.reject_block)]


@dataclass(frozen=True)
class AgentCues:
    recommend_strong: bool
    recommend_cue: bool
    is_question: bool
    closing: bool = False

    def as_vector(self) -> list[float]:
        return [float(v) for v in (self.recommend_strong, self.recommend_cue, self.is_question, self.closing)]


_CONCESSION = re.compile(r"\b(?:even though|even if|although|despite)\b.*$")


def user_cues(text: str) -> UserCues:
    t = normalise_text(text)
    accept_strong = _any("ACCEPT_STRONG", t)
    if accept_strong:
        t_reject = _CONCESSION.sub("", t)  # "I'll give it a try even though I hate subtitles"
    else:
        t_reject = t
    return UserCues(
        accept_strong=accept_strong,
        accept_weak=_any("ACCEPT_WEAK", t) and not _any("CLOSING", t),
        accept_block=_any("ACCEPT_BLOCK", t),
        reject_strong=_any("REJECT_STRONG", t_reject),
        reject_weak=_any("REJECT_WEAK", t_reject),
        reject_block=_any("REJECT_BLOCK", t),
    )


_CONTRAST = re.compile(r"\b(?:but|though|tho|however|although|while|whereas)\b|\bnot [\w' ]{1,40}[,;.] ")


_QUESTION = re.compile(r"\?|^(?:(?:wait|hmm+|oh|ok(?:ay)?|so|um+|uh+)[,.!]*\s+)?"
                       r"(?:what|who|when|where|why|how|did|does|do|is|was|are|can|could|would|will)\b")


def is_question(text: str) -> bool:
    """A question, with or without its question mark ("wait, what did i ask for")."""
    return _QUESTION.search(normalise_text(text)) is not None


def offers_more(agent_text: str) -> bool:
    """The system asks whether the user wants more suggestions or help."""
    return _any("AGENT_OFFERS_MORE", normalise_text(agent_text))


def bare_answer_to_seen_question(agent_text: str, user_text: str) -> bool:
    """"have you seen X?" answered only "yes" / "nope" / "i have"."""
    return _any("AGENT_SEEN_QUESTION", normalise_text(agent_text)) and _any("BARE_ANSWER", normalise_text(user_text))


_FACT_QUESTION = re.compile(
    r"^(?:who|when|where|what year|how long|how old|how many|what(?:'s| is| was) (?:it|the plot|the story|the rating|"
    r"the name)|is it|was it|does it|did it|is (?:he|she|that)|what rating)\b|^(?:is|was|are|does|did) [^?]{1,60}\?\s*$"
    r"|^(?:(?:can|could) you |please )?tell me (?:the plot|the story|more about (?:it|that)|what (?:it|that) is about"
    r"|what it's about|about (?:it|the plot))\b|^what happens\b")
_ASKS_FOR_MORE = re.compile(r"\b(?:recommend|suggest|what else|anything else|any other|another|more like|similar|instead|"
                            r"any|anything|something)\b|\b(?:is|are) there\b")


def asks_about_facts(user_text: str) -> bool:
    """A question about an item or a person ("who directed it?"), not a request for suggestions."""
    t = normalise_text(user_text)
    return bool(_FACT_QUESTION.search(t)) and not _ASKS_FOR_MORE.search(t)


def has_contrast(text: str) -> bool:
    """Whether a message sets two things against each other ("not X, but Y")."""
    return _CONTRAST.search(normalise_text(text)) is not None


def agent_cues(text: str) -> AgentCues:
    t = normalise_text(text)
    return AgentCues(
        recommend_strong=_any("RECOMMEND_STRONG", t),
        recommend_cue=_any("RECOMMEND_CUES", t),
        is_question="?" in t,
        closing=_any("AGENT_CLOSING", t),
    )


N_USER_CUES = 6
N_AGENT_CUES = 4
