"""The model inputs the code CRS Arena ran would build, step by step as it built them.

A test oracle, written independently of `crs.neural`: it uses Hugging Face
tokenizers the way that code did (flipping `truncation_side` and
`padding_side` on the tokenizer, `tokenizer.encode(..., truncation=True)`,
`tokenizer.pad(padding="max_length", pad_to_multiple_of=8)`), rapidfuzz with
its literal linking rule, and entity names before ids. The tests compare its
results with what the reference mode of the project's systems builds.

The steps, per turn of the CRS Arena page:
1. the page appends the user's message to the history, then hands the
   history *and* the message to the system: the context is history + message,
   so the message is in it twice;
2. every utterance of the context is linked: the 20 names of entity2id
   scoring best by WRatio, kept when the score is >= 90, in result order;
3. KBRD: the utterances joined by the BART separator, cut from the left to
   200 tokens, padded to a multiple of 8; the last 32 linked names as ids;
4. BARCOR: utterances labelled "User: " (even positions) or "System: " (odd),
   empty ones skipped but counted, joined by the separator, cut from the left
   to 200 tokens, padded;
5. UniCRS: the labelled utterances joined and ended by DialoGPT's end token,
   cut from the left to 128 tokens, followed by the tokens of "System:" and
   left-padded; the same utterances joined by RoBERTa's separator, cut from the
   left to 128 tokens and padded on the right; the last 43 (ReDial) or 20
   (OpenDialKG) linked names as ids.
"""

from __future__ import annotations

from pathlib import Path

from rapidfuzz import fuzz, process
from transformers import AutoTokenizer

PAD_MULTIPLE = 8


def linked_names(text: str, names: list[str]) -> list[str]:
    """The literal rule: 20 best by WRatio over all names, then those scoring at least 90."""
    best = process.extract(text, names, scorer=fuzz.WRatio, limit=20)
    return [name for name, score, _ in best if score >= 90]


def page_context(history: list[str], message: str) -> list[str]:
    """What the page passed on: its message list (which already ends with `message`) plus `message`."""
    messages = list(history) + [message]  # the page appended the new message before asking
    return messages + [message]


def conversation(history: list[str], message: str, names: list[str]) -> dict:
    context = page_context(history, message)
    entities: list[str] = []
    for utterance in context:
        entities.extend(linked_names(utterance, names))
    return {"context": context, "entity": entities}


def labelled(context: list[str]) -> list[str]:
    texts = []
    for position, utterance in enumerate(context):
        if utterance != "":
            texts.append(("User: " if position % 2 == 0 else "System: ") + utterance)
    return texts


def entity_ids(names: list[str], entity2id: dict[str, int], window: int, pad_id: int) -> list[int]:
    ids = [entity2id[name] for name in names[-window:] if name in entity2id]
    return ids or [pad_id]  # a batch of one padded to at least one position


def _padded(tokenizer, ids: list[int], max_length: int) -> dict:
    batch = tokenizer.pad({"input_ids": ids}, max_length=max_length, padding="max_length",
                          pad_to_multiple_of=PAD_MULTIPLE)
    return {"input_ids": list(batch["input_ids"]), "attention_mask": list(batch["attention_mask"])}


def load(folder: Path, special_tokens: dict | None = None):
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    if special_tokens:
        tokenizer.add_special_tokens(special_tokens)
    return tokenizer


def kbrd_inputs(conv: dict, tokenizer, entity2id: dict[str, int], pad_id: int,
                context_max_length: int = 200, entity_max_length: int = 32) -> dict:
    tokenizer.truncation_side = "left"
    text = tokenizer.sep_token.join(conv["context"])
    ids = tokenizer.encode(text, truncation=True, max_length=context_max_length)
    padded = _padded(tokenizer, ids, context_max_length)
    return {"context_ids": ids, "padded_ids": padded["input_ids"],
            "entity_ids": entity_ids(conv["entity"], entity2id, entity_max_length, pad_id)}


def barcor_inputs(conv: dict, tokenizer, context_max_length: int = 200) -> dict:
    tokenizer.truncation_side = "left"
    text = tokenizer.sep_token.join(labelled(conv["context"]))
    ids = tokenizer.encode(text, truncation=True, max_length=context_max_length)
    return {"context_ids": ids, "padded_ids": _padded(tokenizer, ids, context_max_length)["input_ids"]}


def unicrs_inputs(conv: dict, tokenizer, prompt_tokenizer, entity2id: dict[str, int], pad_id: int,
                  context_max_length: int, entity_max_length: int) -> dict:
    texts = labelled(conv["context"])
    tokenizer.truncation_side = "left"
    context_ids = tokenizer.encode(tokenizer.eos_token.join(texts) + tokenizer.eos_token, truncation=True,
                                   max_length=context_max_length)
    prompt_tokenizer.truncation_side = "left"
    prompt_ids = prompt_tokenizer.encode(prompt_tokenizer.sep_token.join(texts), truncation=True,
                                         max_length=context_max_length)
    bot_prompt = tokenizer.convert_tokens_to_ids(tokenizer.tokenize("System:"))
    tokenizer.padding_side = "left"
    generation = _padded(tokenizer, context_ids + bot_prompt, context_max_length + len(bot_prompt))
    prompt = _padded(prompt_tokenizer, prompt_ids, context_max_length)
    return {
        "context_ids": context_ids,
        "generation_ids": generation["input_ids"],
        "generation_mask": generation["attention_mask"],
        "prompt_ids": prompt["input_ids"],
        "prompt_mask": prompt["attention_mask"],
        "entity_ids": entity_ids(conv["entity"], entity2id, entity_max_length, pad_id),
    }


def recommendation(names: list[str]) -> str:
    """The recommendation turn as the page kept it (three names, Markdown line breaks)."""
    return "I would recommend the following items:  \n" + "".join(
        f"{position}: {name}  \n" for position, name in enumerate(names[:3], 1))
