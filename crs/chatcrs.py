"""ChatCRS: an LLM writes the replies, the offline recommender picks the items.

As in the papers' LLM-based system, the model never invents the item list:
`crs.recommender` ranks the catalog from the conversation so far (lexical and
dense match, knowledge-graph neighbours, co-mentions, popularity, negative
feedback). The best `TOP_K_KEPT` are kept (`rank`), the best `TOP_K_SHOWN`
are shown and handed to the LLM as its only allowed candidates. Items the
user mentioned, turned down or was already shown are excluded. Any request
gets items on its first turn; only a turn with nothing to go on ("hi") gets a
question instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Optional


from arena.catalog import CATALOG_DIR, DATASETS, Catalog, CatalogItem, load_catalog
from arena.config import ASSETS_DIR
from arena.dialogue import Dialogue, RecommendedItem, Role
from arena.llm import LLMClient, LLMError, Message
from arena.mentions import normalize
from arena.retrieval import INSTALL_FIX, ItemRetriever, embedding_problem
from arena.crs_interface import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender, CRSSpec, CRSUnavailable
from crs.recommender import Recommender, load_recommender
from crs.recommender.context import SEEN_CUE, has_request_content, negated_before

PROMPT_VERSION = "chatcrs_v1"
PROMPT_PATH = ASSETS_DIR / "prompts" / f"{PROMPT_VERSION}.txt"
ITEM_KINDS = {"redial": "movies", "opendialkg": "movies, TV shows and books"}

HISTORY_UTTERANCES = 12  # utterances of context the LLM sees
MAX_REPLY_CHARS = 1200

_TAG = re.compile(r"<[^<>]*>")
_SPEAKER_PREFIX = re.compile(r"^\s*(assistant|system|recommender)\s*:\s*", re.IGNORECASE)


@dataclass
class DialogueState:
    """What the conversation so far tells the recommender."""

    mentioned: list[tuple[int, CatalogItem, bool]] = field(default_factory=list)  # (age, item, liked)
    shown_ids: set[str] = field(default_factory=set)
    user_texts: list[str] = field(default_factory=list)  # oldest first
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


class ChatCRS(ConversationalRecommender):
    def __init__(
        self,
        name: str,
        catalog: Catalog,
        retriever: ItemRetriever,
        llm: LLMClient,
        *,
        prompt_path: Path = PROMPT_PATH,
        temperature: float = 0.0,
        max_tokens: int = 220,
        recommender: Optional[Recommender] = None,
    ):
        self.name = name
        self.catalog = catalog
        self.retriever = retriever
        self.llm = llm
        self.temperature = temperature
        self.max_tokens = max_tokens
        item_kind = ITEM_KINDS.get(catalog.dataset, "items")
        self.system_prompt = Path(prompt_path).read_text(encoding="utf-8").replace("{item_kind}", item_kind)
        self.prompt_version = Path(prompt_path).stem
        self.recommender = recommender or load_recommender(catalog.dataset, retriever, catalog=catalog)

    # -- the turn -----------------------------------------------------------------
    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        state = self.analyse(dialogue)
        ranking = self.rank(dialogue, state) if state.recommend else []
        shown = [item for item, _ in ranking[:TOP_K_SHOWN]]
        response = self.llm.complete(
            self.build_messages(dialogue, shown),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        text = clean_reply(response.text)
        if not text:
            raise LLMError("the language model returned an empty reply")
        return text, [item.to_recommended() for item in self._mentioned_first(text, shown)]

    def analyse(self, dialogue: Dialogue) -> DialogueState:
        state = DialogueState()
        user_turns = [u for u in dialogue.utterances if u.role == Role.USER]
        for age, utterance in enumerate(reversed(user_turns)):
            linked = self.catalog.link_spans(utterance.text)
            for item, start, _ in linked:
                liked = not negated_before(utterance.text, start) and not SEEN_CUE.search(utterance.text)
                state.mentioned.append((age, item, liked))
            if linked or has_request_content(utterance.text) or self._has_attribute(utterance.text):
                state.has_preference = True
        state.user_texts = [u.text for u in user_turns]
        for utterance in dialogue.utterances:
            if utterance.role == Role.AGENT:
                state.shown_ids.update(item.item_id for item in utterance.items)
        last_agent = next((u for u in reversed(dialogue.utterances) if u.role == Role.AGENT), None)
        state.reacting_to_items = bool(last_agent and last_agent.items and user_turns)
        return state

    def rank(
        self, dialogue: Dialogue, state: Optional[DialogueState] = None
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
    def _has_attribute(self, text: str) -> bool:
        return bool(self.catalog.link_entities(text))

    def build_messages(self, dialogue: Dialogue, candidates: list[CatalogItem]) -> list[Message]:
        if candidates:
            lines = [f"{rank}. {_candidate_line(item)}" for rank, item in enumerate(candidates, 1)]
            note = (
                "Candidates for your next reply (recommend only from these, best match first):\n"
                + "\n".join(lines)
            )
        else:
            note = "No candidates this turn: do not recommend a title; ask what they would enjoy."
        messages: list[Message] = [{"role": "system", "content": f"{self.system_prompt.strip()}\n\n{note}"}]
        for utterance in dialogue.utterances[-HISTORY_UTTERANCES:]:
            if utterance.error or not utterance.text.strip():
                continue
            role = "user" if utterance.role == Role.USER else "assistant"
            messages.append({"role": role, "content": utterance.text.strip()})
        if len(messages) == 1 or messages[-1]["role"] != "user":
            messages.append({"role": "user", "content": "Hello!"})
        return messages

    def _mentioned_first(self, text: str, shown: list[CatalogItem]) -> list[CatalogItem]:
        """The shown items, those the reply talks about first (in the order it names them)."""
        reply = f" {normalize(text)} "
        positions = {}
        for item in shown:
            where = reply.find(f" {normalize(item.title)} ")
            if where >= 0:
                positions[item.item_id] = where
        named = sorted((i for i in shown if i.item_id in positions), key=lambda i: positions[i.item_id])
        return named + [i for i in shown if i.item_id not in positions]


def _candidate_line(item: CatalogItem) -> str:
    parts = [item.label]
    if item.genres:
        parts.append(", ".join(item.genres[:4]))
    if item.people.get("director"):
        parts.append("directed by " + ", ".join(item.people["director"][:2]))
    cast = item.people.get("star") or item.people.get("actor")
    if cast:
        parts.append("with " + ", ".join(cast[:3]))
    line = " | ".join(parts)
    if item.plot:
        plot = item.plot if len(item.plot) <= 220 else item.plot[:217].rsplit(" ", 1)[0] + "..."
        line += f" | {plot}"
    return line


# -- registration -----------------------------------------------------------------------
def _check(name: str, dataset: str) -> Optional[CRSUnavailable]:
    if not (CATALOG_DIR / dataset / "id2info.json").exists():
        return CRSUnavailable(
            name,
            f"the {dataset} catalog is missing from {CATALOG_DIR / dataset}",
            "restore it with: git checkout -- assets/catalogs",
        )
    if not PROMPT_PATH.exists():
        return CRSUnavailable(
            name, f"the prompt file {PROMPT_PATH} is missing", "git checkout -- assets/prompts"
        )
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
) -> ChatCRS:
    catalog = catalog_loader(dataset)
    retriever = ItemRetriever(catalog, cache_dir, threads=embed_threads)
    retriever.prepare()  # embeds the catalog the first time (about a minute), then reads the cache
    return ChatCRS(name, catalog, retriever, llm_client_factory())


def chatcrs_specs(
    llm_client_factory: Callable[[], LLMClient],
    cache_dir: Path | str,
    catalog_loader: Callable[[str], Catalog] = load_catalog,
    embed_threads: int = 1,
) -> list[CRSSpec]:
    """One ChatCRS per dataset: `chatcrs_redial` and `chatcrs_opendialkg`.

    `catalog_loader` maps a dataset name to its catalog (tests pass a smaller one).
    """
    specs = []
    for dataset in DATASETS:
        name = f"chatcrs_{dataset}"
        label = {"redial": "ReDial", "opendialkg": "OpenDialKG"}[dataset]
        specs.append(
            CRSSpec(
                name=name,
                family="chatcrs",
                dataset=dataset,
                description=(
                    f"ChatCRS on {label}: an LLM writes the replies; the items come from "
                    f"sentence-embedding retrieval over the {label} catalog."
                ),
                load=partial(_load, name, dataset, llm_client_factory, Path(cache_dir), catalog_loader,
                             embed_threads),
                check=partial(_check, name, dataset),
            )
        )
    return specs
