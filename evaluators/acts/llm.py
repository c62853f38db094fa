"""The LLM act annotator: few-shot prompting through arena.llm.LLMClient.

One call per utterance, with up to `context_size` preceding utterances, asks
for {"intents": [...], "titles": [...]} (the prompt is the versioned file
assets/acts/llm_prompt_v2.txt). Intents outside the role's IARD inventory are
dropped; an answer with no usable intent raises AnnotationError. Titles the
model lists are merged with the ones our own title finder sees.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Optional

from arena.dialogue import Dialogue, Role
from arena.llm.call_guard import guarded_pool
from arena.llm.json_output import json_object
from evaluators.acts.base import ActAnnotator, AnnotationError
from evaluators.acts.artifacts import ACTS_ASSETS
from evaluators.acts.schema import intents_for, make_acts, normalise_intent
from arena.titles.linking import TitleLinker, find_mentions, shared_linker
from arena.titles.names import title_key

DEFAULT_PROMPT = ACTS_ASSETS / "llm_prompt_v2.txt"


def load_prompt(path: Path = DEFAULT_PROMPT) -> tuple[str, str]:
    """(version, prompt text). The file starts with "version: N" and a "---" line."""
    text = Path(path).read_text(encoding="utf-8")
    head, sep, body = text.partition("\n---\n")
    match = re.match(r"version:\s*(\S+)", head.strip())
    if not sep or not match:
        raise ValueError(f"{path}: expected a 'version: N' line and a '---' line before the prompt")
    return match.group(1), body.strip()


def _speaker(role: Role) -> str:
    return "USER" if role == Role.USER else "SYSTEM"


def build_messages(prompt: str, dialogue: Dialogue, index: int, context_size: int) -> list[dict[str, str]]:
    utts = dialogue.utterances
    lines = [f"{_speaker(u.role)}: {u.text}" for u in utts[max(0, index - context_size):index]]
    target = utts[index]
    lines.append(f"{_speaker(target.role)} (to label): {target.text}")
    allowed = ", ".join(intents_for(target.role))
    user = "Conversation:\n" + "\n".join(lines) + f"\nAllowed intents: {allowed}\nAnswer:"
    return [{"role": "system", "content": prompt}, {"role": "user", "content": user}]


def parse_answer(text: str, role: Role) -> tuple[list[str], list[str]]:
    """Intents and titles from a model answer; AnnotationError when no intent is usable."""
    allowed = set(intents_for(role))
    intents: list[str] = []
    titles: list[str] = []
    data = json_object(text)
    if data is not None:
        raw = data.get("intents", data.get("intent", []))
        raw = [raw] if isinstance(raw, str) else raw
        if isinstance(raw, list):
            intents = [normalise_intent(str(i), role) for i in raw if isinstance(i, (str, int))]
        raw_titles = data.get("titles", [])
        if isinstance(raw_titles, list):
            titles = [str(t).strip() for t in raw_titles if isinstance(t, (str, int)) and str(t).strip()]
    else:
        # Not JSON: accept intent codes written in the text, nothing else.
        codes = sorted(allowed, key=len, reverse=True)
        found = re.findall(r"(?<![\w-])(" + "|".join(re.escape(c) for c in codes) + r")(?![\w-])", text)
        intents = list(found)
    intents = [i for i in dict.fromkeys(intents) if i in allowed]
    if not intents:
        raise AnnotationError(f"no usable intent in model answer: {text[:200]!r}")
    return intents, titles


class LLMActAnnotator(ActAnnotator):
    name = "llm-acts"

    def __init__(self, client, *, prompt_path: Path = DEFAULT_PROMPT, model: Optional[str] = None,
                 context_size: int = 4, linker: Optional[TitleLinker] = None, use_catalog: bool = True,
                 parallel: Optional[int] = None):
        self.client = client
        self.model = model
        self.context_size = context_size
        self._linker = linker if linker is not None else (shared_linker() if use_catalog else None)
        self._prompt_version, self._prompt = load_prompt(prompt_path)
        self._prompt_hash = hashlib.sha256(self._prompt.encode("utf-8")).hexdigest()[:8]
        self._parallel = parallel or max(1, min(8, getattr(client, "concurrency", 1)))

    @property
    def version(self) -> str:
        return f"prompt{self._prompt_version}-{self._prompt_hash}"

    @property
    def model_label(self) -> Optional[str]:
        return self.client.describe(self.model)

    def _annotate_one(self, dialogue: Dialogue, index: int) -> tuple[list[str], list[list[Any]]]:
        utt = dialogue.utterances[index]
        messages = build_messages(self._prompt, dialogue, index, self.context_size)
        response = self.client.complete(
            messages, model=self.model, temperature=0.0, max_tokens=200, json_mode=True
        )
        intents, titles = parse_answer(response.text, utt.role)
        mentions = find_mentions(utt, self._linker)
        slots = [m.slot() for m in mentions]
        known = {title_key(m.title) for m in mentions}
        slots += [["TITLE", t] for t in titles if title_key(t) and title_key(t) not in known]
        return intents, slots

    def _annotate_in_place(self, dialogue: Dialogue, overwrite: bool) -> None:
        todo = [i for i, u in enumerate(dialogue.utterances) if overwrite or u.dialogue_acts is None]
        with guarded_pool(max_workers=self._parallel) as pool:
            results = list(pool.map(lambda i: self._annotate_one(dialogue, i), todo))
        for i, (intents, slots) in zip(todo, results):
            dialogue.utterances[i].dialogue_acts = make_acts(intents, slots)
