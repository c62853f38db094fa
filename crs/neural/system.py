"""What the three neural systems share: turn handling, entity linking,
the recommend-or-chat policy, and mapping entity ids to catalog items.

The policy is CRS Arena's: each turn the generator scores one option letter
per action ("ask about genre", ..., "recommend"); the best letter, after a
large penalty for letters chosen earlier in the dialogue, decides whether
the reply is the generated utterance or the top-ranked items. That penalty
is dialogue state; here it is recomputed from the dialogue itself (and
memoised by dialogue prefix), so `respond` needs nothing but the dialogue.

In reference mode (`RuntimeOptions.mode`) the context, the recommendation
turn and the final steps of a chat reply are those of the code CRS Arena ran
(`crs.neural.reference`).
"""

from __future__ import annotations

import hashlib
import threading
from abc import abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from cachetools import LRUCache
import torch

from arena.dialogue import Dialogue, RecommendedItem, Role
from arena.conversation.crs_interface import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender
from arena.runtime.devices import move_tensors, running_on
from crs.neural import reference
from crs.neural.kg import KnowledgeGraph
from crs.neural.variants import RuntimeOptions
from crs.neural.weights import LoadReport

# Option letters per dataset; the last one means "recommend now" (as in CRS Arena).
POLICY_OPTIONS = {"redial": ("A", "B", "C", "D"), "opendialkg": ("A", "B", "C", "D", "E")}
PENALTY = -1e5


@dataclass(frozen=True)
class Turn:
    role: Role
    text: str

    @property
    def is_user(self) -> bool:
        return self.role == Role.USER


@dataclass
class NeuralReply:
    text: str
    items: list[RecommendedItem]  # what the reply shows (empty unless it recommends)
    ranking: list[RecommendedItem] = field(default_factory=list)  # up to TOP_K_KEPT, best first
    action: str = "chat"  # "recommend" or "chat"
    option: str = ""


class _LRU:
    """`cachetools.LRUCache` behind a lock: cachetools' caches are not thread-safe, and a reply's raw
    text is remembered outside the system's turn lock."""

    def __init__(self, size: int):
        self._data: LRUCache = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            return self._data.get(key)

    def put(self, key, value) -> None:
        with self._lock:
            self._data[key] = value


@contextmanager
def _threads(count: Optional[int]):
    """Run with `count` torch threads. With OpenMP the setting belongs to the calling
    thread, so other threads (and other sessions' turns) are not affected."""
    if not count:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _prefix_key(turns: list[Turn]) -> str:
    digest = hashlib.sha256()
    for turn in turns:
        digest.update(turn.role.value.encode())
        digest.update(b"\x00")
        digest.update(turn.text.encode("utf-8"))
        digest.update(b"\x01")
    return digest.hexdigest()


def catalog_linker(catalog, kg: KnowledgeGraph) -> Callable[[str], list[int]]:
    """Entity ids mentioned in a text, via the catalog's fuzzy entity linking."""

    def link(text: str) -> list[int]:
        ids = []
        for name, eid in catalog.link_entities(text):
            eid = kg.entity2id.get(name, eid)
            if 0 <= int(eid) < kg.num_entities:
                ids.append(int(eid))
        return ids

    return link


def catalog_items(catalog, kg: KnowledgeGraph, dataset: str) -> Callable[[int], RecommendedItem]:
    """Entity id -> catalog item; the KG's entity name when the catalog lacks it."""

    def lookup(entity_id: int) -> RecommendedItem:
        item = catalog.by_entity_id(entity_id) if catalog is not None else None
        if item is not None:
            return item.to_recommended()
        return RecommendedItem(item_id=f"{dataset}:entity:{entity_id}", title=kg.id2entity.get(entity_id, str(entity_id)))

    return lookup


# A chat reply whose every sentence named a title it did not show.
CHAT_FALLBACK = "What kind of movie are you in the mood for?"


class NeuralCRS(ConversationalRecommender):
    """Base of KBRD, BARCOR and UniCRS. Subclasses implement the model calls."""

    family = "neural"
    # KBRD/UniCRS add the penalty to a letter each time it is chosen; BARCOR sets it.
    accumulate_penalty = True

    def __init__(
        self,
        name: str,
        dataset: str,
        kg: KnowledgeGraph,
        linker: Callable[[str], list[int]],
        items: Callable[[int], RecommendedItem],
        *,
        entity_max_length: Optional[int] = None,
        shown: int = TOP_K_SHOWN,
        options: Optional[RuntimeOptions] = None,
    ):
        self.name = name
        self.dataset = dataset
        self.kg = kg
        self.options = POLICY_OPTIONS[dataset]
        self.entity_max_length = entity_max_length
        self.runtime = options or RuntimeOptions()
        self.shown = reference.SHOWN if self.runtime.reference else shown
        self._linker = linker
        self._items = items
        # The last step of a generated (chat) reply: `load` sets the one title check every
        # system's reply passes (no sentence may name a title the reply does not show).
        self.reply_check: Callable[[str], str] = lambda text: text
        self._links = _LRU(20000)
        self._policy = _LRU(20000)
        # Reference mode: this system's replies as it made them (the dialogue stores them stripped).
        self._raw_replies = _LRU(20000)
        self.load_reports: list[LoadReport] = []  # what loading each checkpoint left out
        # One turn at a time per system: on a small CPU, parallel forwards only slow each other down.
        self._lock = threading.RLock()

    # -- to implement -----------------------------------------------------------
    @abstractmethod
    def prepare(self, turns: list[Turn], entities: list[int]) -> Any:
        """Model inputs for the dialogue so far (shared by the calls below)."""

    @abstractmethod
    def option_scores(self, inputs: Any) -> torch.Tensor:
        """The generator's scores of the option letters (1-D, in `self.options` order)."""

    @abstractmethod
    def generate(self, inputs: Any) -> str:
        """The generated utterance."""

    @abstractmethod
    def rank(self, inputs: Any, k: int) -> list[int]:
        """Entity ids of the top-k items, best first."""

    # -- public -----------------------------------------------------------------
    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        reply = self.reply(dialogue)
        return reply.text, reply.items

    def reply(self, dialogue: Dialogue) -> NeuralReply:
        turns, done = self._turns(dialogue)
        with self._running():
            state = self._state_before(turns, done)
            inputs = self.inputs(turns)
            option, state_after = self._choose(inputs, state)
            self._policy.put(_prefix_key(turns), state_after)
            if option == self.options[-1]:
                entity_ids = self.rank(inputs, TOP_K_KEPT)
                ranking = self._to_items(entity_ids)
                shown = ranking[: self.shown]
                if self.runtime.reference:
                    names = [self.kg.id2entity.get(eid, str(eid)) for eid in entity_ids[: self.shown]]
                    text = self._remember_raw(reference.recommendation_text(names))
                else:
                    text = self.recommendation_text(shown)
                return NeuralReply(text, shown, ranking, "recommend", option)
            if self.runtime.reference:  # the reply as the original made it: no filter, no fallback
                return NeuralReply(self._remember_raw(self.generate(inputs)), [], [], "chat", option)
            text = self.reply_check(self.generate(inputs).strip()) or CHAT_FALLBACK
            return NeuralReply(text, [], [], "chat", option)

    def recommend(self, dialogue: Dialogue, k: int = TOP_K_KEPT) -> list[RecommendedItem]:
        """The system's item ranking for the dialogue so far, whatever the policy says."""
        turns, _ = self._turns(dialogue)
        with self._running():
            return self._to_items(self.rank(self.inputs(turns), k))

    def inputs(self, turns: list[Turn]) -> Any:
        """Model inputs for the dialogue so far, in this system's mode."""
        context = self.context_turns(turns)
        return self.prepare(context, self._entities(context))

    def context_turns(self, turns: list[Turn]) -> list[Turn]:
        """The turns the models read: the dialogue's, or in reference mode the original's context."""
        if not self.runtime.reference:
            return turns
        return [Turn(role, text) for role, text in reference.reference_context(turns, self._raw_reply)]

    def dialogue_details(self) -> dict[str, Any]:
        """Recorded in the metadata of every dialogue with this system."""
        return {"neural_mode": self.runtime.mode}

    def to_device(self, device: str) -> "NeuralCRS":
        """Move the models and precomputed tensors to `device`; later turns run there (16-bit on a GPU)."""
        move_tensors(self, device)
        self.runtime = replace(self.runtime, device=device)
        return self

    @staticmethod
    def recommendation_text(items: list[RecommendedItem]) -> str:
        lines = [f"{i}. {item.title}" for i, item in enumerate(items, 1)]
        return "You might enjoy these:\n" + "\n".join(lines)

    # -- internals --------------------------------------------------------------
    @contextmanager
    def _running(self):
        """One turn's context: this system's lock, threads, no autograd, device and precision."""
        with self._lock, _threads(self.runtime.threads), torch.inference_mode(), \
                running_on(self.runtime.device, half=self.runtime.half_precision):
            yield

    def _remember_raw(self, text: str) -> str:
        self._raw_replies.put(text.strip(), text)
        return text

    def _raw_reply(self, stored: str) -> str:
        """An earlier reply as the original's page kept it (unstripped) where this process made it."""
        raw = self._raw_replies.get(stored)
        return raw if raw is not None else reference.restore_raw(stored)

    @staticmethod
    def _turns(dialogue: Dialogue) -> tuple[list[Turn], list[int]]:
        """The dialogue as turns, and the indexes of replies this system produced
        (agent turns after a user turn) — the ones that moved the policy. Failed
        replies (the runner's apologies) are not the model's words and are left out."""
        turns, done = [], []
        for utterance in dialogue.utterances:
            if utterance.error:
                continue
            if utterance.role == Role.AGENT and turns:
                done.append(len(turns))
            turns.append(Turn(utterance.role, utterance.text))
        return turns, done

    def _entities(self, turns: list[Turn]) -> list[int]:
        found: list[int] = []
        for turn in turns:
            ids = self._links.get(turn.text)
            if ids is None:
                ids = list(self._linker(turn.text))
                self._links.put(turn.text, ids)
            found.extend(ids)
        if self.entity_max_length:
            found = found[-self.entity_max_length :]
        return found

    def _choose(self, inputs: Any, state: list[float]) -> tuple[str, list[float]]:
        scores = self.option_scores(inputs).float()
        index = int(torch.argmax(scores + torch.tensor(state, dtype=scores.dtype)))
        after = list(state)
        after[index] = after[index] + PENALTY if self.accumulate_penalty else PENALTY
        return self.options[index], after

    def _state_before(self, turns: list[Turn], done: list[int]) -> list[float]:
        """Penalties after the system's earlier replies; replays any not memoised."""
        state = [0.0] * len(self.options)
        pending: list[int] = []
        for index in reversed(done):
            known = self._policy.get(_prefix_key(turns[:index]))
            if known is not None:
                state = list(known)
                break
            pending.append(index)
        for index in reversed(pending):
            prefix = turns[:index]
            _, state = self._choose(self.inputs(prefix), state)
            self._policy.put(_prefix_key(prefix), state)
        return state

    def _to_items(self, entity_ids: list[int]) -> list[RecommendedItem]:
        return [self._items(int(eid)) for eid in entity_ids]
