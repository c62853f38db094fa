"""Tokenizers, used without mutating them so that sessions can share them.

The originals flip `truncation_side` on a shared tokenizer before each call;
that is not safe across threads. Here truncation is done on the id lists:
the special tokens a tokenizer wraps a sequence in are kept and the content
is cut from the left (keep the latest turns) or the right.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from arena.runtime.imports import heavy_imports


def load_tokenizer(path: Path, special_tokens: Optional[dict] = None):
    """A Hugging Face tokenizer from a local folder (never the network)."""
    with heavy_imports():
        from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    if special_tokens:
        tokenizer.add_special_tokens(dict(special_tokens))
    return tokenizer


class Encoder:
    """Immutable view of a tokenizer: encode with truncation, decode."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        probe = tokenizer("a", add_special_tokens=False)["input_ids"]
        wrapped = tokenizer("a")["input_ids"]
        start = _find(wrapped, probe)
        self.prefix = list(wrapped[:start])
        self.suffix = list(wrapped[start + len(probe) :])

    def __len__(self) -> int:
        return len(self.tokenizer)

    def ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, text: str, max_length: Optional[int] = None, *, keep: str = "end", special: bool = True) -> list[int]:
        """Token ids of `text`; over `max_length` the content is cut, keeping its `keep` side."""
        content = self.ids(text)
        prefix, suffix = (self.prefix, self.suffix) if special else ([], [])
        if max_length is not None:
            room = max(0, max_length - len(prefix) - len(suffix))
            if len(content) > room:
                content = content[len(content) - room :] if keep == "end" else content[:room]
        return prefix + content + suffix

    def first_id(self, text: str) -> int:
        return self.ids(text)[0]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        text = self.tokenizer.decode(
            list(ids), skip_special_tokens=skip_special_tokens, clean_up_tokenization_spaces=False
        )
        return clean_up_spaces(text)

    def token_id(self, token: str) -> int:
        return int(self.tokenizer.convert_tokens_to_ids(token))

    @property
    def sep_token(self) -> str:
        return self.tokenizer.sep_token

    @property
    def eos_token(self) -> str:
        return self.tokenizer.eos_token

    @property
    def pad_token_id(self) -> int:
        return int(self.tokenizer.pad_token_id)


# The originals decoded with a library version that, by default, removed the space the
# byte-level tokenizers keep before punctuation and English contractions.
_CLEAN_UPS = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
    (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


def clean_up_spaces(text: str) -> str:
    for old, new in _CLEAN_UPS:
        text = text.replace(old, new)
    return text


def _find(haystack: Sequence[int], needle: Sequence[int]) -> int:
    for start in range(len(haystack) - len(needle) + 1):
        if list(haystack[start : start + len(needle)]) == list(needle):
            return start
    raise ValueError("tokenizer wraps text in a way that cannot be split into prefix and suffix")


def pad_length(length: int, max_length: int, multiple: int = 8) -> int:
    """The length `tokenizer.pad(padding="max_length", max_length, pad_to_multiple_of)` pads to."""
    target = max_length
    if multiple and target % multiple:
        target = (target // multiple + 1) * multiple
    return max(target, length)
