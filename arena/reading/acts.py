"""What the user's last message does, read with rules.

`RuleActReader` is an `arena.conversation.simulator_interface.IntentReader`: it returns the
IARD intents of the dialogue's last utterance (INQ, REJ, CRI-F, SEE, ACC, PRO),
like the learnt act model does through the same interface. It is the fallback
when the learnt model is not loaded, and it is cheap (a few regular
expressions). Three things IARD has no user intent for are read here by rules
whatever reader is used: a closing ("thanks, bye"), a correction of a fact
("Flash Gordon is 1980") and a shrug ("whatever").

`question_aspect` says what a question asks about an item (plot, director,
cast, year, genres, whether it suits a child); `open_question` marks a question
about something already in the conversation that no aspect names ("How was
it?"). The answer comes from the catalog (`crs.item_answers`).

A closing is read from the act, not from whole sentences: some part of the
message closes (thanks, goodbye, a choice taken, an approval) and nothing in it
asks for more (`asks_for_anything`).
"""

from __future__ import annotations

import re
from typing import Optional

from arena.dialogue import Dialogue, Role
from arena.reading.scope import SEEN_CUE as SEEN
from arena.reading.vocabulary import GENRE_WORD, KINDS

FAREWELL = re.compile(
    r"\b(bye+|goodbye|good night|see (you|ya)|cya|that'?s (all|it)( for (now|today))?|that is all|"
    r"i'?m (done(?! with)|all set|good now)|i am (done(?! with)|all set)|gotta go|(have|got) to go|"
    r"(we'?re|we are) (all )?(done(?! with)|set)|"
    r"no more (recommendations|suggestions)|"
    r"have a (nice|good|great|lovely|wonderful) (rest of (the|your) )?(evening|night|day|weekend|one)|"
    r"take care|wish me luck)\b|"
    # "haha perfect, that'll do. night!", "later!": a one-word goodbye that ends the message
    r"(^|[.!,;]\s*|\b(ok(ay)?|thanks|cheers|great|perfect)\W+)(good ?)?(night|nite|later|laters)\W*$",
    re.IGNORECASE,
)
_ONLY_THANKS = re.compile(
    r"^\W*((ok(ay)?|great|cool|perfect|awesome|nice|alright)\W+)*(thanks|thank you|thx|ty|cheers)"
    r"( (so|very) much| a lot| again)?\W*$",
    re.IGNORECASE,
)
_SHRUG = re.compile(
    r"^\W*(whatever|anything|any|i don'?t (care|mind|know)|dunno|idk|surprise me|up to you|you (choose|pick|"
    r"decide)|no idea|not sure)\W*$",
    re.IGNORECASE,
)
# "<title> is 1980", "it was released in 1992": the user corrects a fact, asks for nothing.
_CORRECTION = re.compile(
    r"\b(is|was|came out in|is from|was from|was (released|made) in)\s+(19|20)\d\d\b\W*$", re.IGNORECASE
)
_ASKS_FOR_MORE = re.compile(
    r"\b(recommend|suggest|want|like|looking for|how about|what about|something|anything|another|more|"
    r"others?|ideas?|options?|else)\b",
    re.IGNORECASE,
)

# Asks for more items whatever the punctuation ("Great, any others", "more like that please").
_ASKS_FOR_MORE_PLAIN = re.compile(
    r"\b(recommend|suggest|another|more|others?|else|similar|any \w+)\b", re.IGNORECASE
)

REJECTION = re.compile(
    r"(not (really )?(my thing|for me|my (cup of tea|style|taste|type)|what i (want|wanted|asked|meant|had "
    r"in mind))|\b(don'?t|do not|didn'?t|did not) (like|want|enjoy|care for|love)|"
    r"not (a fan|into|interested|that|this|those|these|it)\b|"
    r"\bhate[ds]?\b|\bboring\b|\b(no|nope),? thanks?\b|something (else|different)|anything else|\bagain\b|"
    r"you (gave|showed|suggested|recommended) me(?! (some |two |three |a few |a couple( of)? |such |really |"
    r"very |so many |\w+ )?(good|great|nice|excellent|awesome|wonderful|amazing|fantastic|solid|cool|perfect|"
    r"fine|lovely|fun))|\bi said\b|\bdislike|too (scary|violent|gory|dark|sad|slow|"
    r"long|old)|\bnot (good|great)\b|\bno thank you\b|\bpass\b|\bnah\b|"
    r"\b(none|neither) of (those|these|them|the above|the (two|three|list))\b)",
    re.IGNORECASE,
)
# The list turned down as a whole: "none of those", "neither of them". A turn-down whatever follows it
# ("none of those, others?" asks for a new list, not about those).
_WHOLE_LIST_DOWN = re.compile(r"\b(none|neither) of (those|these|them|the above|the (two|three|list))\b"
                              r"(?!\s+(have|has|star|is|are|was|were)\b(?!\s+(for me|good|great|it)\b))",
                              re.IGNORECASE)


def turns_down_the_list(text: str) -> bool:
    """Whether the message turns the whole list down ("none of these work for me"), not asks about it
    ("none of those have Tom Hanks, right?")."""
    return bool(_WHOLE_LIST_DOWN.search(text or ""))


_NOT_SEEN = re.compile(r"\b(haven'?t|have not|never) (seen|watched)\b", re.IGNORECASE)
ACCEPTANCE = re.compile(
    r"\b(sounds (good|great|fun|interesting|perfect)|i'?ll (watch|check|try|give)|i (like|love) (it|that|"
    r"this)|"
    r"perfect|great (choice|pick|idea)|good (choice|pick|idea)|will watch|looks (good|great|interesting))\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^\W*(what|who|when|which|where|why|how|is|isn'?t|are|does|did|was|were|can you tell|tell me|would|"
    r"(give me |i'?d like )?(some |a bit of )?(more )?(info|information|details)( on| about)?)\b",
    re.IGNORECASE,
)

_WH_START = re.compile(r"^\W*(what|who|when|which|how)\b", re.IGNORECASE)
# What a question asks about an item, first match wins (suitability before plain genres).
ASPECTS = (
    (
        "compare_children",
        re.compile(
            r"\bwhich (one|of (these|those|them|the \w+))?\b.*"
            r"\b(kids?|child(ren)?|family|little ones|\d{1,2}[ -]?(year|yr)s?[ -]?old)",
            re.IGNORECASE,
        ),
    ),
    (
        "suitability",
        re.compile(
            r"\b(suitable|appropriate|ok(ay)?|safe|good|fine|alright|too (scary|violent|gory|much|intense|"
            r"dark)|scary)\b.*"
            r"\b(kids?|child(ren)?|little ones|family|\d{1,2}[ -]?(year|yr)s?[ -]?old|son|daughter|"
            r"for (her|him|them)|(that|this|his|her|their) age)|"
            r"\b(would|will|could) (she|he|they|the kids) (like|enjoy|handle|cope with)\b|"
            # "would my son enjoy Coco?", "do you think kids would like it?" (not "what would kids like?")
            r"\b(would|will|could) (my |our |the |young |little )?(kids?|children|child|son|daughter|nephew|"
            r"niece|grandkids|toddler) (like|enjoy|handle|cope with|be ok with)\s+(it|this|that|these|those|"
            r"them|the\b|(?-i:[A-Z0-9]))|"
            r"\b(kids?|children|child|son|daughter|nephew|niece|grandkids|toddler) (would|will|could|might) "
            r"(like|enjoy|handle|cope with|be ok with)\s+(it|this|that|these|those|them|the\b|"
            r"(?-i:[A-Z0-9]))|"
            # "Is it PG?", "can we rate it as a family movie?": the audience rating, read from the genres
            r"\b(is|was) (it|that|this|the (first|second|third|last))( one)? (rated )?"
            r"(pg(-?13)?|g|r|nc-?17)\b|"
            r"\b(rate|count|call) (it|that|this)( one)? (as )?a family (movie|film)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "compare_year",
        re.compile(
            r"\bwhich (one |of (these|those|them|the \w+) )?(is|was|came out) (the )?(newer|older|"
            r"newest|oldest|more recent|most recent|earlier|later|first)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "why",  # "why did you pick them?": the reasons a list was made, from the state and the records
        re.compile(
            r"\bwhy (did|do|would|have|were) you (pick|choose|chose|recommend|suggest|show|list|go with|"
            r"give)|\bwhy (these|those|them|this one|that one)\b|"
            r"\bwhat made you (pick|choose|recommend|suggest)|\bhow did you (pick|choose|come up with)|"
            r"\bwhy (is|are) (it|they|these|those) (on|in) (the|your) list",
            re.IGNORECASE,
        ),
    ),
    (
        "pick",
        re.compile(
            r"\b(?:(which|what) (one |of (these|those|them) )?(would|should|do) (you|i) (pick|choose|go with|"
            r"recommend|watch( first)?|suggest)|which (one )?is (the )?(best|better|your (fav(ou)?rite|top))|"
            r"which (one |of (these|those|them) )?(has|have|got|gets|had) (the )?"
            r"(best|better|highest|top|most)|"
            r"(your|the) (top|best) pick|if you (had|have) to (pick|choose))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "true_story",
        re.compile(
            r"\b(true story|(based|built) on (a )?(true|real)|real (story|events|person|people)|"
            r"really happen(ed)?|actually happen(ed)?|biopic)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "plot",
        re.compile(
            r"(\bwhat('s| is| was| are)\b.*\babout\W*$|\bwhat\b.*\b(is|was|are|'s) about\W*$|\bwhat'?s (it|"
            r"that|this( one)?|the \w+ one) about|"
            r"\b(plot|story ?line|story|premise|synopsis|what happens|(more )?(info|information|details) (on|"
            r"about)|tell me (a (little )?bit |a little |some(thing)? )?(more )?about)\b)",
            re.IGNORECASE,
        ),
    ),
    ("director", re.compile(r"\b(direct(ed|or|s)?|who made)\b", re.IGNORECASE)),
    (
        "writer",
        re.compile(r"\b(wrote|written|writer|author)\b|^\W*who('?s| is| was) .+ by\W*$", re.IGNORECASE),
    ),
    (
        "stars",
        re.compile(
            # "the star rating", "how many stars does it get" ask how it is rated (below)
            r"\b((?<!how many )stars?(?! ratings?\b)(?! does it get)|starring|actors?|actress(es)?|cast|"
            r"who('?s| is) in|who plays|who (else )?acts?|acts? "
            r"in|plays? in|who else is in|any(one|body) (famous|well[- ]known|i'?d know)|"
            r"famous (people|faces|names))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "runtime",
        re.compile(
            r"\b(how long is|how long does it (run|last|take)|run ?time|running time|length|"
            r"how many (minutes|hours)|minutes long|hours long|shortest|longest|shorter|longer)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "year",
        re.compile(
            r"\b(when|(what|which) year|how old|how long ago|released|come out|came out)\b", re.IGNORECASE
        ),
    ),
    (
        "genres",
        re.compile(
            r"\b(what (kind|sort|type|genre)|genres?|is it (scary|funny|a comedy|a horror|horror|sad))\b|"
            r"^\W*(is|are|was|isn'?t)\s+(?!there\b|any\b)[^?]*\b(an?)\s+(documentary|musical|western|"
            r"cartoon|animated (film|movie)|anime|comedy|horror( film| movie)?|thriller|romance|"
            r"romantic comedy|drama|kids'? (film|movie)|family (film|movie)|war (film|movie)|"
            r"sci-?fi( film| movie)?|true story|biopic)\b[^?]*\?|"
            r"^\W*(is|are)\b.*\b(violent|scary|gory|funny|dark|sad|romantic|a comedy|a horror film)\W*$",
            re.IGNORECASE,
        ),
    ),
    (
        "rating",
        re.compile(
            r"\b(rated|ratings?|reviews?|how many stars|how good is|is it (any )?good|"
            r"worth (it|watching|reading)|"
            r"(how|what) (would |do |did )?(you|they|people|critics) rate|"
            r"score|rotten tomato(es)?|imdb|metacritic|critics?)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "unrecorded",  # facts neither catalog records: awards, money, language, places, music, sequels
        re.compile(
            r"\b(awards?|oscars?|academy awards?|nominat\w*|won (any|an|a)\b|box office|budget|"
            r"gross(ed)?|(make|made|earn(ed)?) (much|a lot of )?money|languages?|subtitle[sd]?|dubbed|"
            r"filmed|shot (in|on|at)|where (was|is) it (set|made|shot|filmed)|soundtrack|"
            r"(the )?music (in|of)|(what|which) country|netflix|hulu|streaming|stream it|"
            r"where (can|could|do) i (watch|see|stream|rent|buy))\b",
            re.IGNORECASE,
        ),
    ),
)
# The words naming a field of a question, for putting their misspellings right ("rsatings").
FIELD_WORDS = ("ratings", "rating", "reviews", "director", "directed", "runtime", "awards", "actors",
               "starring", "budget", "soundtrack", "language", "shortest", "longest")
_WHY = dict(ASPECTS)["why"]
# Words that point back at what the system showed ("the second one", "it").
ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3,
            "fifth": 4, "5th": 4, "last": -1}
_ORDINAL = re.compile(r"\b(the )?(" + "|".join(ORDINALS) + r")( one)?\b", re.IGNORECASE)
_POINTER = re.compile(r"\b(it|that|this|that one|this one|them|these|those)\b", re.IGNORECASE)
# A position by its number in the list: "number 2", "no. 3", "#1".
_NUMBERED = re.compile(r"(?:\bnumber|\bno\.|#)\s*([1-5]|one|two|three|four|five)\b", re.IGNORECASE)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


_THANKS = re.compile(r"\b(thanks|thank you|thx|cheers)\b", re.IGNORECASE)
# "I'll watch it tonight", "I'll go with that", "I'll check out X": the user has what they came for.
_TAKES_IT = re.compile(
    r"\b(i'?ll|i will|we'?ll|we will|(s)?he'?ll|they'?ll|gonna|going to) (definitely |probably )?(be )?"
    r"(watch|check|look (for|out for|it up)|grab|get|go with|try|read|see|give|giving|take|love|enjoy|"
    r"pick|re-?watch)\b|\b(i'?m |i am |we'?re |we are )?look(ing)? forward to (watching|seeing|reading)\b|"
    r"\b(sounds|looks) (good|great|lovely|perfect|fun|interesting|nice)\b|"
    r"\bthat'?s (our|my|the) (movie|film|book|show|one|pick)\b|"
    r"\b(that'?s|we'?re|i'?m|that is) (\w+ )?(all )?sorted\b|\bthat'?ll do\b|"
    # "I just added them to my watch list": taken, to watch later
    r"\b(added|adding|add|put|putting) (it|them|those|these|both|that one|this one) (to|on) (my|our|the) "
    r"(watch ?list|list|queue)\b|"
    r"\b(exactly|just|precisely) what (i|we) (needed|wanted|was looking for|were looking for)\b|"
    # "I'd love to see that one": a wish whose object is the item shown is taking it
    r"\b(i|we)('d| would) (like|love) to (watch|see|read|try) (it|that|this|them|those|these)\b",
    re.IGNORECASE,
)
_SMALL_TALK = re.compile(
    r"^\W*((hi|hello|hey|hiya|howdy|yo|greetings|good (morning|afternoon|evening|day))( there)?\W*)?"
    r"(how('?s| is| are) (it going|you|things|your day|everything)( doing| going)?( today)?|what'?s up|how "
    r"do you do|nice to meet you|"
    r"(i )?hope (you'?re|you are) (having|doing) (a )?(good|great|nice|well|fine)( day| one| evening)?|"
    # a compliment to the system: "You're good at this!", "you are very helpful"
    r"(wow,? )?(you'?re|you are) (so |very |really |pretty )?(good|great|awesome|amazing|helpful|smart)"
    r"( at this)?|(good|great|nice) job)?\W*$",
    re.IGNORECASE,
)


# The acts that close a conversation, one part of a message each: thanks, a compliment on the help, a
# courtesy returned, a choice made ("the first one it is", "that works for me"), a plan to watch.
_CLOSING_ACT = re.compile(
    r"\b(thanks|thank you|thx|ty|cheers|(much |greatly |really )?appreciated?|grateful|"
    r"(you'?ve|you have) been (\w+ )?(helpful|great|a (big |great )?help)|(you|that) helped|"
    r"you too|same to you|likewise|"
    r"(it|that) is|it'?ll be|(that )?works for (me|us)|sounds like a plan|(i'?m|i am|we'?re|we are) (off|"
    r"going)"
    r" to (watch|see|read)|(add|put) (it|that|them|those|these|this)( one| ones)? (to|on) (my|our) (\w+ "
    r"?)?list|"
    r"(great|good|nice|perfect|excellent|helpful) (suggestions?|recommendations?|picks?|choices?|ideas?|help|"
    r"start))\b",
    re.IGNORECASE,
)
# What makes a message ask for something even when it thanks or says goodbye: a question, a word that
# asks for more, a wish, or a taste or audience that the next list should follow.
_WISH = re.compile(
    r"\b(i'?d (like|prefer|love|rather)|i want|(how|what) about|maybe|instead|also|prefer|"
    r"(?<!sounds )(?<!looks )(?<!seems )(loves?|likes?|hates?)(?! (it|that|this|them|those|these|the (first|"
    r"second|third|last)|the sound)\b)|"
    r"into|fan of|kids?|son|daughter|wife|husband|years? old|but)\b",
    re.IGNORECASE,
)
# "you?", "Oh really?", "is that so?": a courtesy or a surprise, asking nothing to answer
_COURTESY_QUESTION = re.compile(r"^\W*((and )?(you|yourself|how about you)|(oh,? )?really|"
                                r"is that (so|right|true)|(oh,? )?(yeah|yes|no)|right)\W*$", re.IGNORECASE)


def _real_questions(text: str) -> list[str]:
    return [q for q in re.findall(r"[^.!?]*\?", text) if not _COURTESY_QUESTION.match(q.rstrip("?"))]


def asks_for_anything(text: str) -> bool:
    """Whether a message asks for something new: a question (other than a courtesy returned, "you?"),
    a word asking for more or other items, a wish, or a taste or audience to follow."""
    return bool(_real_questions(text) or _ASKS_FOR_MORE_PLAIN.search(text) or _ASKS_FOR_SOMETHING.search(text)
                or _WISH.search(text) or GENRE_WORD.search(text)
                or (SEEN.search(text) and not _NOT_SEEN.search(text)) or REJECTION.search(text))


def closes(text: str) -> bool:
    """Whether some part of the message performs a closing act: thanks, a goodbye, a choice taken
    ("I'll watch the second one", "Jumanji it is"), a bare approval."""
    return bool(FAREWELL.search(text) or _ONLY_THANKS.match(text) or _CLOSING_ACT.search(text)
                or _TAKES_IT.search(text) or is_approval(text) or words_take(text))


def is_closing(text: str) -> bool:
    """"Thanks, bye", "that's all, thank you", "Cool, thanks. I'll watch it tonight.": a message that
    performs a closing act and asks for nothing new. "thanks, any more like that?" asks for more."""
    if FAREWELL.search(text) and not _real_questions(text) and not _WISH.search(text):
        return True
    if signs_off_at_end(text):  # "Do you only like SciFi? ... Thanks for your help! Bye"
        return True
    return (closes(text) and not asks_for_anything(text)) or signs_off_after_comments(text)


# A goodbye as the message's last words: whatever came before, the user is leaving.
_ENDS_WITH_GOODBYE = re.compile(r"[.!?,]\s*(ok(ay)?,? )?(thanks?( you)?,? )?(bye+( ?bye)?|goodbye|"
                                r"good night|"
                                r"see (you|ya)( later)?|take care|cya|"
                                r"have an? (\w+ ){0,2}(evening|night|day|weekend|one))\W*$|"
                                # "... hope you have a gret day", "I hope your day goes well": a well-wish
                                r"\bhope (you (have|are having|'re having|enjoy)|your) (an? |the )?"
                                r"(\w+ ){0,2}(evening|night|day|weekend|holidays?|one)( goes well)?\W*$",
                                re.IGNORECASE)


def signs_off_at_end(text: str) -> bool:
    """Whether the message's last words take leave: a goodbye or a well-wish, or thanks for the help after
    remarks or a passing question ("I'll check those out. He's in a few, isn't he? Thanks for your help!")
    when nothing in it asks for more."""
    return bool(_ENDS_WITH_GOODBYE.search(text)) or (
        bool(_ENDS_WITH_THANKS_FOR_HELP.search(text)) and not _ASKS_ON_PLAINLY.search(text))


# Thanks for the help as the last words, after remarks or a passing question: the user is done, unless the
# message also asks for more ("any others? thanks for the help").
_ENDS_WITH_THANKS_FOR_HELP = re.compile(
    r"[.!?,]\s*(ok(ay)?,? )?(thanks?|thank you)( so much| very much| a lot)? for (all )?"
    r"(your |the |all the )?(help(ing)?|assistance|suggestions|recommendations|ideas|advice)\W*$",
    re.IGNORECASE)


# A person often says what they make of the titles before signing off ("Seen it, a fine thriller, but
# long. Many thanks!"): the tastes, genres, "but" and "seen" of those remarks are about what was shown,
# not a wish for the next list. What still asks on is a question, a plain ask for other items, a
# turn-down, or a wish said after the sign-off ("thanks, though I'm more into comedies").
_ASKS_ON_PLAINLY = re.compile(
    r"\b(recommend|suggest|another(?! (all[- ]time )?favou?rite)|others|else|similar|something|anything|"
    r"looking for|please|how about|"
    r"what about|instead|next|prefer|rather|any (more|other)|more (like|of|with|from|please)|"
    r"(can|could|would) you)\b",
    re.IGNORECASE,
)
_SIGN_OFF = (_THANKS, FAREWELL, _TAKES_IT, re.compile(r"\b(i|we) (really )?appreciate\b", re.IGNORECASE))
_THANKS_AGAIN = re.compile(r"\b(thanks|thank you)( so much| very much)? again\b", re.IGNORECASE)


def signs_off_after_comments(text: str) -> bool:
    """Whether a message ends with thanks, a goodbye or taking a title, after remarks that ask for
    nothing: the last sentence signs off and nothing after its last sign-off asks for more."""
    plain = _THANKS_AGAIN.sub("thanks", text)  # "thanks again" is no "again" of a complaint
    if _real_questions(plain) or _ASKS_ON_PLAINLY.search(plain) or REJECTION.search(plain):
        return False
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", plain.strip()) if re.search(r"\w", s)]
    if not sentences:
        return False
    last = sentences[-1]
    signs_off = [m for cue in _SIGN_OFF for m in cue.finditer(last)]
    if len(sentences) > 1 and len(last.split()) <= 3 and not signs_off:
        last = sentences[-2] + " " + last  # "... that I will check out. hopefully soon."
    ends = [m.end() for cue in _SIGN_OFF for m in cue.finditer(last)]
    if not ends:
        return False
    after = last[max(ends):]
    return not (_WISH.search(after) or GENRE_WORD.search(after) or _ASKS_FOR_MORE_PLAIN.search(after))


# "We'll watch with the kids, so something for the whole family please" asks for more.
_ASKS_FOR_SOMETHING = re.compile(r"\b(something|anything|please|looking for|want)\b", re.IGNORECASE)


# Asking the recommender to carry on ("go on", "keep going", "list some", "show me a few"): the wording of a
# request with nothing named, which a learnt reading must never take for a goodbye or a greeting.
_GO_ON = re.compile(r"\b(go on|go ahead|keep (going|them coming)|carry on|continue|"
                    r"list (some|a few|them|more)|show (me|us)|give (me|us)|hit me|let'?s (see|hear))\b",
                    re.IGNORECASE)


def asks_to_go_on(text: str) -> bool:
    """Whether a message asks for the recommending to carry on, or for any items at all."""
    return bool(_GO_ON.search(text) or _ASKS_FOR_MORE_PLAIN.search(text) or _ASKS_FOR_SOMETHING.search(text))


def is_question_form(text: str) -> bool:
    """Whether a message is worded as a question: a question mark, or a wh-word or yes/no opening."""
    return "?" in text or starts_with_wh(text) or is_yes_no_question(text)


def takes_it(text: str) -> bool:
    """"Sounds good, I'll watch it tonight": an acceptance that asks for nothing more."""
    return (bool(_TAKES_IT.search(text)) and not _ASKS_FOR_MORE_PLAIN.search(text) and "?" not in text
            and not _ASKS_FOR_SOMETHING.search(text))


def is_small_talk(text: str) -> bool:
    """"Hey, how's it going?", "hello there": nothing asked for yet."""
    return bool(text.strip()) and bool(_SMALL_TALK.match(text))


# A question about the system itself, not about an item it showed: how it picks, where its titles come
# from, whether a person answers. "you" (or "this app") must be what is asked about: "how does it end?" is
# about an item, and "how did you choose those?" asks why this list (the "why" answer of `question_aspect`).
_ABOUT_SYSTEM = re.compile(
    r"\bhow (?:do|does|would|can) (?:you|this (?:app|site|system|thing|bot)|the (?:app|system|bot))\s+"
    r"(?:\w+\s+){0,2}?(?:pick|choos|select|find|decid|come up with|get|mak|recommend|suggest|work|know)\w*\b|"
    r"\bwhere (?:do|did|does) (?:all\s+(?:of\s+)?)?(?:these|those|they|the (?:picks|recommendations|"
    r"suggestions|titles|films|movies|books|ideas))\s+(?:\w+\s+)?come from\b|"
    r"\bwhere (?:do|did) you (?:get|find|take) (?:these|those|them|your|the)\b|"
    r"\b(?:are you|am i (?:talking|chatting|speaking) (?:to|with)|is this)\s+(?:just\s+)?(?:a |an )?"
    r"(?:real )?(?:bot|robot|human|person|people|ai|machine|computer|program|chatbot|real)\b|"
    r"\bwho (?:made|built|created|programmed|runs) (?:you|this)\b|"
    r"\bwhat (?:do|did) you base (?:these|those|them|your \w+|it) on\b",
    re.IGNORECASE)


def asks_about_system(text: str) -> bool:
    """"how do you pick these?", "are you a bot?", "where do these come from?": a question about the
    recommender itself (answered with how it works), even right after a list."""
    return bool(_ABOUT_SYSTEM.search(text))


# Words that make a statement a request or a taste, not small talk ("I love dinosaurs", "the kids are 7").
_ASKS_OR_TASTE = re.compile(
    r"\b(recommend|suggest|want|wanna|like|liked|love|loved|enjoy(ed)?|into|fan|favou?rite|prefer|mood|"
    r"looking for|need|something|anything|another|more|others?|ideas?|options?|else|watch|read|see|"
    r"kids?|children|son|daughter|family|years? old|please|pls|plz|give|show|find|got|how about|what about|"
    r"adventures?|music)\b|\d", re.IGNORECASE)


def is_chatter(text: str) -> bool:
    """"ugh, long day at work", "so bored tonight": a statement that asks for nothing and names no
    genre, kind of item or taste. Only the caller knows whether it also names a title or a person,
    and whether anything was shown yet (after a list, "he owns that one" is about the list)."""
    return (bool(text.strip()) and not is_question(text) and not _ASKS_OR_TASTE.search(text)
            and not GENRE_WORD.search(text) and not any(p.search(text) for _, p in KINDS))


def is_shrug(text: str) -> bool:
    return bool(_SHRUG.match(text))


def is_correction(text: str) -> bool:
    return bool(_CORRECTION.search(text)) and not _ASKS_FOR_MORE.search(text)


# A plain no: "seen it, loved it" is no turn-down, "not for me" and "didn't like it" are.
_PLAIN_NO = re.compile(
    r"\b(not (for me|my thing|that)|no thanks|didn'?t like|don'?t like|hated?|dislike[ds]?|"
    r"not interested|boring)\b",
    re.IGNORECASE,
)


def turns_down(text: str) -> bool:
    """Whether the text turns something down in plain words."""
    return bool(_PLAIN_NO.search(text))


# "i liked that one! have you seen Girls Trip": a question typed without its question mark.
_UNMARKED_QUESTION = re.compile(r"(^|[.!?]\s+)((have|did) you (ever )?(seen|watched|heard of|see|watch)\b"
                                r"[^.!?]*?)\s*([.!]|$)", re.IGNORECASE)
# "Is it PG", "how you rate it": a whole message worded as a question, typed without its mark.
_UNMARKED_WHOLE = re.compile(r"^\s*((is|are|was|were|does|do|did|can|could|would|will|how|who|when|which|"
                             r"where|why|what(?! a\b))\b(?!n't|'t|\s+not\b)[^.!?]*?)\s*$", re.IGNORECASE)


# "Do you think it is kind of like Trolls?", "Is that like Akira?", "is the first one anything like Up?": a
# question setting the item referred to beside a title (the match ends at "like").
_LIKENS_REFERRED = re.compile(
    r"(\b(is|was|does|would|are)\s+(?P<a>it|that|this|that one|this one|they|those|these|the (first|second|"
    r"third|last) one)\s+(\w+\s+)?|\b(do you think|would you say)\s+(?P<b>it|that|this|that one|this one|"
    r"they|those|these|the (first|second|third|last) one)\s*('s|is|was|are)\s+)"
    r"(kind of |sort of |a bit |anything |at all |much |similar to |really )?(like|similar to)\b",
    re.IGNORECASE)


# The words between two titles of "Is The Fourth Kind similar to The Sixth Sense?" ("(2009)" may stand first).
_LIKENED_BETWEEN = re.compile(r"^\s*(\(\d{4}\)\s*)?(is |was |are )?(really |at all )?"
                              r"(anything |kind of |sort of |a bit |much |at all )?"
                              r"(like|similar to|as good as|the same as)\s*$", re.IGNORECASE)
_LIKENS_OPENING = re.compile(r"^\W*((hmm+|so|and|ok(ay)?|well),?\s+)?(is|was|would you say|do you think)\b",
                             re.IGNORECASE)


def likens_two(text: str, between: str) -> bool:
    """Whether a question sets one title it names beside another: "Is <A> similar to <B>?" (`between`:
    the words between the two)."""
    return "?" in text and bool(_LIKENS_OPENING.match(text)) and bool(_LIKENED_BETWEEN.match(between))


def likens_referred(text: str) -> Optional[re.Match]:
    """The span of a question that likens the item referred to to a title named after it, or None."""
    return _LIKENS_REFERRED.search(text) if "?" in text else None


def with_question_marks(text: str) -> str:
    """The message with a question mark where a sentence opening "have you seen", or a whole message
    worded as a question ("Is it PG"), lacks one."""
    if _UNMARKED_WHOLE.match(text):
        return text.rstrip() + "?"
    return _UNMARKED_QUESTION.sub(lambda m: m.group(1) + m.group(2) + "?", text)


def is_question(text: str) -> bool:
    return "?" in text or bool(_QUESTION_START.match(text))


_YES_NO = re.compile(
    r"^\W*(is|are|was|were|would|will|could|does|do you think|should)\b[^?]*\?\W*$", re.IGNORECASE
)


def is_yes_no_question(text: str) -> bool:
    """"Is Zootopia too scary for her?": a question whatever turn-down words it holds."""
    return bool(_YES_NO.match(_INTERJECTION.sub("", text, count=1) or text))


def starts_with_wh(text: str) -> bool:
    """"Who wrote ...?", "What is ... about?": a question whatever else the message says."""
    return bool(_WH_START.match(text))


# "Any mystery books written before 2000?" asks for items, whatever word of an aspect it holds.
_ASKS_FOR_ITEMS = re.compile(
    r"\b(recommend|suggest|suggestions|recommendations|ideas|similar|other|another|more|else|"
    r"any \w+ (by|with|like))\b|"
    r"^\W*(any|anything|something|got any|do you have any)\b(?! idea)|"
    r"[,;:.!?]\s+(anything|something)\b(?! about)|"
    # "What should we put on next?": what to watch is asked, not a fact of the title named before it.
    r"\bwhat (should|shall|can|could|do you think) (i|we|my \w+) (watch|see|put on|try|stream|rent)\b|"
    r"\bwhat to (watch|see|put on)\b",
    re.IGNORECASE,
)


# "Who else stars in ...?", "Who is in the cast of ...?": asks about an item, whatever "else" says.
_ABOUT_AN_ITEM = re.compile(
    r"^\W*(who|when|what year|how (well|long|old)|(is|are|was|does)\s+(?!there\b|any|some)|"
    r"tell me (a (little )?bit |a little |some(thing)? )?(more )?about|"
    r"tell me the|(give me )?(some |more )*(info|information|details) (on|about))\b(?!.*\b(recommend|"
    r"suggest)\b)",
    re.IGNORECASE,
)


# "Hmm, is it ...?", "So who directed it?": a word before the question changes nothing.
_INTERJECTION = re.compile(
    r"^\W*(hmm+|hm+|well|ok(ay)?|so|oh|ah|and|alright|right|cool|nice|great|no|nope|yes|"
    r"yeah|yep|please)\b\W*",
    re.IGNORECASE,
)


def question_aspect(text: str) -> Optional[str]:
    """The aspect a question asks about ("plot", "director", ...), or None for no question about an item
    ("could you recommend books by the author of ...?" asks for items)."""
    text = _INTERJECTION.sub("", text, count=1) or text
    if not is_question(text):
        return None
    if _WHY.search(text):  # "why do you recommend these?" asks about the list, whatever "recommend" says
        return "why"
    if _ASKS_FOR_ITEMS.search(text) and not ASPECTS[0][1].search(text) and not _ABOUT_AN_ITEM.match(text):
        return None
    for aspect, pattern in ASPECTS:
        if pattern.search(text):
            return aspect
    return None


# A question that asks for items, not about one: "what about a comedy?", "is there anything newer?".
_ASKS_FOR_OTHER_ITEMS = re.compile(
    r"\b(what about|how about|is there|are there|got|have you got|do you have|"
    r"can you (recommend|suggest|find|show)|give me|show me|need|want|"
    r"(something|anything|one|ones) (else|similar|newer|older|more|less|with|without|"
    r"from|like))\b",
    re.IGNORECASE,
)


def question_sentence(text: str) -> Optional[str]:
    """The last sentence of the message that ends in a question mark ("I haven't seen that one. Who else
    stars in it?" asks its question in the second), or None."""
    found = re.findall(r"[^.!?]*\?", text or "")
    return found[-1].strip() if found else None


def open_question(text: str) -> bool:
    """Whether a question asks about something already in the conversation rather than for new items,
    though no aspect of `ASPECTS` names what it asks ("How was it?", "does anyone die in those?",
    "what do you think of Big Hero 6?"). The caller checks that it points at an item."""
    asked = question_sentence(text)
    if asked is None and not _WH_START.match(text or ""):
        return False
    asked = _INTERJECTION.sub("", asked or text, count=1) or asked or text
    return not (_ASKS_FOR_ITEMS.search(asked) or _ASKS_FOR_OTHER_ITEMS.search(asked)
                or re.search(r"\b(recommend|suggest)", asked, re.IGNORECASE))


def pointed_index(text: str) -> Optional[int]:
    """The position in the last shown list that "the second one" points at (-1: the last)."""
    match = _ORDINAL.search(text)
    if match:
        return ORDINALS[match.group(2).lower()]
    numbered = _NUMBERED.search(text)
    if not numbered:
        return None
    said = numbered.group(1).lower()
    return (_NUMBER_WORDS[said] if said in _NUMBER_WORDS else int(said)) - 1


def points_back(text: str) -> bool:
    return bool(_POINTER.search(text)) or pointed_index(text) is not None


def rule_intents(text: str) -> list[str]:
    """IARD intents of one user message, by rules."""
    intents = []
    if question_aspect(text) is not None:
        intents.append("INQ")
    if SEEN.search(text) and not _NOT_SEEN.search(text):
        intents.append("SEE")
    if REJECTION.search(text):
        intents.append("REJ")
    if ACCEPTANCE.search(text) and "REJ" not in intents:
        intents.append("ACC")
    if not intents:
        intents.append("PRO")
    return intents


class RuleActReader:
    """IARD intents of the dialogue's last utterance, by rules (an `IntentReader`)."""

    label = "rule-based act reader"

    def __call__(self, dialogue: Dialogue) -> list[str]:
        if not dialogue.utterances or dialogue.utterances[-1].role != Role.USER:
            return []
        return rule_intents(dialogue.utterances[-1].text)

# -- Decisions in parts of one utterance ---------------------------------------------------------
# Whether a message takes one item and turns another down ("Did not like Knocked Up but will check out
# When Harry Met Sally"): the coherence rule (`arena.reading.intents`) then lets Accept stand with
# Reject. These cues read one part at a time, so they are narrower than REJECTION and ACCEPTANCE above,
# which also read asking for something else ("anything else?") as turning the shown items down.
# Where one decision ends and the next may start: "..." joining messages, sentence ends, contrast words.
_PART_BREAK = re.compile(r"\.{2,}|\u2026|[.!?;]+(?=\s|$)|,?\s+\b(?:but|although|though|however|whereas)\b",
                         re.IGNORECASE)
# A part that turns an item down: "didn't really like it", "not interested in Rocky", "I'll pass on that".
_PART_TURNS_DOWN = re.compile(
    r"\b(didn'?t|did not|don'?t|do not|wasn'?t|was not|isn'?t|is not|not|never)\s+(really\s+|too\s+|that\s+|"
    r"very\s+|"
    r"much\s+|a\s+|big\s+|huge\s+)*(like|liked|care for|enjoy|enjoyed|fond|into|interested|up for|fan|"
    r"my (thing|type|style|taste|cup of tea)|for me|impressed)\b|"
    r"\b(don'?t|do not) think (i'?d|i would|i'?ll|i will) (like|enjoy)\b|"
    r"\b(hate[ds]?|dislike[ds]?|overrated|boring|pass on|maybe not|no thanks)\b|"
    r"\b(i'?ll|i will|i'?d|i would|gonna) (pass|skip)\b",
    re.IGNORECASE,
)
# A part that takes an item: "I'll have to check that one out", "sounds really good", "interested in X";
# "will check out X" at the start of a part has its subject left out ("Did not like Y but will check out X").
_PART_TAKES = re.compile(
    r"^\W*will\s+(definitely\s+|probably\s+|also\s+)*(check|watch|look into|add|give it a)\b|"
    r"\b(i'?ll|i will|i'?m going to|gonna|going to|have to|need to|got to|gotta|want to|wanna|would like to|"
    r"i'?d like to|might|may|should|definitely|must)\s+(definitely\s+|probably\s+|really\s+|have to\s+|"
    r"also\s+|"
    r"give it a\s+)*(watch|see|check|look into|look (it|that|them|those) up|look for|give|try|add|go with|"
    # "I need to see a good movie" asks for one
    r"take)\b(?!\s+(a|an|some|something|anything|any|another|more|new|good)\b)|"
    r"\b(sounds?|looks?|looked|seems?)\s+(really\s+|very\s+|pretty\s+|so\s+)?(good|great|cool|interesting|fun|"
    r"awesome|amazing|nice|promising|perfect)\b|"
    r"\b(interested in|good (one|choice|pick|idea|suggestion|recommendation)|"
    r"great (one|choice|pick|idea|suggestion|recommendation)|worth (watching|a (try|watch|look))|"
    r"on my (list|watch ?list)|yet to see|(may|might|could) be (a )?good)\b",
    re.IGNORECASE,
)
# A take counts unless the word before it negates it ("not interested in", "don't really want to see").
_NEGATED = re.compile(
    r"\b(not|no|never|(do|does|did|wo|would|ca|could|is|was|are|were|have|has|should)n'?t)\s+"
    r"((really|even|too|that|so)\s+)?$",
    re.IGNORECASE,
)
# "the other two", "the first one": an item told apart from another.
_OTHER_ITEM = re.compile(r"\b(the )?(" + "|".join(["other", "latter", "former", *ORDINALS]) +
                         r")( one| ones| two| three)?\b", re.IGNORECASE)


def parts_of(text: str) -> list[str]:
    """The utterance's parts that may each carry a decision of their own."""
    return [p.strip() for p in _PART_BREAK.split(text or "") if p and p.strip()]


def part_at(text: str, position: int) -> str:
    """The part of `text` (as `parts_of` cuts it) that holds `position`."""
    start = 0
    for cut in _PART_BREAK.finditer(text or ""):
        if cut.start() > position:
            return text[start:cut.start()]
        start = cut.end()
    return text[start:]


def part_takes(part: str) -> bool:
    """Whether a part takes what it names and turns nothing down ("but I'll watch The Shawshank
    Redemption")."""
    return _takes(part) and not _PART_TURNS_DOWN.search(part)


def praises_only(text: str) -> bool:
    """Whether some part of `text` takes what was shown and none turns anything down ("Good pick.
    Anything else in that vein?" asks for more of the same, it turns nothing down)."""
    parts = parts_of(text)
    return (any(part_takes(p) or _PRAISE.search(p) for p in parts)
            and not any(_PART_TURNS_DOWN.search(p) for p in parts))


_PRAISE = re.compile(r"\b(good|great|nice|excellent|cool|solid|perfect|brilliant|awesome|lovely) "
                     r"(one|choice|pick|idea|suggestion|call|find)\b", re.IGNORECASE)


# A bare approval of what was just shown: "great", "perfect!", "awesome, good pick".
_APPROVAL = re.compile(
    r"^\W*((great|perfect|awesome|brilliant|excellent|fantastic|lovely|nice|cool|sweet|superb|"
    r"wonderful|amazing|ace|splendid)( one| choice| pick| stuff)?[\s,.!]*)+\W*$",
    re.IGNORECASE,
)


def is_approval(text: str) -> bool:
    return bool(_APPROVAL.match(text or ""))


def words_take(text: str) -> bool:
    """Whether a message's words take an item: a part that takes one and turns nothing down ("I'll try
    it out!", "Not Rocky, but I'll watch Creed"), or a bare approval ("perfect!")."""
    return is_approval(text) or any(part_takes(part) for part in parts_of(text))


def _takes(part: str) -> bool:
    return any(not _NEGATED.search(part[:m.start()]) for m in _PART_TAKES.finditer(part))


def decisions_apart(text: str) -> bool:
    """Whether one part of `text` turns something down and another takes something, neither doing both."""
    down = take = False
    for part in parts_of(text):
        d, t = bool(_PART_TURNS_DOWN.search(part)), _takes(part)
        down, take = down or (d and not t), take or (t and not d)
    return down and take


def names_different_items(text: str, titles: int = 0) -> bool:
    """Whether `text` names two distinct items: `titles` (distinct titles found in it) >= 2, or "the
    other two" / an ordinal beside a title or a pointer ("Not interested in Rocky but the other two")."""
    if titles >= 2:
        return True
    other = _OTHER_ITEM.search(text or "")
    if other is None:
        return False
    rest = text[:other.start()] + text[other.end():]
    return titles >= 1 or bool(_POINTER.search(rest))


# A question whose subject is an item not yet shown ("Maybe a movie that stars Keanu Reeves?", "any
# film directed by Nolan?", "something with Tom Hanks?"): it asks for items with that field, not
# about a shown item's field.
_AN_ITEM_ASKED = re.compile(
    r"^\W*(?:(?:maybe|perhaps|or|and|ok(?:ay)?|so|how about|what about|is there|are there)\W+)*"
    r"(?:(?:a|an|any|some|another|other)\s+(?:[\w'-]+\s+){0,2}?(?:movies?|films?|flicks?|ones?|books?|shows?|"
    r"series|titles?)\b(?!\s+(?:is|was)\b)|(?:something|anything)\b)"
    # "can you give me a true story instead?": asked to hand over an item, whatever field it names
    r"|\b(?:give|show|find|get|bring) (?:me|us) (?:a|an|some|another|any|one)\b"
    r"|\b(?:recommend|suggest)\w* (?:me |us )?(?:a|an|some|another|any|one)\b",
    re.IGNORECASE,
)
# The subject of a clause that points back at what was shown: "those aren't ...", "it's not ...".
_CLAUSE_POINTS_BACK = re.compile(
    r"^\W*(?:(?:and|but|so|no|well|sorry|hmm+)\W+)*(?:it|that|this|those|these|they|them|that one|this one|"
    r"all of them|none of them|the (?:first|second|third|last|other) one)\b",
    re.IGNORECASE,
)
# A negation of knowing, not of liking: "never heard of that one", "haven't seen it".
_UNFAMILIAR = re.compile(r"^\W*(?:\w+\W+)?(?:heard of|seen|watched|know|knew)\b", re.IGNORECASE)


# "anything else?", "something else that's recent?": more of the same search, nothing turned down.
_ONLY_OTHERS = re.compile(r"^\W*(?:ok(?:ay)?\W+|and\W+|so\W+)?(?:any|some)(?:thing|one)? else\b(?!.*\b(?:not|"
                          r"don'?t|didn'?t|hate|boring|seen|watched)\b)", re.IGNORECASE)


def asks_only_for_others(text: str) -> bool:
    """Whether a message that reads as a turn-down only asks for other titles ("anything else?")."""
    return bool(_ONLY_OTHERS.search(text))


# "can you give me some details about these films?": about the items shown, whatever "give me some" says.
_ABOUT_THE_SHOWN = re.compile(r"\b(details|info|information|more|a bit|something) (about|on|of) (these|"
                              r"those|them|the (films?|movies?|ones?|titles?|picks?|list)|each( one)?|"
                              r"all of them)\b",
                              re.IGNORECASE)


def asks_for_an_item(text: str) -> bool:
    """Whether a question asks for an item by a field ("a movie that stars X?") rather than about one."""
    if _ABOUT_THE_SHOWN.search(text or ""):
        return False
    return bool(_AN_ITEM_ASKED.search(_INTERJECTION.sub("", text or "", count=1) or text or ""))


def clause_points_back(clause: str) -> bool:
    """Whether a clause's subject is what was shown ("those are too old", "it's not for me")."""
    return bool(_CLAUSE_POINTS_BACK.match(clause))


def unfamiliar_after(words: str) -> bool:
    """Whether the words after a negation say the user does not know a title ("never heard of it")."""
    return bool(_UNFAMILIAR.match(words))


# "What is a romance film?", "what does film noir mean?", "what are westerns?": what a kind of film is.
_DEFINITION = re.compile(
    r"^\W*(?:(?:and|so|ok(?:ay)?|sorry|hmm+|wait)\W+)*"
    r"(?:what(?:'s| is| are) (?:an? )?(?P<a>[\w -]{3,30}?)(?: (?:films?|movies?|genre|stories))?"
    r"|what does (?:an? )?(?P<b>[\w -]{3,30}?) mean|what do you mean by (?:an? )?(?P<c>[\w -]{3,30}?))\W*$",
    re.IGNORECASE,
)


def defined_words(text: str) -> Optional[str]:
    """The words a question asks the meaning of ("romance" of "What is a romance film?"), or None."""
    match = _DEFINITION.match(text or "")
    if not match:
        return None
    return next(g for g in match.group("a", "b", "c") if g)
