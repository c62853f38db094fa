"""Titles a system puts forward without a year, a list or a catalog entry.

Arena systems (ChatCRS above all) name series, albums and books the movie
catalogs do not know ("Dark is a German series...", "Give Portishead's Dummy a
listen"), and people type titles in lower case ("what about the notebook?").
Such a title is only taken when an offer frame surrounds it, so names in
ordinary talk ("I loved Tom Hanks in Big") do not count:

- a frame before it: "what about", "have you seen", "try", "check out",
  "you might like", "give X a listen", ...
- a frame after it, at the start of a clause: "X is a great pick",
  "X is a natural next watch", "X is excellent", "X is worth a try".

A capitalised span is taken as it is; a lower-case span only when it is
exactly a catalog title of two words or more (single lower-case words are too
often genres or everyday words).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from arena.mentions import FUNCTION_WORDS
from arena.title_mentions import Mention
from arena.titles import clean_title, years_in_parens

_BEFORE = re.compile(
    r"\b(?:(?:what|how) about"
    r"|have you (?:ever )?(?:seen|watched|tried|heard of|read|listened to|caught|checked out|played)"
    r"|did you (?:ever )?(?:see|catch|watch|read)"
    r"|(?:try|watch|pick|choice|suggestion|option|recommendation|bet) (?:would be|is|might be)"
    r"|(?:try|check out|consider|recommend|suggest|go with|go for)"
    r"|you (?:might|may|would|will|could|should|'d|'ll) (?:also |really |probably |definitely )?"
    r"(?:like|enjoy|love|dig|appreciate|want to (?:watch|see|try|check out)))\s+",
    re.IGNORECASE,
)
_QUESTION_FRAME = re.compile(r"(?:what|how) about|have you|did you", re.IGNORECASE)
_GIVE = re.compile(r"\bgive\s+", re.IGNORECASE)
_GIVE_TAIL = re.compile(r"\s+an? (?:listen|try|watch|go|shot|spin|read|look|chance)\b", re.IGNORECASE)
_AFTER = re.compile(
    r"\s+(?:(?:is|could be|would be|might be|should be)\s+(?:also |definitely |really |still |probably )?"
    r"(?:(?:an?|the|my)\s+(?:[\w-]+,?\s+){0,5}?(?:choice|pick|watch|option|series|show|film|movie|album|book|"
    r"read|listen|follow-up|follow up|classic|game|podcast|novel|documentary|comedy|thriller|drama|starting point|place to start|bet|fit|must)\b"
    r"|(?:so |really |very |truly )?(?:excellent|great|fantastic|brilliant|wonderful|perfect|superb|amazing|a must|"
    r"similar|gripping|hilarious|delightful|stunning|beautiful|lovely|charming|gorgeous|moving|heartwarming|underrated|"
    r"a gem|a blast|a treat|a hoot|terrific|riveting|haunting|fun|warm|funny|uplifting|sweet|smart|clever|tense|"
    r"thrilling|exciting|touching|fresh|wild|unforgettable|epic|addictive|bingeable|cozy|charming)\b"
    r"|(?:well |definitely |really )?worth)"
    r"|is (?:often |widely |usually )?(?:called|considered|seen as|rated)\b|is (?:one of|among) the (?:best|greatest|most|finest)\b"
    r"|(?:has|had) (?:the same|a similar|that same)\b|works (?:well|great|nicely) (?:as|for)\b"
    r"|(?:would|should|might|could) (?:suit|fit|scratch|work for)\b)",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(r"(?:^|[.!?;:,]\s+|\b(?:and|but|then|also|maybe|perhaps)\s+)$", re.IGNORECASE)
_TOKEN = re.compile(r"[\w'’&:-]+")
_CONNECTORS = {"of", "the", "a", "an", "and", "in", "on", "to", "for", "from", "by", "&", "-", "de", "la"}
_NOT_TITLES = {
    "i", "it", "its", "it's", "that", "this", "these", "those", "you", "we", "they", "he", "she", "there",
    "here", "what", "which", "how", "if", "yes", "no", "ok", "okay", "sure", "something", "anything",
    "one", "some", "any", "another", "more", "other", "netflix", "hulu", "amazon", "disney", "hbo",
    "youtube", "spotify", "comedy", "comedies", "horror", "drama", "dramas", "thrillers", "action", "romance",
    "animation", "anime", "documentaries", "westerns", "musicals", "sci-fi", "fantasy", "pixar", "marvel", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
}
_PRONOUNS = {"it", "this", "that", "they", "we", "you", "i", "he", "she", "there", "here", "what", "one", "some"}
_GENRES = {"romance", "drama", "action", "thriller", "thrillers", "mystery", "documentary", "adventure", "war", "crime",
           "family", "musical", "western", "sports", "music", "history", "biography", "animation", "kids", "teen",
           "comedy", "horror", "fantasy", "superheroes", "cartoons", "classics", "noir", "zombies", "vampires"}
_PLATFORMS = {"netflix", "hulu", "prime", "amazon", "disney", "disney+", "hbo", "max", "youtube", "spotify", "apple",
              "peacock", "paramount", "kindle", "audible", "steam", "switch", "playstation", "xbox"}
_MAKER = re.compile(r"^(?:(?:'s|’s|')\s+(?:\w+\s+)?(?:work|works|stuff)\b"
                    r"|(?:'s|’s|')?\s+(?:\w+\s+)?(?:movies|films|shows|books|albums|music|songs|"
                    r"filmography|catalog|catalogue|discography|novels)\b)", re.IGNORECASE)
_LOWER_STOP = {"it's", "which", "since", "because", "if", "with", "by", "for", "instead", "too", "then",
               "maybe", "or", "is", "was", "as", "so", "but", "now", "tonight", "next", "first", "again"}
_LOWER_BAD_START = {"something", "anything", "some", "any", "more", "other", "another", "one", "ones",
                    "movies", "films", "a", "an", "it", "that", "this", "those", "these", "them", "me", "my",
                    "your", "you", "watching", "seeing"}


def cut_short(text: str, mention: Mention) -> bool:
    """A catalog link that is only the start of a longer name ("Ted" in "Ted Lasso")."""
    linked = text[mention.start:mention.end]
    if mention.source != "catalog" or mention.start < 0 or next(years_in_parens(linked), None) is not None:
        return False
    return re.match(r" [A-Z][a-z]", text[mention.end:mention.end + 3]) is not None


def offer_mentions(text: str, linker: Optional[Any] = None, taken: list[Mention] = ()) -> list[Mention]:
    """Titles offered in `text` that no mention in `taken` already covers."""
    found: list[Mention] = []
    for m in _BEFORE.finditer(text):
        found.extend(_span_after(text, m.end(), linker, question=bool(_QUESTION_FRAME.match(m.group()))))
    for m in _GIVE.finditer(text):
        span = _capitalised_at(text, m.end())
        if span and _GIVE_TAIL.match(text, span[1]):
            found.append(_mention(text, *span))
    for m in _AFTER.finditer(text):
        span = _capitalised_before(text, m.start())
        if span:
            found.append(_mention(text, *span))
        else:
            found.extend(_lower_case_before(text, m.start(), linker))
    out: list[Mention] = []
    for mention in found:
        if any(k.start < mention.end and mention.start < k.end for k in [*taken, *out]):
            continue
        if mention.source == "offer" and _names_person(linker, text[mention.start:mention.end]):
            continue  # "what about Christopher Nolan?" asks about a director
        out.append(mention)
    return out


def _names_person(linker: Optional[Any], phrase: str) -> bool:
    check = getattr(linker, "is_person_or_attribute", None)
    try:
        return bool(check and check(phrase))
    except Exception:  # a catalog problem must not stop annotation
        return False


def _mention(text: str, start: int, end: int) -> Mention:
    return Mention(title=text[start:end].strip(" '\"“”‘’"), start=start, end=end, source="offer")


_KIND = re.compile(r"(?:the |this |that )?(?:series|show|film|movie|book|novel|album|game|documentary|podcast)\s+",
                   re.IGNORECASE)


def _span_after(text: str, pos: int, linker: Optional[Any], question: bool = False) -> list[Mention]:
    kind = _KIND.match(text, pos)  # "try the series Dark"
    if kind and _capitalised_at(text, kind.end()):
        pos = kind.end()
    span = _capitalised_at(text, pos)
    if span:
        return [_mention(text, *span)]
    if linker is None or not hasattr(linker, "exact_title"):
        return []
    words = list(_TOKEN.finditer(text, pos))[:7]
    words = [w for w in words if not text[pos:w.start()].strip(" \"'“”‘’") or w.start() == pos][:1] + words[1:]
    if not words or words[0].start() - pos > 2 or words[0].group().lower() in _LOWER_BAD_START:
        return []
    if len(words) > 1 and words[1].group().lower() in ("following", "same", "other", "best", "first", "last"):
        return []  # "recommend the following items", "try the same", "what about the other one"
    # Longest run of words without punctuation between them, then shorter prefixes.
    run = [words[0]]
    for w in words[1:]:
        if not re.fullmatch(r"\s+", text[run[-1].end():w.start()]) or w.group().lower() in _LOWER_STOP:
            break
        run.append(w)
    for n in range(len(run), 1, -1):
        start, end = run[0].start(), run[n - 1].end()
        item = linker.exact_title(text[start:end])
        if item is not None:
            return [Mention(title=item.label, start=start, end=end, source="offer")]
    # "what about jaws?": one lower-case word, only as the whole object of a question frame.
    word = run[0].group()
    ends = re.match(r"\s*(?:[?.!]|$)", text[run[0].end():])
    if question and ends and word.lower() not in _NOT_TITLES | _GENRES | FUNCTION_WORDS and len(word) >= 3:
        item = linker.exact_title(word)
        if item is not None:
            return [Mention(title=item.label, start=run[0].start(), end=run[0].end(), source="offer")]
    return []


def _capitalised_at(text: str, pos: int) -> Optional[tuple[int, int]]:
    """A run of capitalised words (connectors allowed inside) starting at `pos`."""
    quote = re.match(r"[\"“‘']", text[pos:pos + 1])
    if quote:
        close = re.search(r"[\"”’']", text[pos + 1:pos + 80])
        if close:
            return (pos + 1, pos + 1 + close.start()) if close.start() > 0 else None
    tokens = []
    for w in _TOKEN.finditer(text, pos):
        gap = text[(tokens[-1].end() if tokens else pos):w.start()]
        if tokens and not re.fullmatch(r"\s+", gap) or (not tokens and gap.strip()):
            break
        word = w.group()
        if tokens and tokens[-1].group().lower() in _CONNECTORS and word.lower() in _PLATFORMS:
            break  # "Dark on Netflix"
        if word[0].isupper() or word[0].isdigit():
            tokens.append(w)
        elif tokens and word.lower() in _CONNECTORS:
            tokens.append(w)
        else:
            break
        if len(tokens) >= 8:
            break
    while tokens and tokens[-1].group().lower() in _CONNECTORS:
        tokens.pop()
    if not tokens or not _plausible(text, tokens):
        return None
    return tokens[0].start(), tokens[-1].end()


def _lower_case_before(text: str, end: int, linker: Optional[Any]) -> list[Mention]:
    """"how i met your mother is very similar": the clause up to the frame, if it is exactly a catalog title."""
    if linker is None or not hasattr(linker, "exact_title"):
        return []
    start = max((m.end() for m in re.finditer(r"[.!?;:,]\s+", text[:end])), default=0)
    phrase = text[start:end].strip()
    if len(phrase.split()) < 2 or len(phrase.split()) > 8:
        return []
    item = linker.exact_title(phrase)
    if item is None:
        return []
    begin = text.index(phrase, start)
    return [Mention(title=item.label, start=begin, end=begin + len(phrase), source="offer")]


def _capitalised_before(text: str, end: int) -> Optional[tuple[int, int]]:
    """A run of capitalised words ending at `end` that opens a clause ("..., Better Call Saul is")."""
    tokens = list(_TOKEN.finditer(text[:end]))
    start_index = None
    for k in range(len(tokens) - 1, max(-1, len(tokens) - 9), -1):
        word = tokens[k].group()
        if k < len(tokens) - 1 and not re.fullmatch(r"\s+", text[tokens[k].end():tokens[k + 1].start()]):
            break
        if word[0].isupper() or word[0].isdigit():
            start_index = k
        elif word.lower() not in _CONNECTORS:
            break
    if start_index is None:
        return None
    run = tokens[start_index:]
    while run and run[0].group() in _CONNECTORS:  # lower-case "of", not "The"
        run = run[1:]
    if not run or run[-1].end() != end or not _CLAUSE_START.search(text[:run[0].start()]):
        return None
    if not _plausible(text, run):
        return None
    return run[0].start(), run[-1].end()


def _plausible(text: str, tokens: list) -> bool:
    words = [t.group().lower().rstrip("'’s") if t.group().lower().endswith(("'s", "’s")) else t.group().lower()
             for t in tokens]
    # "It Takes Two", "This Is Us": a pronoun opens a title only when capitals follow it.
    opener_ok = len(tokens) > 1 and tokens[1].group()[:1].isupper() and words[0] in _PRONOUNS
    if (words[0] in _NOT_TITLES and not opener_ok) or all(w in _NOT_TITLES or w in _CONNECTORS for w in words):
        return False
    return not _MAKER.match(text[tokens[-1].end():])


def echoed_mentions(text: str, offered: list[Mention], taken: list[Mention] = ()) -> list[Mention]:
    """Titles the system just offered, repeated by the user in any case ("ok district 9 then")."""
    out: list[Mention] = []
    for offer in offered:
        bare = clean_title(offer.title)
        if len(bare) < 2:
            continue
        # Short titles ("Up", "It") only as written by the system, capitals included.
        flags = re.IGNORECASE if len(bare) >= 4 else 0
        for m in re.finditer(r"(?<!\w)" + re.escape(bare) + r"(?!\w)", text, flags=flags):
            if not any(k.start < m.end() and m.start() < k.end for k in [*taken, *out]):
                out.append(Mention(title=offer.title, start=m.start(), end=m.end(), source="echo"))
    return out
