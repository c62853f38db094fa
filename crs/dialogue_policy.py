"""The dialogue policy's reading of a conversation: what the user's last message
does, which shown item it is about, and what the conversation rules in or out.

ChatCRS and CRB-CRS both read the dialogue through `DialoguePolicy.read` and act
on the `UserMove` it returns:
- "end": a closing gets a farewell, not a list;
- "question": a question about a shown (or named) item is answered from its
  catalog entry (`crs.item_answers`);
- "reject" / "seen": the items turned down or seen, and their close variants
  (other films of the franchise), are left out, and what was criticised
  ("horror AGAIN?") becomes an unwanted genre;
- "correction" ("Flash Gordon is 1980") and "shrug" ("whatever") ask for nothing
  new, so their words do not steer the recommender;
- "chat" (a greeting, "how's it going?") gets a greeting and a question, no list;
- "accept" ("sounds good, I'll watch it") gets a short follow-up, no list;
- "request": recommend under the constraints (`arena.reading.constraints`: genres,
  people, era, audience, intensity, kind and subjects, each negation kept to what it names);
  "something like <title>" that names no genre asks for one of the title's genres and leaves the
  title's franchise out (`crs.franchises`), and "not a Batman one" keeps out the franchise and every
  entry whose plot names it;
- "chat" also covers chatter before anything was shown ("ugh, long day at work");
- "chat" with the aspect "system": a question about the system itself ("what can you do?") gets what it
  does and an invitation, no list;
- "clarify": a question on a field that refers to nothing the conversation holds ("who directed it?"
  before anything was shown) says what was understood and asks which title, instead of a guess.

The act is settled before any words are made: a question whose subject is an item not yet shown ("maybe
a movie that stars X?") is a request with that constraint; a negation turns the shown list down only
when it is aimed at it ("those aren't it", "not my thing"), while one that qualifies the wish ("spooky
films without the gore", "I don't like westerns") is a constraint of the next list; a question about
"these" is about every shown item; one about a title the catalog lacks says so.

The act comes from an `IntentReader` (the core's reader interface): the project's
learnt act model when the app passes one, else `RuleActReader`; every rule that
reads the words is in `arena.reading`. Where the rules find nothing but a request, the
message-act reader (`arena.reading.message_acts`, a learnt reading of the message's meaning) may
replace it with an act the state allows (`_learnt_act`). Closings, small talk, corrections and
shrugs have no IARD user intent and are read by rules, and a turn-down needs a
word that turns something down whatever the model says.
`ranking_dialogue` is the conversation as the recommender should read it: the
user's messages without questions, closings, corrections, shrugs and the
complaining half of complaints.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Optional, Sequence

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.dialogue import Dialogue, Role
from arena.conversation.dialogue_state import DialogueState, MentionedItem, ShownItem, liked_lately
from arena.titles.phrases import normalize
from arena.conversation.simulator_interface import IntentReader
from arena.reading.constraints import (
    Constraints, asks_latest, audience, carried_spans, clauses, genre_mentions, in_request_clause, latest_years,
    request_part, update,
)
from arena.reading.subjects import RELATED, plain_subjects, stem, subject_frequency, subjects_asked, word_counts
from arena.reading.surnames import SurnameIndex, earlier_mentions
from arena.reading.vocabulary import GENRE_WORD, GENRE_WORDS, says_what_is_wanted
from arena.reading.acts import (
    FAREWELL, FIELD_WORDS, REJECTION as REJECTION_CUE, RuleActReader, asks_about_system, asks_for_an_item,
    asks_for_anything, asks_to_go_on,
    clause_points_back, decisions_apart, defined_words,
    is_approval, is_chatter, is_closing, is_correction, is_question_form, is_shrug, is_small_talk,
    is_yes_no_question, open_question,
    part_at, part_takes, pointed_index, praises_only, points_back, question_aspect, question_sentence, rule_intents,
    likens_referred, likens_two, signs_off_at_end, starts_with_wh, takes_it, turns_down_the_list, unfamiliar_after, with_question_marks,
)
from arena.reading.references import (
    asks_for_more, asks_for_more_after_taking, asks_for_similar, likens_to_next, title_phrase, wants_the_series,
    watched_next, without_possessives,
)
from arena.reading.message_acts import MessageActReader
from arena.reading.names_unknown import (
    MIN_MAKER_ITEMS, blanked, liked_title_phrases, maker_entries, maker_names, missing_title_note,
    unknown_maker_note,
)
from arena.reading.phrase_table import genres_a_mood_rules_out, known_subject, moods_named
from arena.reading.title_spelling import respelled
from arena.reading.scope import NEGATION_CUE, SEEN_CUE, clause_bounds, has_request_content, negated_before
from crs.franchises import Franchises
from crs.shown_filter import filter_words, plot_matches
from crs.policy_state import Reading, constraints_of, from_state, stamp, to_state, with_reply

# "start over", "forget all that", "let's start again": what was asked so far no longer holds.
STARTS_OVER = re.compile(r"\b(start (over|again|afresh|from scratch)|forget (all |everything )?(that|i said|"
                         r"what i said|about (that|it|all that))|scratch (all )?that|new search|something "
                         r"completely different|reset|new conversation|(any|some) (movies?|films?|books?|thing) at all)"
                         r"\b", re.IGNORECASE)
# A message that asks on after taking or praising a title: "..., something supernatural please".
_ASKS_ON = re.compile(r"\b(something|anything|another|any other|instead|rather|recommend|suggest|show me|give me)\b",
                      re.IGNORECASE)
_RECOMMENDING = re.compile(r"\b(recommend\w*|suggest\w*|movies?|films?|flicks?|watch\w*|something|anything|"
                           r"show me|give me|any|ideas?|looking for|in the mood|want|like|similar|more|another|else|"
                           r"other|books?|read|novels?|series|shows?|tv|see|seen|pick|options?)\b", re.IGNORECASE)
# A sentence that plainly asks for titles: "Could you help me find a horror movie today?", "I am looking
# for a good romance movie. Know of any?", "Others? I love action movies". A title the same message names
# with praise ("Carol (2015) was wonderful") is a liking that steers the list, not the item asked about.
_ASKS_FOR_TITLES = re.compile(
    r"\b(looking for|help me (find|pick|choose)|find me|recommend(ation)?s?|suggest(ion)?s?|know (of )?any|"
    r"any (good )?(ideas|picks|options)|give me|show me|(some|any) others|in the mood for|"
    r"(i|we) (want|need) (a|an|some|to (watch|see))|(i'?d|i would|we'?d|we would) like (a|an|some|to (watch|see)))\b|"
    r"\bothers\s*\?",
    re.IGNORECASE)
_TITLE_KIND = re.compile(r"\b(movies?|films?|flicks?|ones?|others|something|anything|documentar(y|ies)|"
                         r"comed(y|ies)|series)\b|\?", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _asks_for_titles(text: str) -> bool:
    """Whether some sentence of the message asks for titles (a request cue and what kind of thing)."""
    for sentence in _SENTENCE_END.split(text):
        cue = _ASKS_FOR_TITLES.search(sentence)
        if cue and (_TITLE_KIND.search(sentence[cue.start():]) or genre_mentions(sentence)):
            return True
    return False


# What asks the system for something else than items: a poem, a joke, the weather, a fact.
_OFF_TASK = re.compile(r"\b(write|poem|joke|song|story for me|weather|news|capital of|who won|how many|"
                       r"calculate|translate|what time|your name|are you (a )?(human|robot|bot|real))\b|\?",
                       re.IGNORECASE)
# A question that leaves its verb out: "and the third one?", "what about the second?", "the last one?"
_ELLIPSIS = re.compile(r"^\W*(and|what about|how about|same for|and for|ok(ay)?,? and)?\s*(the )?"
                       r"(first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th|other)( one)?\W*$", re.IGNORECASE)
# A liking said of the titles after it in the clause: the user knows them, so they are no picks.
_LIKED_BEFORE = re.compile(r"\b(i|we|she|he|they)\s+(did\s+|do\s+|really\s+|also\s+|just\s+|totally\s+)*"
                           r"(liked?|loved?|enjoy(ed)?|adored?)\b|"
                           r"\b(favou?rites?|faves?|favs?)( (movie|film|one)s?)?\s+(is|was|are|were|include)\b",
                           re.IGNORECASE)  # "My daughter's favorite is Monsters, Inc.": known already
# A person pointed at, not named: "his movies", "more with her", "anything else starring him".
_HIS_FILMS = re.compile(r"\b(his|her) (other )?(movies|films|work|stuff|ones|roles)\b|"
                        r"\b(more|others?|anything( else)?|something( else)?|films?|movies?) (with|starring|by|from) "
                        r"(him|her)\b", re.IGNORECASE)
_APOSTROPHES = re.compile("[\u2018\u2019\u00b4`]")  # "don’t", "don´t": the plain apostrophe
_SENTENCE_START = re.compile(r"(^|[.!?]\s*)\W*$")
# A question that asks for an item not shown yet: "maybe a movie that stars Keanu Reeves?", "any films
# directed by him?" is a request with a person, not a question about the list.
_NEW_ITEM_ASKED = re.compile(
    r"\b((a|an|any|some|another|other)\s+(\w+\s+)?(movies?|films?|books?|novels?|shows?|ones?)|"
    r"something|anything)"
    r"\s+(that|which|where|with|starring|by|directed|written|from)\b", re.IGNORECASE)
_GENRE_SPELLINGS = sorted(w for w in GENRE_WORDS if " " not in w and len(w) >= 5)
# The one-word subjects of the related-words table ("superheroes", "zombies"), for "superheros", "zombeis".
_SUBJECT_SPELLINGS = sorted({w for key, words in RELATED.items() for w in (key, *words)
                             if " " not in w and len(w) >= 6} - set(_GENRE_SPELLINGS))
_CHILD_WORDS = re.compile(r"\b(kids?|child(ren)?|little ones?|son|daughter|family|\d{1,2}[ -]?(year|yr)s?[ -]?olds?)\b",
                         re.IGNORECASE)
CLARIFY = ("I may have misread that: I can suggest movies and tell you about them. "
           "What kind of movie would you like?")
_COUNTS = {"two": 2, "2": 2, "three": 3, "3": 3}
_FIRST_N = re.compile(r"\b(?:the )?(?:first|top) (two|2|three|3)\b", re.IGNORECASE)
_BOTH = re.compile(r"\b(both|the two of them|either of them)\b", re.IGNORECASE)
REJECT_INTENTS = frozenset({"REJ", "CRI-F", "CRI-A"})
_PLURAL_POINTER = re.compile(r"\b(these|those|them|they|any of (these|those|them))\b", re.IGNORECASE)
# A question about every shown item at once: "what are the ratings of these?", "which of them is shortest?"
_ALL_OF_THEM = re.compile(r"\b(these|those|each of them|all of them|both of them|them all|of them)\b", re.IGNORECASE)
# A question on a field, said back when it is not clear which title it is about.
_ASKED_FIELD = {"plot": "what it is about", "director": "who directed it", "writer": "who wrote it",
                "stars": "who is in it", "year": "when it came out", "genres": "what kind of film it is",
                "true_story": "whether it is based on a true story", "rating": "how well it is rated",
                "runtime": "how long it runs", "unrecorded": "about a detail of it",
                "suitability": "whether it suits a child"}
_APOSTROPHES = re.compile(r"(?<=\w)[´’‘`](?=\w)")
_OF_THE_LIST = frozenset({"compare_children", "compare_year", "pick", "why"})  # asked of the shown list
# What a wish asks for, that a trailing "too violent" qualifies ("I don't want anything too violent").
_QUALIFIED = re.compile(r"\b(anything|something|movies?|films?|ones?|stuff|shows?|books?)\W*$", re.IGNORECASE)
# "What is the best Matrix movie?": a pick among a named title's series.
_BEST_OF_SERIES = re.compile(r"\b(?:what|which)(?:'s| is| are| would be)? (?:the|your) (?:best|favou?rite|top|"
                             r"greatest) (.{2,40}?) (?:movie|film|one|book|installment|entry|part)s?\b", re.IGNORECASE)
# "What is the movie about?": the item just shown, named by its kind.
_THE_ITEM = re.compile(r"\b(the|this|that) (movie|film|book|show|series)\b", re.IGNORECASE)
QUESTION_INTENTS = frozenset({"INQ", "ASK"})
_MORE_OF = re.compile(r"\b(more|others?|another|anything|something|ones?)\s+(like|similar to|as)\b|"
                      r"\b(similar|another)\b", re.IGNORECASE)
_NOT_BEFORE = re.compile(r"\b(not|nothing|no|none|isn'?t|aren'?t|wasn'?t|without being)\s+$", re.IGNORECASE)
_MIDDLE = re.compile(r"\bthe middle( one)?\b", re.IGNORECASE)
# The share of the allowed acts' probability the learnt reader's act needs before it replaces a request.
MIN_LEARNT = 0.55
# "tell me more about this list", "what are your picks like?": every shown item.
_THE_LIST = re.compile(r"\b(list|picks|suggestions|recommendations|options|all (of )?(them|these|those))\b",
                       re.IGNORECASE)
MIN_SUBJECT_ITEMS = 3  # a subject fewer entries bear out is no constraint the catalog can keep


@dataclass
class UserMove:
    """What the last user message does and what the whole conversation asks for."""

    act: str  # end | chat | question | reject | seen | correction | shrug | accept | request
    aspect: Optional[str] = None  # for a question: plot, director, writer, stars, year, genres, suitability, ...
    about: list[CatalogItem] = field(default_factory=list)  # the items the message is about
    last_shown: list[CatalogItem] = field(default_factory=list)  # the items of the system's last reply
    constraints: Constraints = field(default_factory=Constraints)
    left_out: set[str] = field(default_factory=set)  # ids turned down or seen, with their variants
    intents: list[str] = field(default_factory=list)  # what the act reader said about the last message
    state: Optional[DialogueState] = None  # the conversation's state after the message (stored with the reply)
    reading: Optional[Reading] = None  # the policy's working copy of that state
    relaxed_to: Optional[Constraints] = None  # the looser constraints a list had to be made under
    text: str = ""  # the message itself (an answer may need its words: "is it scary?")
    filtered_by: Optional[Constraints] = None  # "which of those are comedies?": what the shown items must meet
    notes: list[str] = field(default_factory=list)  # one line each: a liked title or studio the catalog lacks
    # The titles held up as the model of the list (the latest liked, all held), read once per turn.
    models: Optional[tuple[list[CatalogItem], list[CatalogItem]]] = None


class StateLedger:
    """The states a system computed for the dialogues it answered, until the caller stores them with
    the reply (`ConversationalRecommender.state_for`); keyed by dialogue and length, bounded."""

    def __init__(self, size: int = 512):
        self._states: OrderedDict[tuple[str, int], DialogueState] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def keep(self, dialogue: Dialogue, state: DialogueState) -> None:
        with self._lock:
            self._states[(dialogue.dialogue_id, len(dialogue.utterances))] = state
            while len(self._states) > self._size:
                self._states.popitem(last=False)

    def take(self, dialogue: Dialogue) -> Optional[DialogueState]:
        with self._lock:
            return self._states.pop((dialogue.dialogue_id, len(dialogue.utterances)), None)


class StatefulTurns:
    """The turn of a system that reads with a `DialoguePolicy`: the new message read once into the
    conversation's state, the reply planned from it (`_reply`), and the state kept for the caller to
    store with the reply. ChatCRS and CRB-CRS differ only in `_reply`."""

    policy: "DialoguePolicy"
    _states: StateLedger

    def respond(self, dialogue: Dialogue) -> tuple[str, list]:
        move = self.policy.read(dialogue)
        text, shown = self._reply(dialogue, move)
        self._states.keep(dialogue, self.policy.state_after(move, shown, dialogue))
        return text, [item.to_recommended() for item in shown]

    def state_for(self, dialogue: Dialogue) -> Optional[DialogueState]:
        return self._states.take(dialogue)

    def _reply(self, dialogue: Dialogue, move: "UserMove") -> tuple[str, list[CatalogItem]]:
        raise NotImplementedError


def _shown_titles_named(text: str, shown: Sequence[CatalogItem], found: Sequence[tuple]) -> list[tuple]:
    """Shown titles the text names that the catalog's linker passed over: a one-word title ("Up",
    "Her") counts when it refers to an item on the list just shown and is written as a title
    (capitalised, and not the first word of the message, where every word is)."""
    taken = [(start, end) for _, start, end in found]
    out = []
    for item in shown:
        title = item.title
        one_word = len(title.split()) == 1
        flags = 0 if one_word else re.IGNORECASE
        for match in re.finditer(r"(?<![\w'])" + re.escape(title) + r"(?![\w'])", text, flags):
            if any(a <= match.start() < b for a, b in taken):
                continue
            if one_word and (match.start() == len(text) - len(text.lstrip()) or not title[:1].isupper()):
                continue
            out.append((item, match.start(), match.end()))
            taken.append(match.span())
    return out


def _genres_of(item: CatalogItem) -> frozenset[str]:
    """The item's genres as the words a request would use ("drama" says too little to count)."""
    genres = set()
    for name in item.genres:
        if match := GENRE_WORD.search(name):
            genres.add(GENRE_WORDS[match.group(1).lower()])
        elif item.dataset == "redial":  # ReDial's genres are plain words ("adventure")
            genres.add(normalize(name))
    return frozenset(genres - {"drama"})


# "Any good?", "is it any good?": what the item pointed at is like, not a new list.
_ANY_GOOD = re.compile(r"^\W*((is|was) (it|that|this|that one|this one) )?any good\W*$", re.IGNORECASE)
# More titles of the kind named: "more in that genre", "something more of that sort", "others like that".
_MORE_OF_THE_KIND = re.compile(r"\b(more|others?|another|some) (in|of|from|like) (that|this|the same|those) "
                               r"(genre|kind|type|sort|vein|style|line)s?\b", re.IGNORECASE)
# A word that points at one item ("is it scary?", "who's in that one?"): with several shown, which is unclear.
_ONE_ITEM_WORD = re.compile(r"\b(it|its|it's|that|this|that one|this one|the (movie|film|show|book)|he|she|him|her|"
                            r"the (director|writer|lead|star|year))\b", re.IGNORECASE)  # "who's the director?"


class DialoguePolicy:
    def __init__(self, catalog: Catalog, reader: Optional[IntentReader] = None,
                 message_acts: Optional[MessageActReader] = None):
        self.catalog = catalog
        self.reader: IntentReader = reader or RuleActReader()
        # The learnt back-up of the act rules, asked only where they found nothing but a request.
        self.message_acts = message_acts or MessageActReader()
        # A live dialogue repeats its earlier messages on every turn: each is linked once.
        self._link_spans = lru_cache(maxsize=4096)(catalog.link_spans)
        self._link_people = lru_cache(maxsize=4096)(catalog.link_people)
        self.franchises = Franchises(catalog)
        self._word_counts = word_counts(catalog.items)  # whether a subject can be asked for, cheaply
        self.latest = latest_years(i.year for i in catalog.items)  # "the latest": this catalog's last years
        self._maker_counts: dict[str, int] = {}  # how many entries name a studio, read once per name
        self.surnames = SurnameIndex(catalog.items, self._word_counts)  # "not into Tarantino"
        self._title_words = frozenset(w for item in catalog.items for w in normalize(item.title).split())
        # With an LLM endpoint the last message may be read by the model (`crs.state_reader`), the
        # offline rules standing in whenever its answer fails the checks.
        self.state_reader = None

    @property
    def reader_label(self) -> str:
        return getattr(self.reader, "label", type(self.reader).__name__)

    def variants(self, item: CatalogItem) -> list[CatalogItem]:
        """The item and the other titles of its franchise ("Batman Returns" for "Batman")."""
        return self.franchises.variants(item)

    def bearable(self, subject: str) -> bool:
        """Whether a subject may be asked of every item: it is on the phrase table's curated list (a
        word the reader does not know is never a topic) and enough catalog entries bear it out."""
        return known_subject(subject) and subject_frequency(self._word_counts, subject) >= MIN_SUBJECT_ITEMS

    def plain_subjects(self, text: str, names: Sequence[str]) -> list[tuple[str, int]]:
        """The subjects a request names without a cue word, judged by the catalog's plots."""
        return plain_subjects(text, self._word_counts, len(self.catalog.items), names)

    def _like_genres(self, text: str, shown: Sequence[CatalogItem]) -> frozenset[str]:
        """"Something like Star Wars", "I liked American Sniper, anything similar?" that name no genre:
        the genres of the title named ("seen it like a hundred times" is no likeness)."""
        if genre_mentions(text):
            return frozenset()
        similar = asks_for_similar(text)
        linked = self._linked_spans(text, shown)
        for item, start in linked:
            if not negated_before(text, start) and (similar or likens_to_next(text[:start])):
                return _genres_of(item)
        if similar and shown and not linked:  # "something in the same vein?": like what was just shown
            return _genres_of(shown[0])
        return frozenset()

    def _reference_titles(self, text: str, shown: Sequence[CatalogItem]) -> list[CatalogItem]:
        """Titles a request holds up as the model of what it wants ("like Star Wars", "I loved
        Vertigo ... any thrillers like that?"): the user knows them, so they and their franchise are
        not what to show."""
        more = asks_for_more(text)
        similar = asks_for_similar(text)
        out = []
        for item, start in self._linked_spans(text, shown):
            before = text[:start]
            if negated_before(text, start):
                continue
            if more and (likens_to_next(before) or (similar or watched_next(before))
                         and not in_request_clause(text, start)):
                out.append(item)
            elif _LIKED_BEFORE.search(text[clause_bounds(text, start)[0]:start]):
                out.append(item)  # "I liked Wind River", "I enjoy comedies such as Airplane!": known already
        return out

    def _intents(self, dialogue: Dialogue, text: str) -> list[str]:
        try:
            intents = [str(i) for i in self.reader(dialogue)]
        except Exception:  # a failing model must not break the turn: the rules still read the message
            intents = []
        return intents or rule_intents(text)

    def read(self, dialogue: Dialogue) -> UserMove:
        """The last message's move and the conversation's state: resumed from the state stored with
        the last system turn that has one, each later message read once (`advance`)."""
        reading, start = self.resume(dialogue)
        move = None
        last_user = max((i for i, u in enumerate(dialogue.utterances) if u.role == Role.USER), default=-1)
        for index in range(start, len(dialogue.utterances)):
            utterance = dialogue.utterances[index]
            if utterance.role == Role.AGENT:
                self.observe_reply(reading, utterance.items)
            else:
                move = self.advance(reading, dialogue, utterance.text or "", index == last_user)
            reading.read_through = index + 1
        if move is None:  # nothing new to read: the last user message's reading as stored
            move = UserMove(act="request", last_shown=list(reading.shown))
        move.constraints, move.left_out = reading.constraints, set(reading.left_out)
        move.reading = reading
        move.state = to_state(reading, act=move.act, intents=move.intents, about=move.about, aspect=move.aspect)
        return move

    def state_after(self, move: UserMove, shown: Sequence[CatalogItem], dialogue: Dialogue) -> DialogueState:
        """The state to store with the reply that showed `shown` (it takes that reply in too)."""
        turn = sum(1 for u in dialogue.utterances if u.role == Role.AGENT)
        return with_reply(move.state, list(shown), turn, len(dialogue.utterances) + 1, move.relaxed_to)

    def resume(self, dialogue: Dialogue) -> tuple[Reading, int]:
        """(the reading to go on from, the index of the first utterance it has not taken in)."""
        for index in range(len(dialogue.utterances) - 1, -1, -1):
            utterance = dialogue.utterances[index]
            state = utterance.state
            if utterance.role != Role.AGENT or state is None:
                continue
            # The state must be this turn's own: it took in everything up to and including the turn's items.
            if state.read_through == index + 1 and state.last_shown == [r.item_id for r in utterance.items]:
                return from_state(state, self.catalog), index + 1
        return Reading(reader=self.reader_label), 0

    def observe_reply(self, reading: Reading, items) -> None:
        shown = [i for i in (self.catalog.get(r.item_id) for r in items) if i is not None]
        reading.shown_records += [ShownItem(item_id=i.item_id, title=i.label, turn=reading.system_turns,
                                            position=n) for n, i in enumerate(shown, start=1)]
        reading.system_turns += 1
        reading.shown = shown
        reading.shown_years += [i.year for i in shown if i.year]
        reading.last_list = shown if len(shown) > 1 else reading.last_list

    def advance(self, reading: Reading, dialogue: Dialogue, text: str, is_last: bool) -> "UserMove":
        """Take one user message into `reading` (read once) and return its move."""
        constraints, left_out, shown = reading.constraints, reading.left_out, reading.shown
        text = self._spelled(_APOSTROPHES.sub("'", text))  # "don´t", "a horor movie": the words meant
        text = with_question_marks(text)  # "have you seen Girls Trip" asks, mark or none
        model = self.state_reader if is_last else None
        prior = to_state(reading, act="request", intents=[], about=[], aspect=None) if model else None
        reading.user_turns += 1
        turn = reading.user_turns - 1
        if STARTS_OVER.search(text):  # "start over", "forget all that": what was asked so far goes
            constraints, reading.like, reading.moods = Constraints(), [], []
        self._mentions(reading, text, turn)
        intents = self._intents(dialogue, text) if is_last else rule_intents(text)
        # "is it scary?" after an answer or a choice that showed nothing: "it" is the item in focus
        referable = shown or [i for i in (self.catalog.get(x) for x in reading.focus) if i is not None]
        act, aspect, about, turned_down = self._act(text, intents, referable, reading.last_list)
        if act == "request" and reading.last_aspect and "?" in text and not about and _ELLIPSIS.match(text):
            # "and the third one?" after "who directed the first one?": the same question of another item
            pointed = self._pointed(text, referable, reading.last_list)
            if pointed:
                act, aspect, about = "question", reading.last_aspect, pointed
        reading.last_aspect = aspect if act == "question" else None
        if about and act in ("question", "accept", "correction"):
            reading.focus = [i.item_id for i in about]
        elif shown:
            reading.focus = []
        if act == "clarify":  # one line of what was understood, one question
            reading.understood = (f"You're asking {_ASKED_FIELD[aspect]}, but I'm not sure which title you mean. "
                                  "Which one should I look up?") if aspect in _ASKED_FIELD else CLARIFY
        if act in ("reject", "seen"):
            turned_down = about
        (reading.seen if act == "seen" else reading.turned_down).extend(
            i.item_id for i in turned_down if i.item_id not in reading.turned_down + reading.seen)
        if act == "accept":
            reading.taken += [i.item_id for i in about if i.item_id not in reading.taken]
        for item in turned_down:  # "I don't like Rocky, but I'll watch The Shawshank Redemption"
            left_out.update(v.item_id for v in self.variants(item))
        ruled_out_words: set[str] = set()
        notes: list[str] = []
        unread: list[tuple[int, int]] = []  # what no ranker may read as words: an unknown title, a studio
        if act in ("request", "seen"):  # "something like Star Wars": other titles than Star Wars's own
            for item in self._reference_titles(text, shown):
                left_out.update(v.item_id for v in (
                    [item] if wants_the_series(text) else self.franchises.franchise(item)))
                reading.like = [i for i in reading.like if i != item.item_id] + [item.item_id]
        if act == "question":  # "Is Coco suitable for my 8 year old?" says who is watching
            asked_for = audience(constraints, text)
            if asked_for.for_children and not constraints.for_children:
                reading.audience_asked = True
            constraints = asked_for
        if act == "request":  # "a superhero movie, but not a Batman one": that franchise stays out
            for item, start in self._linked_spans(text, shown):
                if negated_before(text, start):
                    left_out.update(v.item_id for v in self.franchises.franchise(item))
                    # A one-word franchise ("not a Batman one") keeps its name out of plots too; the words
                    # of a longer title ("not Time Bandits") each say nothing alone and stay allowed.
                    key_words = self.franchises.key(item).split()
                    if len(key_words) == 1 and len(key_words[0]) >= 4:
                        ruled_out_words.add(stem(key_words[0]))
        if act not in ("correction", "end", "chat", "question", "clarify"):
            # A liked title the catalog lacks gives no constraint ("like Paris, Texas" asks for no Texas)
            missing = self._missing_titles(text) if act == "request" else []
            unread += [(start, end) for _, start, end in missing]
            bare = blanked(self._without_titles(text), unread)
            people = self._people_named(without_possessives(bare),
                                        constraints.people | constraints.unwanted_people)
            if not people and act == "request":
                people = self._person_referred(bare, reading)
            constraints = update(constraints, bare, complaint=act == "reject", shown_years=reading.shown_years,
                                 kinds_matter=self.catalog.dataset == "opendialkg", people=people,
                                 shown=list(shown) + reading.last_list, bearable=self.bearable,
                                 plain=self.plain_subjects, latest=self.latest)
            named_moods = [m for m in moods_named(bare) if not negated_before(bare, bare.lower().find(m))]
            reading.moods = named_moods or reading.moods
            for mood in named_moods:  # "one where he plays a darker role": no animation or family films
                avoid = genres_a_mood_rules_out(mood) - constraints.genres
                if avoid:
                    constraints = replace(constraints, unwanted_genres=constraints.unwanted_genres | avoid)
            if reading.audience_asked and constraints.for_children and not _CHILD_WORDS.search(bare) and (
                    constraints.genres, constraints.people, constraints.subjects) != (
                    reading.constraints.genres, reading.constraints.people, reading.constraints.subjects):
                # A child named only in a question ("is it ok for my 8 year old?") holds for the next
                # "another one?", not for a new request about something else.
                constraints = replace(constraints, for_children=False)
                reading.audience_asked = False
            # "like <title>" gives genres only when none were asked for (the message names none either)
            wants_like = act in ("request", "seen") and not constraints.genres
            like = self._like_genres(text, shown) if wants_like else frozenset()
            if like or ruled_out_words:
                constraints = replace(
                    constraints, genres=(like - constraints.unwanted_genres) or constraints.genres,
                    any_genre=constraints.any_genre if not like else True,
                    unwanted_words=constraints.unwanted_words | ruled_out_words)
            if act == "request":
                constraints = self._makers(text, bare, reading.constraints, constraints, notes, unread)
                notes[:0] = [missing_title_note(phrase, constraints.any) for phrase, _, _ in missing]
        reading.constraints = constraints
        reading.reader = self.reader_label
        if model is not None and (read := model.read(prior, text, shown)) is not None:
            # The model's reading, checked against the schema and the catalog, replaces the rules' act
            # and constraints; what the rules keep out of plots and lists (turned-down titles) stays.
            change, about = read
            act, aspect = change.act, change.aspect
            reading.constraints = replace(constraints_of(change.constraints),
                                          unwanted_words=constraints.unwanted_words)
            reading.moods = [c.value for c in change.constraints if c.slot == "mood"]
            reading.reader = model.label
        reading.asked.append(self._asked(blanked(text, unread + self._carried(text, reading.constraints)), act))
        stamp(reading)
        filtered_by = self.shown_filter(text) if aspect == "filter" else None
        return UserMove(act, aspect, about, list(shown), intents=intents, text=text, filtered_by=filtered_by,
                        notes=notes if is_last else [])

    def _missing_titles(self, text: str) -> list[tuple[str, int, int]]:
        """(phrase, start, end) of each title a liking names that the catalog lacks ("I loved <title>"):
        written as a title, no catalog title, person or genre, and of two words or more unless the plots
        hardly use the word (a lone "Paris" is a place)."""
        titled = [(start, end) for _, start, end in self._title_spans(text)]
        people = [(start, end) for _, start, end in self._link_people(without_possessives(text))]
        out = []
        for phrase, start in liked_title_phrases(text):
            end = start + len(phrase)
            words = normalize(phrase).split()
            if (any(a < end and start < b for a, b in titled + people) or self._link_spans(phrase)
                    or self._link_people(phrase) or genre_mentions(phrase)
                    or (len(words) == 1 and self._word_counts.get(words[0], 0) > 5)):
                continue
            out.append((phrase, start, end))
        return out

    def _makers(self, text: str, bare: str, before: Constraints, constraints: Constraints, notes: list[str],
                unread: list[tuple[int, int]]) -> Constraints:
        """A studio or franchise named ("from Pixar"): one line in `notes` when the catalog's records
        cannot tell, its span in `unread` (no ranker reads it as words, so no lookalike title comes of it),
        and one the records name often enough kept as a constraint until the user asks about something
        else (a subject, a place or a person)."""
        plain = without_possessives(text)
        taken = [(start, end) for _, start, end in self._link_people(plain) + self.surnames.misspelt(plain)] + unread
        makers = set()
        named = False
        for name, start in maker_names(bare, self._word_counts):
            end = start + len(name)
            if any(a < end and start < b for a, b in taken) or known_subject(name):
                continue
            if negated_before(bare, start):
                continue  # "no pixar movies": its words stay ruled out, no studio is asked for
            named = True
            unread.append((start, end))
            shown_name = name if name[:1].isupper() else name.upper() if len(name) <= 3 else name.title()
            if self._maker_entries(shown_name) >= MIN_MAKER_ITEMS:
                makers.add(shown_name)
            else:
                notes.append(unknown_maker_note(shown_name, constraints.any))
        if named:
            return replace(constraints, makers=frozenset(makers))
        moved_on = any(getattr(constraints, slot) and getattr(constraints, slot) != getattr(before, slot)
                       for slot in ("subjects", "origins", "people"))
        return replace(constraints, makers=frozenset()) if moved_on else constraints

    def _maker_entries(self, name: str) -> int:
        if name not in self._maker_counts:
            self._maker_counts[name] = maker_entries(self.catalog.items, name)
        return self._maker_counts[name]

    def _spelled(self, text: str) -> str:
        """The text with misspelt genre words put right: a word no catalog plot uses that is close to
        one genre word ("horor", "comdy", "thriler") is that word; in a question, a word no title or plot
        uses that is close to a field's word ("rsatings") is that word; every other word stays as written."""
        question = "?" in text

        def fix(match: re.Match) -> str:
            word = match.group(0)
            low = word.lower()
            if len(low) < 5 or low in GENRE_WORDS or self._word_counts.get(low, 0):
                return word
            if word[0].isupper() and _SENTENCE_START.search(text[:match.start()]) is None:
                return word  # a capital within a sentence is a name ("Jim Carey"), not a misspelt genre
            close = difflib.get_close_matches(low, _GENRE_SPELLINGS, n=1, cutoff=0.8)
            if not close and low not in self._title_words:
                close = difflib.get_close_matches(low, _SUBJECT_SPELLINGS, n=1, cutoff=0.9)
            if not close and question and low not in self._title_words:  # "rings" of a title stays
                close = difflib.get_close_matches(low, FIELD_WORDS, n=1, cutoff=0.85)
            return close[0] if close else word
        # "don´t", "don’t": one apostrophe for every reader (a negation must not be lost to the keyboard)
        text = _APOSTROPHES.sub("'", text)
        # "Se7en": the plain spelling a catalog title uses ("Seven"), when no title uses the word as typed
        return re.sub(r"[A-Za-z]+", fix, respelled(text, self._title_words.__contains__))

    def _mentions(self, reading: Reading, text: str, turn: int) -> None:
        """The titles the message names, liked or not, and whether it gives anything to go on."""
        linked = self._link_spans(text)
        for item, start, _ in linked:
            liked = not negated_before(text, start) and not SEEN_CUE.search(text)
            reading.mentioned.append(MentionedItem(item_id=item.item_id, liked=liked, turn=turn))
        if linked or has_request_content(text) or self.catalog.link_entities(text):
            reading.has_preference = True

    @staticmethod
    def _asked(text: str, act: str) -> str:
        """What the message gives the ranker to read: nothing for a question, closing, small talk,
        correction or shrug, only the asking part of a complaint, and nothing when no word is left
        that says what is wanted ("Yes I am looking for a <comedy>", its genre read: "yes" matched
        against plots and titles only brings Yes Man)."""
        if act in ("end", "chat", "question", "correction", "shrug", "clarify"):
            return ""
        text = request_part(text) if act == "reject" else text
        return text if says_what_is_wanted(text) else ""

    def _carried(self, text: str, constraints: Constraints) -> list[tuple[int, int]]:
        """The spans whose sense the constraints carry (`carried_spans`), less those inside a title or a
        name: "The Amityville Horror" named is an item, not the word "horror"."""
        named = [(start, end) for _, start, end in self._title_spans(text)]
        named += [(start, end) for _, start, end in self._link_people(without_possessives(text))]
        return [(a, b) for a, b in carried_spans(text, constraints)
                if not any(start < b and a < end for start, end in named)]

    def _act(self, text: str, intents: Sequence[str], shown: Sequence[CatalogItem],
             listed: Sequence[CatalogItem] = ()
             ) -> tuple[str, Optional[str], list, list]:
        """(act, aspect of a question, the items it is about, items an acceptance turns down beside the
        one it takes: "I don't like Rocky, but I'll watch The Shawshank Redemption")."""
        closing = is_closing(text)
        # read once, and only when a closing or a taking needs it: both ask whether a liked title was named
        liked_named = self._liked_named(text, shown) if closing or takes_it(text) else []
        if closing and not liked_named:
            # "I'll go with the second one, thanks!": the choice it names is taken ("good one! One of my favs
            # is License to Drive" names a liking, to steer the next list, not a choice)
            # A title spoken well of in a goodbye ("I love Avatar! Thanks for helping!") is known, not chosen.
            known = set(self._spoken_well_of(text, shown))
            chosen = [i for i in self._linked(text, shown) if i not in known] or self._pointed(
                text, shown, listed) or (
                list(shown[:1]) if is_approval(text) or takes_it(text) else [])  # "Perfect!", "I'll watch it"
            return ("accept", None, chosen[:1], []) if chosen else ("end", None, [], [])
        if is_small_talk(text):
            return "chat", None, [], []
        if asks_about_system(text) and not (self._link_spans(text) or self._link_people(text)
                                            or genre_mentions(text) or any(
                                                self.bearable(s) for s, _ in subjects_asked(text))):
            return "chat", "system", [], []  # "how do you pick these?" after a list: about the system
        if shown and turns_down_the_list(text) and not self._link_spans(text):
            return "reject", None, list(shown), []  # "none of those, others?": a new list, not their plots
        defined = defined_words(text)
        # only the genre's own words: "what is a good western movie?" asks for one
        if defined and (genres := genre_mentions(defined)) and not GENRE_WORD.sub(" ", defined).strip(" -"):
            return "question", "define:" + genres[0][0], [], []  # "what is a romance film?": no list
        if shown and _ANY_GOOD.match(question_sentence(text) or ""):
            about = self._pointed(text, shown, listed) or list(shown[:1])
            return "question", "about", about, []  # "Haven't seen this one. Any good?": about the one shown
        likened = self._likened(text, shown, listed)
        if likened:  # "Is that like Akira?": the item referred to, set beside the title named
            return "question", "compare", likened, []
        pool = list(listed) if len(shown) < 2 and listed else list(shown)
        asked = self.shown_filter(text) if pool else None
        if asked is not None:  # "do any of those have Bruce Willis?": the answer is among the shown items
            return "question", "filter", [i for i in pool if asked.allows(i)], []
        words = filter_words(text) if pool else None
        if words is not None and question_aspect(text) in (None, "plot", "genres"):
            # "do any of those include swords and sorcery?", words no rule reads: the shown records' own words
            found = plot_matches(self._without_titles(words), pool)
            if found is not None:
                return "question", "filter_words", found, []
        linked = self._linked(text, shown)
        if not shown and is_chatter(text) and not self._link_people(text) and not self._names_a_title(text):
            return "chat", None, [], []  # "ugh, long day at work" before anything was shown
        if is_correction(text):
            return "correction", None, linked, []
        if shown and is_approval(text):  # "great", "perfect!" after a list: it is taken
            return "accept", None, list(shown[:1]), []
        taken, down = self._decided_apart(text, shown)
        # one title taken, another turned down ("X sounds cool but ..., something supernatural please" asks on)
        if taken and not asks_for_more_after_taking(text) and not _ASKS_ON.search(text):
            return "accept", None, taken, down
        if is_shrug(text):
            return "shrug", None, [], []
        asked_part = question_sentence(text)
        aspect = question_aspect(text)
        if aspect is None and asked_part and asked_part != text.strip():  # "Not seen it. Who's in it?"
            aspect = question_aspect(asked_part)
        if aspect not in (None, "why", "pick") and not linked and asks_for_an_item(asked_part or text):
            aspect = None  # "Maybe a movie that stars Keanu Reeves?" asks for items with that field
        if aspect not in (None, "pick", "why") and _MORE_OF_THE_KIND.search(text):
            aspect = None  # "I just watched X so I was thinking about more in that genre": more titles
        titles_only = self._asks_for_titles_only(text, asked_part, shown)
        if titles_only:
            # "Could you help me find a horror movie today? Oh I did see Bad Moms (2016), I liked it": the
            # title named is a liking that steers the list; the question asks for titles, not about it.
            aspect = None
        if aspect in (None, "pick") and (best := self._best_of_series(asked_part or text, shown)):
            return "question", "pick", best, []  # "What is the best Matrix movie?": one of that series
        # A question about what was shown or named that no aspect names ("How was it?", "does anyone die in
        # those?"): answered about that item from what the catalog holds, never with a new list.
        # A turn-down asked as a question ("none of those, others?") asks for a new list, not about those.
        if aspect is None and open_question(text) and not asks_for_an_item(asked_part or text) and not titles_only \
                and not _MORE_OF_THE_KIND.search(text) and (
                linked or (shown and (points_back(asked_part or text) or _THE_ITEM.search(text)))) \
                and not REJECTION_CUE.search(asked_part or text):
            aspect = "about"
        # A turn-down needs a word that turns something down: "Something with Arnold Schwarzenegger" is a
        # request whatever the model says, and "Tell me more about the second one" a question even when the
        # model reads a critique in it. Nothing offered yet: "nothing too scary" is a wish.
        rejects = ("REJ" in rule_intents(text) or bool(NEGATION_CUE.search(text))) and not praises_only(text)
        rejects = rejects and self._aims_at_shown(text, shown)
        asked = (bool(set(intents) & QUESTION_INTENTS) or not set(intents) & REJECT_INTENTS or starts_with_wh(text)
                 or not rejects or is_yes_no_question(text)
                 or (asked_part is not None and not REJECTION_CUE.search(asked_part)))
        if aspect in ("stars", "director", "writer") and not linked and _NEW_ITEM_ASKED.search(text) \
                and self._link_people(text) and not points_back(_NEW_ITEM_ASKED.sub(" ", text)):
            aspect = None  # "a movie that stars Keanu Reeves?": a cast (or crew) constraint of a request
        if aspect is not None and asked:
            about = self._referred(text, linked, shown, aspect, listed)
            if about:
                return "question", aspect, about, []
            if aspect not in _OF_THE_LIST and self._unknown_title(asked_part or text):
                return "question", "unknown_title", [], []  # "what is <a title the catalog lacks> about?"
            if aspect in _ASKED_FIELD and self._names_nothing(text):
                return "clarify", aspect, [], []  # "who directed it?" with nothing it can be: ask, don't guess
        if set(intents) & REJECT_INTENTS and rejects and (shown or linked):
            turned_down = [item for item, start in self._linked_spans(text, shown)
                           if (not in_request_clause(text, start) or negated_before(text, start))
                           and not part_takes(part_at(text, start))]  # "..., but I'll watch X" keeps X
            if not turned_down:  # "not my thing": the list just shown
                turned_down = self._pointed(text, shown, listed) or list(shown)
            return "reject", None, turned_down, []
        if "SEE" in intents or (shown and SEEN_CUE.search(text)):  # "he's watched that one to death"
            return "seen", None, linked or self._pointed(text, shown, listed) or list(shown), []
        if takes_it(text) and not liked_named:
            # "sounds good, I'll watch the second one": the one it points at ("I'll give it a watch. I also
            # liked Free Fire" names a liking to steer the next list)
            return "accept", None, linked or self._pointed(text, shown, listed)[:1] or list(shown[:1]), down
        learnt = self._learnt_act(text, shown, linked, listed)
        if learnt is not None:
            return learnt
        if not linked and not (shown and points_back(text)) and self._off_task(text):
            # "Can you write me a poem?": nothing to recommend from, and nothing shown it points at
            return "clarify", None, [], []
        return "request", None, linked, []

    def _learnt_act(self, text: str, shown: Sequence[CatalogItem], linked: list[CatalogItem],
                    listed: Sequence[CatalogItem]) -> Optional[tuple[str, Optional[str], list, list]]:
        """The act the message-act reader is sure of where the rules found only a request, among the acts
        the state allows: a choice or a question about an item needs one shown or named; a greeting, a
        question about the system or a goodbye must name nothing to recommend from. None: the request
        stands."""
        probs = self.message_acts.probabilities(text)
        if not probs:
            return None
        # A choice or a question needs its item: one shown that the message points at or names, or a title
        # it names on purpose and nothing else to recommend from ("a thriller with Sandra Bullock in?" asks
        # for one)
        refers = bool(shown) and (points_back(text) or bool(self._pointed(text, shown, listed))
                                  or bool(_THE_LIST.search(text)) or any(i in shown for i in linked)) or (
            bool(linked) and self._names_a_title(text) and self._names_nothing(self._without_titles(text)))
        # A greeting, a question about the system or a goodbye ends or pauses the recommending, so it needs
        # its own form as well as the model's word: nothing named, no asking to go on ("keep going"), and a
        # question about the system worded as a question. An act barred by form still weighs in the total:
        # its share is the request's, so barring it makes no other act surer than it was.
        names_nothing = not linked and not self._names_a_title(text) and self._names_nothing(text)
        diverting = {"chit_chat", "closing", "about_system"} if names_nothing else set()
        if asks_to_go_on(text):
            barred = set(diverting)
        else:
            barred = set() if is_question_form(text) else diverting & {"about_system"}
        allowed = {"request", "reject", "seen"} | ({"choice", "item_question"} if refers else set()) | (
            diverting - barred)
        total = sum(p for act, p in probs.items() if act in allowed | barred)
        act = max(allowed, key=probs.__getitem__)
        if total <= 0 or probs[act] / total < MIN_LEARNT:
            return None
        if act == "chit_chat":
            return "chat", None, [], []
        if act == "about_system":  # "what can you do?": what the system does, and an invitation
            return "chat", "system", [], []
        if act == "closing" and not asks_for_anything(text):
            return "end", None, [], []
        # "cheers, and maybe a comedy next" takes nothing: it asks on
        if act == "choice" and not asks_for_anything(self._without_titles(text)):
            return "accept", None, (linked or self._pointed(text, shown, listed) or list(shown))[:1], []
        if act == "item_question" and not asks_for_an_item(question_sentence(text) or text) \
                and not asks_for_similar(text) and not _MORE_OF.search(text) \
                and not _asks_for_titles(self._without_titles(text)):  # "more like the first": items
            about = (list(shown) if shown and _THE_LIST.search(text) and not linked
                     else self._referred(text, linked, shown, "about", listed)) or (linked or list(shown))[:1]
            return "question", "about", about, []
        return None

    def _asks_for_titles_only(self, text: str, asked_part: Optional[str], shown: Sequence[CatalogItem]) -> bool:
        """Whether the message asks for titles and its question names no title and points at nothing shown."""
        question = asked_part or text
        return _asks_for_titles(self._without_titles(text)) and not self._title_spans(question) and not (
            shown and points_back(question))

    def _unknown_title(self, text: str) -> Optional[str]:
        """The title a question asks about that the catalog does not hold ("what is Battle Royale about?"
        with no such entry): a phrase written as a title that names no person, genre or catalog title."""
        phrase = title_phrase(text)
        if not phrase or self._link_people(phrase) or genre_mentions(phrase) or self._link_spans(phrase):
            return None
        return phrase

    def _best_of_series(self, text: str, shown: Sequence[CatalogItem]) -> list[CatalogItem]:
        """"Which is the best Toy Story film?": the series the phrase names, shown titles first, then
        the original; empty when the phrase names no series of the catalog ("the best Italian movie")."""
        match = _BEST_OF_SERIES.search(text)
        series = self.franchises.series(match.group(1)) if match else []
        return sorted(series, key=lambda i: (i not in shown, i.year or 9999))

    def _aims_at_shown(self, text: str, shown: Sequence[CatalogItem]) -> bool:
        """Whether a message's negation turns down what was shown ("not my thing", "those are too old",
        "I don't like Rocky") rather than a quality of what it asks for ("spooky movies without the gore",
        "a movie that isn't as mainstream"): the first leaves the shown items out, the second is a wish."""
        titles = [start for _, start in self._linked_spans(text, shown)]
        for start, end in clauses(text):
            clause = text[start:end]
            for match in [*REJECTION_CUE.finditer(clause), *NEGATION_CUE.finditer(clause)]:
                after = clause[match.end():]
                if unfamiliar_after(after):  # "never heard of that one" says nothing against it
                    continue
                if (match.re is REJECTION_CUE and match.group(0).lower().startswith("too ") and
                        _NOT_BEFORE.search(clause[:match.start()])) or (
                        match.re is not REJECTION_CUE and re.match(r"\s+too\b", after, re.IGNORECASE)):
                    continue  # "not too violent please", "nothing too scary": a wish for the next list
                if clause_points_back(clause) or points_back(after[:24]) or any(start <= t < end for t in titles):
                    return True
                # "not my thing", "boring", "something else": a turn-down with no object of its own is of the
                # list; "I don't like horror movies" names what it rules out, a wish for the next list
                if match.re is REJECTION_CUE and not has_request_content(after) and not _QUALIFIED.search(
                        clause[:match.start()]):
                    return True
        return False

    def shown_filter(self, text: str) -> Optional[Constraints]:
        """What a question that sorts the shown items asks of them ("which of those are from the 90s?"),
        or None when it is no such question or names nothing the reader knows."""
        words = filter_words(text)
        if words is None or question_aspect(text) in ("compare_children", "compare_year", "pick"):
            return None  # "which of those is newer / best for kids / would you pick?" compare the list
        bare = self._without_titles(words)
        asked = update(Constraints(), bare, complaint=False, kinds_matter=self.catalog.dataset == "opendialkg",
                       people=self._people_named(without_possessives(bare)), bearable=self.bearable,
                       plain=self.plain_subjects, latest=self.latest)
        return asked if asked.any or asked.kind else None

    def _names_nothing(self, text: str) -> bool:
        """Whether a message names nothing the reader knows: no title, person, genre, mood, era or subject."""
        return not (self._link_spans(text) or self._link_people(text) or genre_mentions(text) or moods_named(text)
                    or re.search(r"\b(19|20)\d\d|\d0s\b", normalize(text)) or subjects_asked(text))

    def _off_task(self, text: str) -> bool:
        """A message that asks for nothing a recommender can give and names nothing the reader knows
        (no genre, person, title, era, mood, subject or kind of item): asking is better than a guess."""
        if (_RECOMMENDING.search(text) or genre_mentions(text) or moods_named(text) or self._link_people(text)
                or asks_latest(text)):  # "what are the newest releases?" asks for the latest titles
            return False
        bare = normalize(text)
        if re.search(r"\b(19|20)\d\d|\d0s\b", bare) or subjects_asked(text):
            return False
        return bool(_OFF_TASK.search(text))

    def _liked_named(self, text: str, shown: Sequence[CatalogItem]) -> list[CatalogItem]:
        """Titles the message says the user likes ("One of my favs is X", "I loved X"), unless it says
        goodbye: known already, they are no choice."""
        if FAREWELL.search(text) or signs_off_at_end(text):
            return []
        return self._spoken_well_of(text, shown)

    def _spoken_well_of(self, text: str, shown: Sequence[CatalogItem]) -> list[CatalogItem]:
        """Titles the message says the user likes: "I love Avatar", "my favorite is Up"."""
        return [item for item, start in self._linked_spans(text, shown)
                if _LIKED_BEFORE.search(text[clause_bounds(text, start)[0]:start])]

    def _likened(self, text: str, shown: Sequence[CatalogItem], listed: Sequence[CatalogItem]
                 ) -> list[CatalogItem]:
        """[the item referred to, the title it is likened to] for "Do you think it is kind of like Trolls?",
        "Is the second one like Akira?"; [] when the message is no such question or names no title."""
        spans = sorted(self._link_spans(text), key=lambda span: span[1])
        for (first, _, end), (second, start, _) in zip(spans, spans[1:]):
            if first != second and likens_two(text, text[end:start]):  # "Is <A> similar to <B>?"
                return [first, second]
        match = likens_referred(text)
        if match is None or not shown:
            return []
        named = [item for item, start in self._linked_spans(text, shown) if start >= match.end()]
        if not named:
            return []
        referred = self._pointed(text[:match.end()], shown, listed) or [shown[0]]
        return [referred[0], named[0]] if referred[0] != named[0] else []

    def _pointed(self, text: str, shown: Sequence[CatalogItem], listed: Sequence[CatalogItem] = ()
                 ) -> list[CatalogItem]:
        """The shown items an ordinal points at: "the second one", "the first two", "both". An ordinal
        past the last reply's items (an answer showed one) points into the last list (`listed`)."""
        index = pointed_index(text)
        if listed and (len(shown) < 2 and (index not in (None, 0, -1) or _FIRST_N.search(text))):
            shown = listed
        if not shown:
            return []
        if match := _FIRST_N.search(text):
            count = _COUNTS[match.group(1).lower()]
            return list(shown[:count])
        if _BOTH.search(text) and len(shown) >= 2:
            return list(shown[:2])
        index = pointed_index(text)
        if index is not None and -len(shown) <= index < len(shown):
            return [shown[index]]
        if len(shown) % 2 and len(shown) > 1 and _MIDDLE.search(text):  # "the middle one" of three
            return [shown[len(shown) // 2]]
        return []

    def _people_named(self, text: str, earlier: frozenset[str] = frozenset()) -> list[tuple[str, int]]:
        """(person, position) of the people the text names, by full name or by a surname that
        stands for one person of the catalog ("done with Stallone"); a word of a person named
        earlier in the conversation is that person ("another Arnold movie" after Arnold
        Schwarzenegger)."""
        full = self._link_people(text)
        taken = [(start, end) for _, start, end in full]
        again = earlier_mentions(text, earlier, taken)
        taken += [(start, end) for _, start, end in again]
        alone = self.surnames.mentions(text, taken) + again
        alone += self.surnames.misspelt(text, taken + [(start, end) for _, start, end in alone])
        return sorted([(name, start) for name, start, _ in full + alone], key=lambda p: p[1])

    def _person_referred(self, text: str, reading: Reading) -> list[tuple[str, int]]:
        """"Would love to watch his movies", "more with her": the lead the titles the user spoke well of
        share (Will Smith of Men in Black, The Pursuit of Happyness and Concussion), or else the lead of the
        one item in focus; [] when the message points at no one or no lead stands out."""
        match = _HIS_FILMS.search(text)
        if match is None:
            return []
        liked = liked_lately(reading.mentioned, turns_back=2)
        items = [i for i in (self.catalog.get(x) for x in dict.fromkeys(liked or reading.focus)) if i is not None]
        counts = Counter(p for i in items for p in dict.fromkeys(
            [*i.people.get("star", ())[:2], *i.people.get("director", ())]))
        if not counts:
            return []
        (best, n), *rest = counts.most_common(2) + [("", 0)]
        shared = n >= 2 and n > rest[0][1]
        return [(best, match.start())] if shared or len(items) == 1 else []

    def _decided_apart(self, text: str, shown: Sequence[CatalogItem]) -> tuple[list, list]:
        """(taken, turned down): the titles of a message that takes one and turns another down, each
        in its own part ("I don't like Rocky, but I will watch The Shawshank Redemption")."""
        if not decisions_apart(text):
            return [], []
        taken, down = [], []
        for item, start in self._linked_spans(text, shown):
            (taken if part_takes(part_at(text, start)) else down).append(item)
        return taken, down

    def _title_spans(self, text: str) -> list[tuple[CatalogItem, int, int]]:
        """The titles the text names, less those inside a person's name ("Martin" of "Martin Scorsese's")."""
        people = [(start, end) for _, start, end in self._link_people(without_possessives(text))]
        return [(item, start, end) for item, start, end in self._link_spans(text)
                if not any(a <= start and end <= b for a, b in people)]

    def _names_a_title(self, text: str) -> bool:
        """Whether the text names a title on purpose: one of two or more words, or the whole message.
        A one-word title inside chatter ("Rainy Sunday here") is the word, not the film."""
        words = len(normalize(text).split())
        return any(len(normalize(text[start:end]).split()) >= min(2, words)
                   for _, start, end in self._title_spans(text))

    def _referred(self, text: str, linked: list[CatalogItem], shown: Sequence[CatalogItem], aspect: str,
                  listed: Sequence[CatalogItem] = ()):
        pool = list(listed) if len(shown) < 2 and listed else list(shown)
        if aspect in ("compare_children", "pick", "compare_year", "why"):  # the list, even after an answer
            return pool
        if aspect == "about" and not linked and _PLURAL_POINTER.search(text) and not self._pointed(text, shown):
            # "does anyone die in those?": every item the last reply showed (after an answer, the one it named)
            return list(shown)
        if linked:
            return linked[:1]
        pointed = self._pointed(text, shown, listed)
        if pointed:
            return pointed
        if len(pool) > 1 and _ALL_OF_THEM.search(question_sentence(text) or text):
            return pool  # "what are their ratings, these?": each of the shown items
        if shown and (points_back(text) or _THE_ITEM.search(text) or len(shown) == 1):
            return [shown[0]]
        if aspect in ("stars", "director", "year", "genres") and len(pool) > 1 and not _ONE_ITEM_WORD.search(text):
            return pool[:3]  # "anyone famous?" after a list points at no one title: its first few, each answered
        return []

    def _linked_spans(self, text: str, shown: Sequence[CatalogItem] = ()) -> list[tuple[CatalogItem, int]]:
        """The titles the text names; a title shared by several items means the one shown."""
        shown_by_title: dict[str, list[CatalogItem]] = {}
        for item in shown:
            shown_by_title.setdefault(normalize(item.title), []).append(item)
        out = []
        spans = self._title_spans(text)
        for item, start, _ in _shown_titles_named(text, shown, spans):  # "what is Up about?" after Up
            out.append((item, start))
        for item, start, _ in spans:
            namesakes = shown_by_title.get(normalize(item.title), [])
            # "Ghostbusters (1984)" of a list holding both Ghostbusters: the one of the year named
            same_year = [i for i in namesakes if i.year is not None and i.year == item.year]
            out.append(((same_year or namesakes or [item])[0], start))
        return out

    def _linked(self, text: str, shown: Sequence[CatalogItem] = ()) -> list[CatalogItem]:
        seen, out = set(), []
        for item, _ in self._linked_spans(text, shown):
            if item.item_id not in seen:
                seen.add(item.item_id)
                out.append(item)
        return out

    def _without_titles(self, text: str) -> str:
        spans = [(start, end) for _, start, end in self._title_spans(text)]
        for start, end in sorted(spans, reverse=True):
            text = text[:start] + " " * (end - start) + text[end:]
        return text

    def ranking_texts(self, dialogue: Dialogue, move: Optional[UserMove] = None) -> list[tuple[Role, str, list]]:
        """(role, text, items) of the conversation as the recommender should read it: each user message
        as the state holds what it asks (`DialogueState.asked`), the system turns as they were."""
        move = move if move is not None and move.state is not None else self.read(dialogue)
        asked = iter(move.state.asked)
        return [(u.role, u.text, u.items) if u.role == Role.AGENT else (u.role, next(asked, ""), [])
                for u in dialogue.utterances]

    def ranking_dialogue(self, dialogue: Dialogue, move: Optional[UserMove] = None) -> Dialogue:
        copy = Dialogue(crs_id=dialogue.crs_id)
        for role, text, items in self.ranking_texts(dialogue, move):
            if role == Role.USER:
                copy.add_user(text)
            else:
                copy.add_agent(text, items=list(items))
        return copy
