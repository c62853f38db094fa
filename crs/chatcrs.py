"""ChatCRS: an LLM-based CRS with two ways of writing its replies.

`llm_led` (a capable endpoint): as in the original ChatCRS (iEvaLM, CRS
Arena) the LLM recommends from its own knowledge, with the recommender's
candidates offered in the prompt; the titles it names are linked to catalog
items and shown in the order named (`crs.llm_led`).
`grounded` (the bundled 135M model): the items come from the recommender and
the reply is assembled from their catalog entries; the model writes at most
one checked connecting sentence (`crs.grounded`).

The candidates come from `rank`: `crs.recommender` ranks the catalog from the
conversation so far (lexical and dense match, knowledge-graph neighbours,
co-mentions, popularity, negative feedback); items the user mentioned, turned
down or was already shown are excluded. Only a turn with nothing to go on
("hi") gets no candidates. Whatever the mode, the reply passes
`enforce_shown_titles`: it names no title it does not show.

Before any of this the dialogue policy (`crs.dialogue_policy`) reads the
user's act: a closing gets a farewell, a question about an item an answer
from its catalog entry, and the candidates leave out what was turned down
(with its sequels) and keep to the conversation's constraints (era, children,
unwanted genres, kind); list turns other than plain requests open with a
template saying what was done instead of the model's sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from arena.catalogs.catalog import CATALOG_DIR, DATASET_LABELS, DATASETS, Catalog, CatalogItem, load_catalog
from arena.runtime.config import ASSETS_DIR
from arena.dialogue import Dialogue, RecommendedItem, Role
from arena.llm import LLMClient, Message
from arena.catalogs.retrieval import INSTALL_FIX, ItemRetriever, embedding_problem
from arena.conversation.crs_interface import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender, CRSSpec, CRSUnavailable
from arena.conversation.simulator_interface import IntentReader
from arena.reading.acts import asks_only_for_others
from arena.reading.allowed import AllowedItems
from arena.reading.constraints import Constraints, era_phrase, genre_mentions, subject_given_up
from arena.reading.references import wants_the_series
from crs.dialogue_policy import DialoguePolicy, StatefulTurns, StateLedger, UserMove
from crs.grounded import NAMED_IN_TEXT, GroundedReplies, read_prompt
from crs.liked_models import model_titles, models_first
from crs.item_answers import answer, correction_note, farewell, greeting, list_opening, system_intro, taken
from crs.llm_led import LLMLedReplies, read_history
from crs.recommender import Recommender, load_recommender
from crs.state_reader import LLMStateReader
from crs.reply_check import enforce_shown_titles
from crs.shown_filter import answer_move
from crs.title_matching import TitleMatcher

PROMPTS_DIR = ASSETS_DIR / "prompts"
PROMPT_PATHS = {
    "llm_led": PROMPTS_DIR / "chatcrs_llm_led_v1.txt",
    "grounded": PROMPTS_DIR / "chatcrs_grounded_v1.txt",
}
PROMPT_PATH = PROMPT_PATHS["llm_led"]
MODES = tuple(PROMPT_PATHS)
NO_TITLE_FALLBACK = "What kind of {kind} would you like? Tell me a genre, a title you loved or an actor."
NARROW_DOWN = "Tell me a genre, an actor or a title you loved, and I'll narrow these down."
ITEM_KINDS = {"redial": "movies", "opendialkg": "movies, TV shows and books"}

MAX_REPLY_CHARS = 1200

_TAG = re.compile(r"<[^<>]*>")
_SPEAKER_PREFIX = re.compile(r"^\s*(assistant|system|recommender)\s*:\s*", re.IGNORECASE)


@dataclass
class ConversationView:
    """What the recommender reads of the conversation's state (`arena.conversation.dialogue_state.DialogueState`)."""

    mentioned: list[tuple[int, CatalogItem, bool]] = field(default_factory=list)  # (age, item, liked)
    shown_ids: set[str] = field(default_factory=set)
    has_preference: bool = False
    reacting_to_items: bool = False

    @property
    def recommend(self) -> bool:
        return self.has_preference or self.reacting_to_items

    def excluded(self) -> set[str]:
        return self.shown_ids | {item.item_id for _, item, _ in self.mentioned}


def clean_reply(text: str) -> str:
    """Plain text for the chat: no markup, no speaker label, bounded length."""
    text = _TAG.sub("", text or "")
    text = text.replace("<", "").replace(">", "")
    text = _SPEAKER_PREFIX.sub("", text)
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    if len(text) > MAX_REPLY_CHARS:
        cut = text[:MAX_REPLY_CHARS]
        end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
        text = cut[: end + 1] if end > MAX_REPLY_CHARS // 2 else cut.rstrip() + "..."
    return text


class ChatCRS(StatefulTurns, ConversationalRecommender):
    def __init__(
        self,
        name: str,
        catalog: Catalog,
        retriever: ItemRetriever,
        llm: LLMClient,
        *,
        mode: str = "llm_led",
        prompt_path: Optional[Path] = None,
        temperature: float = 0.0,
        max_tokens: int = 220,
        recommender: Optional[Recommender] = None,
        act_reader: Optional[IntentReader] = None,
        read_state_with_llm: bool = False,
    ):
        if mode not in MODES:
            raise ValueError(f"ChatCRS mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.name = name
        self.catalog = catalog
        self.retriever = retriever
        self.llm = llm
        self.mode = mode
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.item_kind = ITEM_KINDS.get(catalog.dataset, "items")
        path = Path(prompt_path or PROMPT_PATHS[mode])
        self.system_prompt = read_prompt(path, self.item_kind)
        self.prompt_version = path.stem
        self.matcher = TitleMatcher(catalog, retriever.encode)
        self.llm_led = LLMLedReplies(
            catalog, llm, self.matcher, self.system_prompt, clean_reply,
            temperature=temperature, max_tokens=max_tokens,
        )
        self.grounded = GroundedReplies(catalog, llm, self.system_prompt, self.item_kind, temperature=temperature)
        self.recommender = recommender or load_recommender(catalog.dataset, retriever, catalog=catalog)
        self.policy = DialoguePolicy(catalog, act_reader)
        if read_state_with_llm:  # the model reads each message into the state; the rules stand in
            self.policy.state_reader = LLMStateReader(llm, catalog)
        # Each part of the constraints ("no horror", "from the 1990s") read over the catalog once.
        self._allowed_items = AllowedItems(self.recommender.catalog.items)
        self._allowed_items.warm()
        self._states = StateLedger()

    # -- the turn -----------------------------------------------------------------
    def _reply(self, dialogue: Dialogue, move: UserMove) -> tuple[str, list[CatalogItem]]:
        """The act planned from the state, then its words: (text, items shown)."""
        fallback = NO_TITLE_FALLBACK.format(kind=self.item_kind.split(",")[0].rstrip("s"))
        turn = sum(1 for u in dialogue.utterances if u.role == Role.AGENT)
        if move.act == "end":
            return farewell(turn, books=move.constraints.kind == "book"), []
        kind = "book" if move.constraints.kind == "book" else "movie"
        if move.act == "chat" and move.aspect == "system":  # "what is this?": what it does, no list
            return system_intro(kind, move.text), []
        if move.act == "chat" and self.mode != "llm_led":  # a capable model greets in its own words
            return greeting(turn, kind, move.text), []
        if move.act == "accept":
            return taken(turn, move.about, move.text), []
        if move.act == "clarify":
            return move.state.understood, []
        if move.act == "question":
            text, shown = answer_move(move)
            return enforce_shown_titles(text, shown, self.catalog, fallback), shown
        view = self.view(move)
        asked = move.constraints
        candidates = self.candidates(dialogue, view, move)
        correction = correction_note(move.about) if move.act == "correction" else ""
        note = shortfall_note(asked, move.relaxed_to, len(candidates),
                              more=bool(view.excluded() | move.left_out), shown=candidates[:NAMED_IN_TEXT])
        lead = " ".join(part for part in (*move.notes, correction, note) if part)
        if self.mode == "llm_led":  # the LLM writes; what it names must still keep to the policy
            text, shown = self.llm_led.reply(dialogue, read_history(dialogue, view.mentioned), candidates)
            # Titles the model added against the conversation's rules go, with their sentences.
            kept = [i for i in shown if self._fits(i, move)]
            if kept or not shown:
                return enforce_shown_titles(text, kept, self.catalog, fallback), kept
        shown = candidates[:TOP_K_SHOWN]
        # Nothing said of what is wanted: no constraint and no title spoken well of ("I adored Home Alone").
        plain = move.act == "request" and not move.constraints.any and not self._models(move)[1]
        opening = None if plain else list_opening(move.act, move.constraints, turn,
                                                  turned_down=_turned_down_now(move))
        if note and opening and move.act in ("reject", "seen", "shrug") and ". " in opening:
            # What was done with the message comes first, then how few are left ("Understood, I'll
            # leave that one out. Only 3 more titles ... Some other ..."), not the other way round.
            done, rest = opening.split(". ", 1)
            opening = f"{done}. {note} {rest}"
            lead = " ".join(part for part in (*move.notes, correction) if part)
        writer = self.grounded if self.mode == "grounded" else GroundedReplies(
            self.catalog, None, self.system_prompt, self.item_kind)  # the catalog's facts, no model
        text = writer.reply(dialogue, shown, opening=opening, lead=lead, use_model=plain)
        if plain and shown and not move.state.shown:
            # Nothing said yet of what is wanted: well-liked titles, and one question to go further.
            text += "\n" + NARROW_DOWN
        return enforce_shown_titles(text, shown, self.catalog, fallback), shown

    def candidates(self, dialogue: Dialogue, view: Optional[ConversationView] = None,
                   move: Optional[UserMove] = None) -> list[CatalogItem]:
        """The recommender's items for this turn, best first (none before a preference is known).
        The one place the reply writers get their candidates from: the conversation's state, without
        what was turned down, under the state's constraints."""
        move = move or self.policy.read(dialogue)
        view = view or self.view(move)
        if move.act == "chat" or not (view.recommend or move.act in ("reject", "seen", "shrug")):
            return []  # small talk ("Hope you're having a good day") asks for no items
        context = self.policy.ranking_dialogue(dialogue, move)
        exclude = view.excluded() | move.left_out
        ranked = self.recommender.recommend(context, TOP_K_KEPT, exclude=exclude,
                                            allowed=self._allowed(move.constraints))
        # Nothing has all that was asked for: the wants of earlier messages go first, oldest first (the
        # last message says what is wanted now), then the subject, then the genres and people; what was
        # ruled out still stays out. The move keeps the rules its items keep to (the list's opening says
        # them, the stored state names what was given up).
        base = move.constraints.without_subjects().one_genre_enough()
        for looser in (*older_wants_given_up(move), move.constraints.without_subjects(), base,
                       *([base.without_era()] if base.people and base.years else []), move.constraints.loosened()):
            if ranked:
                break
            if looser == move.constraints:
                continue
            ranked = self.recommender.recommend(context, TOP_K_KEPT, exclude=exclude,
                                                allowed=self._allowed(looser))
            move.relaxed_to = move.constraints = looser
        # Titles held up as the model lead the list by their kind, not by their title's words.
        models, held = self._models(move)
        return models_first([r.item for r in ranked], models, held, lookalikes_allowed=wants_the_series(move.text))

    def _models(self, move: UserMove) -> tuple[list[CatalogItem], list[CatalogItem]]:
        """The move's model titles (`model_titles`), read once however many parts of the reply ask."""
        if move.models is None:
            move.models = model_titles(move.state, self.catalog, move.text)
        return move.models

    def _fits(self, item: CatalogItem, move: UserMove) -> bool:
        return item.item_id not in move.left_out and move.constraints.allows(item)

    def _allowed(self, constraints: Constraints) -> Optional[np.ndarray]:
        """One flag per catalog item: does the conversation's constraints allow it (None: all)."""
        if not constraints.any and constraints.kind is None:
            return None
        return self._allowed_items.flags(constraints)

    def analyse(self, dialogue: Dialogue) -> ConversationView:
        return self.view(self.policy.read(dialogue))

    def view(self, move: UserMove) -> ConversationView:
        """The recommender's reading of the conversation's state."""
        state = move.state
        ages = state.user_turns - 1
        mentioned = [(ages - m.turn, item, m.liked) for m in state.mentioned
                     if (item := self.catalog.get(m.item_id)) is not None]
        mentioned.sort(key=lambda entry: entry[0])
        return ConversationView(mentioned=mentioned, shown_ids=state.shown_ids(),
                                has_preference=state.has_preference,
                                reacting_to_items=bool(state.last_shown and state.user_turns))

    def rank(
        self, dialogue: Dialogue, state: Optional[ConversationView] = None
    ) -> list[tuple[CatalogItem, float]]:
        """The `TOP_K_KEPT` best items for the dialogue so far, best first, leaving out
        what the user named, rejected or was already shown."""
        state = state or self.analyse(dialogue)
        ranked = self.recommender.recommend(dialogue, TOP_K_KEPT, exclude=state.excluded())
        return [(r.item, r.score) for r in ranked]

    def recommend(self, dialogue: Dialogue, k: int = TOP_K_KEPT) -> list[RecommendedItem]:
        """The full ranking for the dialogue so far, whatever the reply policy says and
        with nothing left out (the offline evaluation protocol)."""
        ranked = self.recommender.rank(self.recommender.context_of(dialogue), k, leave_out_rejected=False)
        return [r.item.to_recommended() for r in ranked]

    # -- pieces ---------------------------------------------------------------------
    def build_messages(self, dialogue: Dialogue, candidates: list[CatalogItem]) -> list[Message]:
        """The LLM-led prompt for this dialogue with `candidates` offered as suggestions."""
        history = read_history(dialogue, self.analyse(dialogue).mentioned)
        return self.llm_led.build_messages(dialogue, history, candidates)


def _turned_down_now(move: UserMove) -> int:
    """How many titles the message turns down or says were seen: those it is about, else the last list
    where the conversation has turned something down (0: nothing was)."""
    if move.act == "reject" and asks_only_for_others(move.text):
        return 0  # "Anything else that's recent?" asks for more; it turns nothing down
    if move.about:
        return len(move.about)
    return len(move.last_shown) if (move.state and (move.state.turned_down or move.state.seen)) else 0


def shortfall_note(asked: Constraints, relaxed: Optional[Constraints], found: int, more: bool = False,
                   shown: Sequence[CatalogItem] = ()) -> str:
    """One plain sentence when the catalog could not fill the list with titles that keep to everything
    asked: what was given up, or how few titles fit (empty when the list is full and keeps to it all).
    `more`: titles shown, seen or turned down before were left out, so the few are the ones left, not all
    the catalog has ("only 3 more", not "only 3" after six were shown). `shown`: the titles the list
    shows, so a want they all still keep is not said to be given up."""
    if relaxed is not None and found == 0:
        return "Nothing in the catalog keeps to all of that."  # no list, so nothing to say was given up
    if relaxed is not None:
        # A want counts as given up only where a title shown lacks it: the ranker may still bring titles
        # that keep it (every pick still a Denzel Washington film: only "thriller" was given up).
        wants = [(g, Constraints(genres=frozenset({g}))) for g in sorted(asked.genres - relaxed.genres)]
        wants += [(p, Constraints(people=frozenset({p}))) for p in sorted(asked.people - relaxed.people)]
        wants += [(subject_given_up(s), Constraints(subjects=frozenset({s})))
                  for s in sorted(asked.subjects - relaxed.subjects)]
        dropped = [name for name, want in wants if not shown or not all(want.allows(i) for i in shown)]
        if asked.years and relaxed.years is None and (not shown or not all(
                Constraints(years=asked.years).allows(i) for i in shown)):
            dropped.append(f"being {era_phrase(asked.years)}")  # "these give up being from 2016 on"
        if dropped:
            what = ", ".join(dropped[:-1]) + (" and " if len(dropped) > 1 else "") + dropped[-1]
            return f"Nothing in the catalog keeps to all of that, so these give up {what}."
    elif 0 < found < TOP_K_SHOWN and (asked.genres or asked.people or asked.subjects):
        titles = "title in the catalog keeps" if found == 1 else "titles in the catalog keep"
        return f"Only {found} {'more ' if more else ''}{titles} to all of that."
    return ""


def older_wants_given_up(move: UserMove) -> list[Constraints]:
    """The move's constraints less the genres, people and subjects asked for before its message: first
    those of the oldest message, then of each later one, never those of the message itself."""
    reading = move.reading
    if reading is None:
        return []
    current = reading.user_turns - 1
    c = move.constraints
    wants = {"genre": c.genres, "person": c.people, "subject": c.subjects}
    # What the message names again ("a thriller with Sandra Bullock" after "a thriller") is its own want.
    restated = {("genre", g) for g, _ in genre_mentions(move.text)}
    said = move.text.lower()
    restated |= {(slot, v) for slot in ("person", "subject") for v in wants[slot] if v.lower() in said}
    since = {(slot, value): current if (slot, value) in restated
             else reading.sinces.get((slot, value, "want"), current)
             for slot, values in wants.items() for value in values}
    out = []
    for turn in sorted({t for t in since.values() if t < current}):
        kept = {slot: frozenset(v for v in values if since[(slot, v)] > turn)
                for slot, values in wants.items()}
        out.append(replace(c, genres=kept["genre"], any_genre=c.any_genre and bool(kept["genre"]),
                           people=kept["person"], subjects=kept["subject"]))
    return out


# -- registration -----------------------------------------------------------------------
def _check(name: str, dataset: str) -> Optional[CRSUnavailable]:
    if not (CATALOG_DIR / dataset / "id2info.json").exists():
        return CRSUnavailable(
            name,
            f"the {dataset} catalog is missing from {CATALOG_DIR / dataset}",
            "restore it with: git checkout -- assets/catalogs",
        )
    for path in PROMPT_PATHS.values():
        if not path.exists():
            return CRSUnavailable(name, f"the prompt file {path} is missing", "git checkout -- assets/prompts")
    problem = embedding_problem()
    if problem is not None:
        return CRSUnavailable(name, problem, INSTALL_FIX)
    return None


def _load(
    name: str,
    dataset: str,
    llm_client_factory: Callable[[], LLMClient],
    cache_dir: Path,
    catalog_loader: Callable[[str], Catalog],
    embed_threads: int = 1,
    *,
    prompt_path: Optional[Path] = None,
    temperature: float = 0.0,
    act_reader: Optional[IntentReader] = None,
) -> ChatCRS:
    catalog = catalog_loader(dataset)
    retriever = ItemRetriever(catalog, cache_dir, threads=embed_threads)
    retriever.prepare()  # embeds the catalog the first time (about a minute), then reads the cache
    llm = llm_client_factory()
    # With an LLM endpoint the model also reads each message into the conversation's state.
    return ChatCRS(name, catalog, retriever, llm, mode=mode_for(llm), prompt_path=prompt_path,
                   temperature=temperature, act_reader=act_reader,
                   read_state_with_llm=llm.provider_name == "openai")


def load_chatcrs(name: str, dataset: str, llm_client_factory: Callable[[], LLMClient], cache_dir: Path | str,
                 *, catalog_loader: Callable[[str], Catalog] = load_catalog, embed_threads: int = 1,
                 prompt_path: Optional[Path] = None, temperature: float = 0.0) -> ChatCRS:
    """One ChatCRS with its own LLM client, prompt and temperature (a system of the systems file)."""
    return _load(name, dataset, llm_client_factory, Path(cache_dir), catalog_loader, embed_threads,
                 prompt_path=prompt_path, temperature=temperature)


def chatcrs_problem(name: str, dataset: str) -> Optional[CRSUnavailable]:
    """What stops a ChatCRS on `dataset` from running here (catalog, prompts, embedding model)."""
    return _check(name, dataset)


def mode_for(llm: LLMClient) -> str:
    """The bundled small model only connects catalog facts; any other model leads."""
    return "grounded" if llm.provider_name == "local" else "llm_led"


def chatcrs_specs(
    llm_client_factory: Callable[[], LLMClient],
    cache_dir: Path | str,
    catalog_loader: Callable[[str], Catalog] = load_catalog,
    embed_threads: int = 1,
    act_reader: Optional[IntentReader] = None,
) -> list[CRSSpec]:
    """One ChatCRS per dataset: `chatcrs_redial` and `chatcrs_opendialkg`.

    `catalog_loader` maps a dataset name to its catalog (tests pass a smaller one);
    `act_reader` reads the user's act (None: the dialogue policy's rules).
    """
    specs = []
    for dataset in DATASETS:
        name = f"chatcrs_{dataset}"
        label = DATASET_LABELS[dataset]
        specs.append(
            CRSSpec(
                name=name,
                family="chatcrs",
                dataset=dataset,
                description=(
                    f"ChatCRS on {label}: with an LLM endpoint the LLM recommends and its titles are "
                    f"linked to the {label} catalog; with the bundled model the reply is built from "
                    f"the catalog entries of retrieved items."
                ),
                display_name=f"ChatCRS ({label})",
                summary=(f"A large language model that recommends movies, each title checked against the "
                         f"{label} movie catalog."),
                load=partial(_load, name, dataset, llm_client_factory, Path(cache_dir), catalog_loader,
                             embed_threads, act_reader=act_reader),
                check=partial(_check, name, dataset),
            )
        )
    return specs
