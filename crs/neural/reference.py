"""Reference mode (ARENA_NEURAL_MODE=reference): what the code CRS Arena ran
gave the models and made of their outputs, for replication studies.

The differences from the default `arena` mode, each reproduced here:

- entity linking: every utterance of the context is matched against all
  entity names of the knowledge graph with rapidfuzz's WRatio (no text
  preprocessing), the 20 best kept when they score 90 or more, best first;
- the context: CRS Arena's page sent the user's new message both inside the
  history and as the message itself, so the models saw it twice; speakers
  ("User: " / "System: ") were assigned by position (even: user, odd:
  system), so the repeated message reads as the system's;
- earlier replies enter the context as the page kept them (not stripped: a
  recommendation ends in a Markdown line break);
- the recommendation turn: "I would recommend the following items:" and the
  knowledge graph's names of the top 3 items, numbered "1: ...";
- BARCOR's reply loses any leading "S", "y", "s", "t", "e", "m", ";" or ":"
  characters (the original's `lstrip("System;:")`), then surrounding space;
- UniCRS fills only "<pad>" in a reply, the i-th with the i-th ranked
  item's graph name ("" past the 50th); its movie token stays as generated.

Fp32 arithmetic, the original reply bounds and the absence of the title
filter are settings of `RuntimeOptions` and `crs.neural.loading`.
"""

from __future__ import annotations

from typing import Callable, Sequence

from arena.dialogue import Role
from crs.neural.kg import KnowledgeGraph

LINK_SCORE = 90  # WRatio at or above which a name counts as mentioned
LINK_LIMIT = 20  # best-scoring names considered per utterance
SHOWN = 3  # items named in a recommendation
RECOMMENDATION_HEADER = "I would recommend the following items:  \n"
UNICRS_PLACEHOLDER = "<pad>"  # the token CRS Arena asked UniCRS replies to be filled at
BARCOR_LEADING = "System;:"  # characters (not a prefix) stripped from the left of a BARCOR reply


def reference_linker(kg: KnowledgeGraph) -> Callable[[str], list[int]]:
    """Entity ids of the names that WRatio-match `text`, best first (ties in the graph's order).

    The score cutoff only skips names that could not pass the filter anyway: the
    result equals taking the 20 best of all names and keeping those scoring >= 90.
    """
    from rapidfuzz import fuzz, process

    names = list(kg.entity2id)
    ids = [int(kg.entity2id[name]) for name in names]

    def link(text: str) -> list[int]:
        found = process.extract(text, names, scorer=fuzz.WRatio, processor=None, limit=LINK_LIMIT,
                                score_cutoff=LINK_SCORE)
        return [ids[index] for _, _, index in found]

    return link


def recommendation_text(names: list[str]) -> str:
    lines = "".join(f"{index}: {name}  \n" for index, name in enumerate(names, 1))
    return RECOMMENDATION_HEADER + lines


def restore_raw(text: str) -> str:
    """A recommendation as the page kept it, from the stripped form a dialogue stores."""
    if text.startswith(RECOMMENDATION_HEADER.rstrip()) and not text.endswith("  \n"):
        return text + "  \n"
    return text


def reference_context(turns: Sequence, raw: Callable[[str], str] = restore_raw) -> list[tuple[Role, str]]:
    """The context the models saw, as (speaker, text), from the dialogue's turns (`.role`,
    `.text`): earlier replies as the page kept them (`raw`), the last user message repeated,
    and speakers by position. Empty texts keep their position but are left out (the arena
    stores no empty utterance, so KBRD, which kept them, sees the same context)."""
    texts = [turn.text if turn.role == Role.USER else raw(turn.text) for turn in turns]
    if turns and turns[-1].role == Role.USER:
        texts.append(turns[-1].text)
    return [(Role.USER if index % 2 == 0 else Role.AGENT, text) for index, text in enumerate(texts) if text]


def barcor_reply(text: str) -> str:
    return text.lstrip(BARCOR_LEADING).strip()


def fill_placeholders(text: str, names: list[str]) -> str:
    """Each "<pad>" of `text`, in order, replaced by the next of `names` ("" when they run out)."""
    for index in range(text.count(UNICRS_PLACEHOLDER)):
        text = text.replace(UNICRS_PLACEHOLDER, names[index] if index < len(names) else "", 1)
    return text
