"""CRB-CRS: answers with the most fitting human recommender turn from ReDial.

The retrieval-based CRS of the CRS Arena study (after Manzoor and Jannach's
CRB-CRS): instead of generating, it looks up the recommender turn whose
seeker context best matches the person's last message (BM25 over the
contexts, `bm25s`) and answers with it, its movie slots filled with the
recommender's items. The corpus is `assets/crb_crs/` (built from ReDial by
`scripts/build_crb_corpus.py`, CC BY 4.0).

Only turns that fit what the recommender has are eligible: when it has items,
turns with between one slot and as many slots as items; before the person
has said what they like, turns without slots and without a title written
out ("Perhaps Love and Friendship would be up your alley?" for "Hi!"). Turns already said in this
dialogue are skipped, and so are turns whose claims the filled items'
catalog genres do not bear out ("It's about a serial killer" for a romantic
comedy, "good for little ones" for a horror film), goodbyes in the middle
of a conversation, and turns whose filler answers or continues something this
conversation never said ("Yes I have seen that movie many times" when nobody
asked, "Hi!" on the third turn: `crs.crb_context`). The reply then passes the same title check as every
system, so a title written out in a human turn is never left unshown.

The dialogue policy (`crs.dialogue_policy`) comes first, shared with the
ranking ChatCRS: a closing gets a farewell, a question about an item is
answered from its catalog entry, and the candidates leave out what was turned
down and keep to the conversation's constraints.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from arena.catalogs.catalog import CATALOG_DIR, Catalog, CatalogItem, load_catalog
from arena.runtime.imports import heavy_imports
from arena.titles.phrases import normalize
from arena.runtime.config import ASSETS_DIR
from arena.dialogue import Dialogue, Role
from arena.llm import LLMClient
from arena.conversation.simulator_interface import IntentReader
from arena.catalogs.retrieval import INSTALL_FIX, ItemRetriever, embedding_problem
from arena.conversation.crs_interface import TOP_K_SHOWN, ConversationalRecommender, CRSSpec, CRSUnavailable
from arena.reading.constraints import child_friendly, has_genre, request_part
from crs.crb_context import TurnContext, context_problem, english
from crs.dialogue_policy import DialoguePolicy, StatefulTurns, StateLedger, UserMove
from crs.item_answers import answer, farewell, system_intro, taken
from crs.reply_check import enforce_shown_titles, named_titles
from crs.shown_filter import answer_move

log = logging.getLogger(__name__)

CORPUS_PATH = ASSETS_DIR / "crb_crs" / "redial_recommender_turns.jsonl"
BM25_PIN = "bm25s==0.3.11"
SEARCH_DEPTH = 100  # best-scoring turns looked at before giving up on finding a fitting one
FALLBACK_QUERY = "hi what kind of movies do you like"
_SLOT = re.compile(r"<movie_(\d)>")
_MENTION = re.compile(r"@\d+")
_DOUBLE_ARTICLE = re.compile(r"\b(?:the|a|an) ((?:The|A|An) )")
# What a human turn may claim about the films in its slots -> the catalog genres that bear it out.
CLAIMS = (
    (re.compile(r"\b(scary|horror|creepy|frightening|terrifying|spooky|gory|gore|slasher)\b", re.I),
     ("horror", "thriller")),
    (re.compile(r"\b(serial killer|murder\w*|killers?|crime|gangsters?|mafia|mob)\b", re.I),
     ("crime", "thriller", "horror", "mystery")),
    (re.compile(r"\b(funny|hilarious|comed(y|ies)|laugh\w*|humou?r\w*|spoofs?|parod(y|ies))\b", re.I),
     ("comedy",)),
    (re.compile(r"\b(romantic|romance|love story|chick flick|rom ?com)\b", re.I), ("romance",)),
    (re.compile(r"\b(animated|animation|cartoons?|pixar|disney)\b", re.I), ("animation", "family")),
    (re.compile(r"\b(action)\b", re.I), ("action",)),
    (re.compile(r"\b(war)\b", re.I), ("war", "history")),
    (re.compile(r"\b(sci-?fi|science fiction|aliens?)\b", re.I), ("sci fi", "science fiction")),
    (re.compile(r"\b(documentar(y|ies))\b", re.I), ("documentary",)),
    (re.compile(r"\b(musicals?|sung|singing|songs?)\b", re.I), ("musical", "music")),
    (re.compile(r"\b(football|baseball|basketball|soccer|hockey|boxing|sports?)\b", re.I), ("sport",)),
    (re.compile(r"\b(westerns?)\b", re.I), ("western",)),
    (re.compile(r"\b(adventures?)\b", re.I), ("adventure", "fantasy", "action")),
    (re.compile(r"\b(dramas?)\b", re.I), ("drama",)),
    (re.compile(r"\b(thrillers?|suspense\w*)\b", re.I), ("thriller", "mystery")),
)
_NAME_WORD = re.compile(r"\b[A-Z][\w'\-]+")
_STARTS = re.compile(r"(^|[.!?:]\s+|\s-\s|\()\W*$")
_CAPITALISED_ANYWAY = frozenset("i im ive id ill oh ok okay lol hi hello hey yes no yeah".split())
_ABOUT = re.compile(r"\babout (?:a |an |the |how |some )?([a-z]{4,})\b(?! (?:it|that|this))")
_FOR_CHILDREN = re.compile(r"\b(kids?|children|little ones|family|families|child)\b", re.I)
_GOODBYE = re.compile(r"\b(bye|goodbye|good night|have a (good|great|nice) (day|night|evening))\b", re.I)


@dataclass(frozen=True)
class RecommenderTurn:
    context: str
    response: str
    slots: int

    def filled(self, items: Sequence[CatalogItem]) -> str:
        text = _SLOT.sub(lambda m: items[int(m.group(1))].label, self.response)
        # "about the <slot>" filled with a title that has its own article: "the The Holiday"
        return _DOUBLE_ARTICLE.sub(r"\1", text)


def read_corpus(path: Path = CORPUS_PATH) -> list[RecommenderTurn]:
    turns = []
    with Path(path).open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                turns.append(RecommenderTurn(row["context"], row["response"], int(row["slots"])))
    return turns


def claims_problem(turn: RecommenderTurn, items: Sequence[CatalogItem]) -> Optional[str]:
    """Why the turn's claims do not fit the items it would be filled with (None: they fit).
    Read on the turn with its slots, so a title's words ("Scary Movie") are no claim."""
    text = _SLOT.sub(" ", turn.response)
    filled = list(items[: turn.slots])
    for pattern, genres in CLAIMS:
        match = pattern.search(text)
        if match and not any(has_genre(item, g) for item in filled for g in genres):
            return f"claims {match.group(0)!r}, which no filled item's genres bear out"
    if _FOR_CHILDREN.search(text) and not any(child_friendly(item) for item in filled):
        return "says it suits children, and no filled item is a family or animation title"
    if (match := _NEW.search(text)) and any(item.year and item.year < NEW_SINCE for item in filled):
        return f"calls an item new ({match.group(0)!r}) that is from before {NEW_SINCE}"
    if (match := _OLD.search(text)) and any(item.year and item.year >= OLD_BEFORE for item in filled):
        return f"calls an item old ({match.group(0)!r}) that is from {OLD_BEFORE} or later"
    if match := _ROLE.search(text):  # "She played a minor role": a part no filled entry names
        return f"states a role ({match.group(0)!r}) of someone it does not name"
    if match := _RELATION.search(text):  # "It's the movie <b> is a remake of": not in any catalog entry
        return f"states a tie between titles ({match.group(0)!r}) that the catalog does not hold"
    return unfounded_fact(text, filled)


NEW_SINCE = 2015  # the catalogs' conversations were collected about 2017-2018
OLD_BEFORE = 2000  # "a classic", "an old one": from well before then
_OLD = re.compile(r"\b(classics?|old school|oldies?|old (ones?|movies?|films?)|"
                  r"older (ones?|movies?|films?))\b", re.I)
_NEW = re.compile(r"\b(the new|newest|a new one|a new (movie|film)|brand new|just came out|came out recently|"
                  r"out now|recent one|recent years|yet to be released|not out yet|coming out|comes out|"
                  r"upcoming|in theaters?( now)?|recent (film|movie|one|release)s?)\b", re.I)
_ROLE = re.compile(r"\b(s?he|they) (played|plays|starred|stars|was in|is in)\b", re.I)
# Ties between titles that a catalog entry never states: a retrieved "<a> is a remake of <b>" would
# pin them on whatever items fill its slots.
_RELATION = re.compile(r"\b(remake[sd]?|(live|animated|new|old|original) version|"
                       r"sequels?|prequels?|the original|spin-?offs?|based on|adaptation|"
                       r"adapted from|version of|"
                       r"inspired by|same (director|actor|actress|cast|writer|guy|people|studio))\b", re.IGNORECASE)


def unfounded_fact(text: str, items: Sequence[CatalogItem]) -> Optional[str]:
    """A name or a subject the turn states that the filled items' catalog entries do not bear out:
    "an amazing film about Nelson Mandela" for a nature documentary. A capitalised word (past a
    sentence's first) must come from the items' titles, people or genres; "about <something>" must be in
    their plots, titles or genres."""
    known = set()
    for item in items:
        known.update(normalize(" ".join([item.title, item.plot, *item.genres,
                                         *(n for names in item.people.values() for n in names)])).split())
    for match in _NAME_WORD.finditer(text):
        word = normalize(match.group(0))
        if word and word not in known and word not in _CAPITALISED_ANYWAY and not _STARTS.search(text[:match.start()]):
            return f"names {match.group(0)!r}, which no filled item's catalog entry holds"
    for match in _ABOUT.finditer(text):
        word = normalize(match.group(1))
        if word not in known:
            return f"says it is about {match.group(1)!r}, which no filled item's catalog entry holds"
    return None


class CRBCRS(StatefulTurns, ConversationalRecommender):
    def __init__(
        self,
        name: str,
        catalog: Catalog,
        corpus: Sequence[RecommenderTurn],
        candidates: Callable[..., list[CatalogItem]],
        policy: Optional[DialoguePolicy] = None,
    ):
        """`candidates(dialogue, move=...)` ranks for the turn (the ranking ChatCRS's `candidates`);
        `policy` reads the user's act and constraints (shared with that ChatCRS)."""
        import bm25s

        self.name = name
        self.catalog = catalog
        self.corpus = list(corpus)
        self.candidates = candidates
        self.policy = policy or DialoguePolicy(catalog)
        self._states = StateLedger()
        self._bm25s = bm25s
        self.index = bm25s.BM25()
        self.index.index(
            bm25s.tokenize([t.context for t in self.corpus], stopwords="en", show_progress=False),
            show_progress=False,
        )
        self._slots = np.array([t.slots for t in self.corpus])
        self.fit_context = True  # False: turns are chosen without `crs.crb_context` (for measuring it)
        english()  # its word list is read here, not on the first turn
        self.policy.message_acts.warm()  # and the message-act reader's encoder

    def _reply(self, dialogue: Dialogue, move: UserMove) -> tuple[str, list[CatalogItem]]:
        turns_so_far = sum(1 for u in dialogue.utterances if u.role == Role.AGENT)
        if move.act == "end":
            return farewell(turns_so_far), []
        if move.act == "accept":
            return taken(turns_so_far, move.about, move.text), []
        if move.act == "clarify":
            return move.state.understood, []
        if move.act == "chat" and move.aspect == "system":  # "what is this?": what it does, no list
            return system_intro(message=move.text), []
        if move.act == "question":
            text, shown = answer_move(move)
            text = enforce_shown_titles(text, shown, self.catalog, fallback="What kind of movies do you like?")
            return text, shown
        items = self.candidates(dialogue, move=move)[:TOP_K_SHOWN]
        said = {u.text for u in dialogue.utterances if u.role == Role.AGENT}
        query = _last_user_text(dialogue)
        if move.act == "reject":
            query = request_part(query) or query
        elif move.act in ("correction", "shrug"):
            query = FALLBACK_QUERY
        context = self.context_of(dialogue) if self.fit_context else None
        turn = self.retrieve(query, len(items), said, items, context)
        if turn is None:  # nothing eligible: recommend in plain words, or ask
            text = "You might like " + " or ".join(i.label for i in items[:2]) + "." if items else (
                "What kind of movies do you like?"
            )
            shown = list(items[:2])
        else:
            shown = list(items[: turn.slots])
            text = turn.filled(shown)
        text = enforce_shown_titles(text, shown, self.catalog, fallback="What kind of movies do you like?")
        if move.notes and shown:  # a liked title or a studio the catalog lacks: said in one line first
            text = " ".join(move.notes) + " " + text
        return text, shown

    def context_of(self, dialogue: Dialogue) -> TurnContext:
        last_user = _last_user_text(dialogue)
        agents = [u for u in dialogue.utterances if u.role == Role.AGENT]
        return TurnContext(last_user=last_user, agent_turns=len(agents),
                           recommended_before=any(u.items for u in agents),
                           user_named_title=bool(self.catalog.link(last_user, limit=1)),
                           user_named_person=bool(self.catalog.link_people(last_user)),
                           named_years=tuple(i.year for i in self.catalog.link(last_user) if i.year))

    def retrieve(
        self, query: str, item_count: int, said: set[str] = frozenset(), items: Sequence[CatalogItem] = (),
        context: Optional[TurnContext] = None,
    ) -> Optional[RecommenderTurn]:
        """The best turn for `query` with 1..item_count slots (none when item_count is 0) whose filler
        fits `context` (every turn when None)."""
        mask = (self._slots >= 1) & (self._slots <= item_count) if item_count else self._slots == 0
        if not mask.any():
            return None
        tokens = self._tokens(query) or self._tokens(FALLBACK_QUERY)
        depth = min(SEARCH_DEPTH, int(mask.sum()))
        rows, scores = self.index.retrieve(
            [tokens], k=depth, weight_mask=mask.astype(float), show_progress=False, n_threads=1
        )
        for row, score in zip(rows[0], scores[0]):
            if score <= 0 or not mask[row]:
                continue
            turn = self.corpus[int(row)]
            if turn.filled(list(items)) in said or _GOODBYE.search(turn.response) or _repeats(turn.response):
                continue
            if not item_count and named_titles(turn.response, self.catalog):
                continue  # a turn with no slot that writes a title out recommends without the recommender
            if items and claims_problem(turn, items) is not None:
                continue
            years = [i.year for i in items[: turn.slots] if i.year]
            if context is not None and context_problem(turn.response, context, years) is not None:
                continue
            return turn
        return None

    def _tokens(self, text: str) -> list[str]:
        words = self._bm25s.tokenize(
            [_MENTION.sub("movie", text)], stopwords="en", return_ids=False, show_progress=False
        )[0]
        vocabulary = self.index.vocab_dict
        return [w for w in words if w in vocabulary]


def _repeats(text: str) -> bool:
    """"Hmm okay. What about @0 ? Hmm okay. What about @0 ?": a crowd turn that says a sentence twice."""
    sentences = [normalize(s) for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 2]
    return len(sentences) != len(set(sentences))


def _last_user_text(dialogue: Dialogue) -> str:
    return next((u.text for u in reversed(dialogue.utterances) if u.role == Role.USER), "")


# -- registration -----------------------------------------------------------------------
def _check(name: str) -> Optional[CRSUnavailable]:
    import importlib.util

    if not CORPUS_PATH.exists():
        return CRSUnavailable(
            name, f"the response corpus {CORPUS_PATH} is missing", "git checkout -- assets/crb_crs"
        )
    if not (CATALOG_DIR / "redial" / "id2info.json").exists():
        return CRSUnavailable(name, "the redial catalog is missing", "git checkout -- assets/catalogs")
    if importlib.util.find_spec("bm25s") is None:
        return CRSUnavailable(name, "the Python package bm25s is not installed", f"pip install {BM25_PIN}")
    problem = embedding_problem()
    return CRSUnavailable(name, problem, INSTALL_FIX) if problem is not None else None


def _load(
    name: str,
    llm_client_factory: Callable[[], LLMClient],
    cache_dir: Path,
    catalog_loader: Callable[[str], Catalog],
    act_reader: Optional[IntentReader] = None,
) -> CRBCRS:
    with heavy_imports():
        from crs.chatcrs import ChatCRS

    catalog = catalog_loader("redial")
    retriever = ItemRetriever(catalog, cache_dir)
    retriever.prepare()
    # The recommender's items: ChatCRS's candidate ranking (its LLM is never called here).
    ranker = ChatCRS(f"{name}-ranker", catalog, retriever, llm_client_factory(), act_reader=act_reader)
    return CRBCRS(name, catalog, read_corpus(), ranker.candidates, policy=ranker.policy)


def crb_crs_specs(
    llm_client_factory: Callable[[], LLMClient],
    cache_dir: Path | str,
    catalog_loader: Callable[[str], Catalog] = load_catalog,
    act_reader: Optional[IntentReader] = None,
) -> list[CRSSpec]:
    """`act_reader` reads the user's act (None: the dialogue policy's rules)."""
    name = "crb_crs_redial"
    return [
        CRSSpec(
            name=name,
            family="crb_crs",
            dataset="redial",
            description=(
                "CRB-CRS on ReDial: answers with the best-matching human recommender turn from "
                "ReDial, its movie mentions filled with retrieved catalog items."
            ),
            display_name="CRB-CRS (ReDial)",
            summary=("Answers with the best-matching reply a person once wrote in ReDial, with its movies "
                     "swapped for ones that fit your request."),
            load=partial(_load, name, llm_client_factory, Path(cache_dir), catalog_loader, act_reader),
            check=partial(_check, name),
        )
    ]
