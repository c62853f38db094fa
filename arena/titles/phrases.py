"""Matching known names (titles, people, genres) in free text: the phrase matcher under catalog linking.

Used by `arena.catalogs.catalog`: a `PhraseIndex` maps normalised phrases to payloads,
and `match_phrases` scans a text's word n-grams against one or more indexes,
exactly and (for long enough phrases) fuzzily, then keeps the best
non-overlapping spans, longer first.

Precision matters more than recall here: a title that is made only of
ordinary words ("It", "Up", "Frozen", "Get Out") links only when the text
marks it as a name: capitalised (not just because it opens a sentence),
quoted, or followed by a year.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

_TOKEN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|&")
_LOWER_RUN = re.compile(r"(?<![\w'’])[a-z]+(?: [a-z]+)*(?![\w'’])")
_QUOTES = "\"'“”‘’«»`*_"
_SENTENCE_END = ".!?:;\n"
MIN_YEAR, MAX_YEAR = 1870, 2035
FUZZY_MAX_WORDS = 6
# Words that introduce a title: "I saw It", "have you watched Her".
_TITLE_CUES = frozenset(
    "saw seen see watch watched watching loved love liked like enjoyed enjoy hated recommend "
    "recommended try tried called titled about".split()
)

# Closed-class English words: never evidence of a name on their own.
FUNCTION_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves yes ok okay oh hi hello
    hey thanks thank please like love want watch seen see movie movies film films one two three
    something anything everything nothing good great new old big little first last next
    im ive id ill dont didnt doesnt cant wont isnt wasnt arent werent havent hasnt wouldnt couldnt
    shouldnt youre youve youd thats whats theres lets hes shes theyre weve""".split()
)


def fold(word: str) -> str:
    """Lower-case, accent-free, alphanumeric-only form of one token."""
    if word.isascii():
        lowered = word.lower()
        if lowered.isalnum():
            return lowered
        if word == "&":
            return "and"
        return "".join(ch for ch in lowered if ch.isalnum())
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if ch.isalnum() and not unicodedata.combining(ch)).lower()


@dataclass(frozen=True)
class Token:
    norm: str
    raw: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    tokens = []
    for match in _TOKEN_RE.finditer(text):
        norm = fold(match.group())
        if norm:
            tokens.append(Token(norm, match.group(), match.start(), match.end()))
    return tokens


def normalize(text: str) -> str:
    return " ".join(filter(None, map(fold, _TOKEN_RE.findall(text))))


def as_year(token: Token) -> Optional[int]:
    if len(token.norm) == 4 and token.norm.isdigit() and MIN_YEAR <= int(token.norm) <= MAX_YEAR:
        return int(token.norm)
    return None


class Vocabulary:
    """Everyday English, learnt from lower-case running text (plot summaries).

    A phrase is *ordinary* when all its words are everyday words and it is
    either short on content words or seen as such in the text ("get out",
    "the room"); "the dark knight" is made of everyday words but is not an
    everyday phrase, so it links even in lower case. One-word titles are
    judged against a larger word list (`frequent_words`, e.g. the most
    frequent words of a tokenizer vocabulary): "Awesome" or "Click" only
    link when written as names.
    """

    def __init__(self, texts: Iterable[str] = (), min_count: int = 2, frequent_words: Iterable[str] = ()):
        counts: dict[str, int] = {}
        runs = []
        for text in texts:
            for run in _LOWER_RUN.findall(text):
                runs.append(run)
                for word in run.split():
                    counts[word] = counts.get(word, 0) + 1
        self.words = FUNCTION_WORDS | {w for w, n in counts.items() if n >= min_count}
        self.single_words = self.words | frozenset(frequent_words)
        self._corpus = " | " + " | ".join(runs) + " | "

    def is_word(self, word: str) -> bool:
        """An everyday word (not a typo, not a name)?"""
        return word in self.single_words

    def has_rare_word(self, key: str) -> bool:
        return any(w not in self.words and not w.isdigit() and len(w) > 2 for w in key.split())

    def is_ordinary(self, key: str) -> bool:
        words = key.split()
        if len(words) == 1:
            return key in self.single_words or key.isdigit() or len(key) <= 2
        if not all(w in self.words or w.isdigit() or len(w) <= 2 for w in words):
            return False
        content = [w for w in words if w not in FUNCTION_WORDS and not w.isdigit()]
        return len(content) <= 1 or f" {key} " in self._corpus


@dataclass
class PhraseIndex:
    """Normalised phrase -> payloads, with the knobs that decide how it links.

    `guarded`: apply the ordinary-words rule. `fuzzy_min_chars`: phrases at
    least this long are also matched approximately (0 disables fuzzy).
    `vocabulary`: what counts as ordinary words for the guard.
    """

    name: str
    vocabulary: Vocabulary
    guarded: bool = True
    fuzzy_min_chars: int = 0
    fuzzy_cutoff: float = 90.0
    priority: int = 0  # wins ties over lower priorities on the same everyday words
    phrases: dict[str, list[Any]] = field(default_factory=dict)
    _choices: Optional[list[str]] = None
    _max_words: Optional[int] = None
    _prefixes: Optional[frozenset[str]] = None

    def add(self, phrase: str, payload: Any) -> None:
        key = normalize(phrase)
        if key:
            self.add_key(key, payload)

    def add_key(self, key: str, payload: Any) -> None:
        bucket = self.phrases.setdefault(key, [])
        if payload not in bucket:
            bucket.append(payload)
        self._choices = self._max_words = self._prefixes = None

    @property
    def prefixes(self) -> frozenset[str]:
        """Every word-prefix of every phrase, so scanning stops as soon as no phrase fits."""
        if self._prefixes is None:
            found: set[str] = set()
            for key in self.phrases:
                words = key.split()
                found.update(" ".join(words[:n]) for n in range(1, len(words)))
            self._prefixes = frozenset(found)
        return self._prefixes

    @property
    def max_words(self) -> int:
        if self._max_words is None:
            self._max_words = max((k.count(" ") + 1 for k in self.phrases), default=0)
        return self._max_words

    def is_ordinary(self, key: str) -> bool:
        return self.vocabulary.is_ordinary(key)

    def fuzzy_choices(self) -> list[str]:
        if self._choices is None:
            # Only phrases with a rare word are matched approximately: a near miss of
            # "Home for the Holidays" is far more likely everyday talk than a typo.
            self._choices = [
                k for k in self.phrases
                if len(k) >= self.fuzzy_min_chars and self.vocabulary.has_rare_word(k)
            ]
        return self._choices


@dataclass(frozen=True)
class PhraseMatch:
    index: str  # name of the PhraseIndex that matched
    key: str  # the matched phrase (normalised)
    payloads: tuple[Any, ...]
    start: int  # character offsets of the mention in the text (year included)
    end: int
    score: float  # 100 for exact matches
    year: Optional[int]  # a year written right after the mention


def _looks_like_name(text: str, tokens: Sequence[Token], i: int, j: int, shouting: bool) -> bool:
    """Does the text itself mark tokens[i:j] as a name (capitals or quotes)?

    Short titles made only of function words ("It", "Her", "Yes") also need a
    verb like "saw" or "loved" right before them: people capitalise sloppily.
    Lone numbers and one- or two-letter words need quotes or a year.
    """
    first, last = tokens[i], tokens[j - 1]
    before = text[first.start - 1] if first.start > 0 else ""
    after = text[last.end] if last.end < len(text) else ""
    if before and after and before in _QUOTES and after in _QUOTES:
        return True
    if _likened(tokens, i, j):
        return True
    short = len(first.norm) <= 2 and first.norm not in FUNCTION_WORDS
    if shouting or (j - i == 1 and (short or first.norm.isdigit())):
        return False  # "K", "3" or "2010" alone are too easily something else
    for k in range(i, j):
        raw = tokens[k].raw
        if (k == i or len(raw) > 3) and not (raw[0].isupper() or raw[0].isdigit()):
            return False
    if j - i <= 2 and all(t.norm in FUNCTION_WORDS for t in tokens[i:j]):
        return i > 0 and tokens[i - 1].norm in _TITLE_CUES
    if j - i == 1:
        # A lone capitalised word that opens a sentence is no evidence.
        preceding = text[: first.start].rstrip()
        return bool(preceding) and preceding[-1] not in _SENTENCE_END
    return True


# "something like", "movies like", "the most like": "like" as a comparison, after which the words are
# a title's even in lower case ("movies like home alone"); "I like happy endings" is a liking, not one.
_COMPARED = frozenset("something anything movie movies film films one ones stuff show shows book books most "
                      "more similar".split())


def _likened(tokens: Sequence[Token], i: int, j: int) -> bool:
    """Whether tokens[i:j] follow a comparing "like" or "similar to": two words or more, one of them no
    function word, or one longer word ("something similar to interstellar", "movies like frozen")."""
    if i < 2 or not any(t.norm not in FUNCTION_WORDS for t in tokens[i:j]):
        return False
    compared = (tokens[i - 1].norm == "like" and tokens[i - 2].norm in _COMPARED) or (
        tokens[i - 1].norm == "to" and tokens[i - 2].norm == "similar")
    return compared and (j - i >= 2 or len(tokens[i].norm) >= 6)


def _year_after(text: str, tokens: Sequence[Token], j: int) -> Optional[int]:
    if j < len(tokens):
        gap = text[tokens[j - 1].end : tokens[j].start]
        if re.fullmatch(r"\s*[(\[,]?\s*", gap):
            return as_year(tokens[j])
    return None


def match_phrases(
    text: str,
    indexes: Sequence[PhraseIndex],
    max_fuzzy_spans: int = 400,
) -> list[PhraseMatch]:
    """Best non-overlapping mentions of any index's phrases, in text order."""
    tokens = tokenize(text)
    if not tokens:
        return []
    letters = [c for c in text if c.isalpha()]
    shouting = len(letters) > 3 and all(c.isupper() for c in letters)
    candidates: list[tuple[int, int, PhraseMatch, int]] = []  # (i, j_with_year, mention, priority)

    def accept(index: PhraseIndex, key: str, i: int, j: int, score: float) -> None:
        year = _year_after(text, tokens, j)
        if index.guarded and index.is_ordinary(key) and year is None:
            if not _looks_like_name(text, tokens, i, j, shouting):
                return
        end_tok = j + 1 if year is not None else j
        end = tokens[end_tok - 1].end
        if year is not None and end < len(text) and text[end] in ")]":
            end += 1
        mention = PhraseMatch(index.name, key, tuple(index.phrases[key]), tokens[i].start, end, score, year)
        # Priority settles ties only for everyday words: "a Drama" is the genre, "Casablanca" the film.
        candidates.append((i, end_tok, mention, index.priority if index.is_ordinary(key) else 0))

    for index in indexes:
        _exact(index, tokens, accept)
        if index.fuzzy_min_chars and index.fuzzy_choices():
            spans = _fuzzy_spans(tokens, index)
            if spans:
                _fuzzy(index, spans[:max_fuzzy_spans], accept)
    return _non_overlapping(candidates, len(tokens))


def _exact(index: PhraseIndex, tokens: Sequence[Token],
           accept: Callable[[PhraseIndex, str, int, int, float], None]) -> None:
    """Every span of `tokens` that is one of the index's phrases, to `accept` (score 100)."""
    prefixes = index.prefixes
    for i in range(len(tokens)):
        key = tokens[i].norm
        for j in range(i + 1, min(len(tokens), i + index.max_words) + 1):
            if j > i + 1:
                key = f"{key} {tokens[j - 1].norm}"
            if key in index.phrases:
                accept(index, key, i, j, 100.0)
            if key not in prefixes:
                break


def _non_overlapping(candidates: list[tuple[int, int, PhraseMatch, int]], n_tokens: int) -> list[PhraseMatch]:
    """The best candidates that share no token, in text order."""
    # Longest spans first, then better scores, then index priority, then earlier ones.
    candidates.sort(key=lambda c: (-(c[1] - c[0]), -c[2].score, -c[3], c[0]))
    taken = [False] * n_tokens
    chosen: list[PhraseMatch] = []
    for i, j, mention, _ in candidates:
        if not any(taken[i:j]):
            taken[i:j] = [True] * (j - i)
            chosen.append(mention)
    chosen.sort(key=lambda m: m.start)
    return chosen


def _fuzzy_spans(tokens: Sequence[Token], index: PhraseIndex) -> list[tuple[int, int, str]]:
    """Word spans that could be a misspelt title: long enough, with a rare word, and
    neither opening nor closing on a function word (other than a leading article)."""
    spans = []
    for i, first in enumerate(tokens):
        if first.norm in FUNCTION_WORDS and first.norm not in ("the", "a", "an"):
            continue
        key = ""
        for j in range(i + 1, min(len(tokens), i + FUZZY_MAX_WORDS) + 1):
            last = tokens[j - 1].norm
            key = f"{key} {last}" if key else last
            if j - i > 1 and last in FUNCTION_WORDS:
                continue
            if len(key) >= index.fuzzy_min_chars and index.vocabulary.has_rare_word(key):
                spans.append((i, j, key))
    return spans


def _fuzzy(index: PhraseIndex, spans: list[tuple[int, int, str]],
           accept: Callable[[PhraseIndex, str, int, int, float], None]) -> None:
    choices = index.fuzzy_choices()
    scores = process.cdist(
        [key for _, _, key in spans],
        choices,
        scorer=fuzz.ratio,
        score_cutoff=index.fuzzy_cutoff,
        dtype="uint8",
        workers=1,
    )
    for row, (i, j, key) in zip(scores, spans):
        best = int(row.argmax())
        if row[best] == 0:
            continue
        choice = choices[best]
        if _plausible_typo(key, choice, index.vocabulary):
            accept(index, choice, i, j, float(row[best]) - 1.0)


def _plausible_typo(written: str, phrase: str, vocabulary: "Vocabulary") -> bool:
    """Is `written` the phrase with a misspelt or split/joined word, not other words?

    "inceptoin" ~ "inception" and "spiderman homecoming" ~ "spider man homecoming"
    pass; "in the mood for a" ~ "in the mood for love" does not.
    """
    written_words, phrase_words = written.split(), phrase.split()
    if abs(len(written_words) - len(phrase_words)) > 1:
        return False
    extra = [w for w in written_words if w not in phrase_words]
    missing = [w for w in phrase_words if w not in written_words]
    if any(w in FUNCTION_WORDS for w in extra + missing) or any(vocabulary.is_word(w) for w in extra):
        return False
    if not extra and not missing:
        return True
    # Short words differ by one letter from other real words ("mood", "wood").
    written_part, phrase_part = "".join(extra), "".join(missing)
    if min(len(written_part), len(phrase_part)) >= 6 and fuzz.ratio(written_part, phrase_part) >= 85:
        return True
    # A short word one letter off, and no everyday word itself, is a typo when the rest of a long title is
    # written right: "hitchhikers gude to the galaxy" (three of its other words say which title it is).
    kept = [w for w in written_words if w in phrase_words and w not in FUNCTION_WORDS]
    return (len(extra) == len(missing) == 1 and len(written_part) >= 4 and len(kept) >= 2
            and OSA.distance(written_part, phrase_part) == 1)  # a letter dropped, added, changed or swapped


def unique(items: Iterable[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
