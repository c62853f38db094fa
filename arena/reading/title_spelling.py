"""Titles written with a digit for letters ("Se7en", "M3GAN"), read as their plain spelling.

A user may type a film's stylised title where the catalog lists it plainly (ReDial has "Seven
(1995)"), or the other way round. A word with a digit between letters has two plain readings: the
number's own word when the letters around the digit begin and end it ("se" + 7 + "en" is "seven"),
and the usual letter for the digit ("m3gan" is "megan"). The reader takes a plain reading only when
the catalog's normalised titles hold it and do not hold the word as typed, so nothing else changes.
"""

from __future__ import annotations

import re
from typing import Callable

_NUMBER_WORDS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six",
                 "7": "seven", "8": "eight", "9": "nine"}
_LETTER_FOR = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b"}
# A word with one or more digits strictly inside letters: "se7en", "m3gan"; not "80s", "2nd" or "4ever".
_STYLED_WORD = re.compile(r"\b[A-Za-z]+\d[A-Za-z\d]*[A-Za-z]\b")


def plain_readings(word: str) -> list[str]:
    """The plain spellings a stylised word may stand for, most likely first."""
    low = word.lower()
    out = []
    single = re.fullmatch(r"([a-z]+)(\d)([a-z]+)", low)
    if single:
        before, digit, after = single.groups()
        number = _NUMBER_WORDS[digit]
        if number.startswith(before) and number.endswith(after) and len(before) + len(after) < len(number):
            out.append(number)
    if all(ch.isalpha() or ch in _LETTER_FOR for ch in low):
        out.append("".join(_LETTER_FOR.get(ch, ch) for ch in low))
    return [o for o in dict.fromkeys(out) if o != low]


def respelled(text: str, title_word: Callable[[str], bool]) -> str:
    """`text` with each stylised word that no title uses written as the plain reading a title uses
    (`title_word` says whether a normalised word occurs in the catalog's titles)."""
    def plain(match: re.Match) -> str:
        word = match.group(0)
        if title_word(word.lower()):
            return word
        reading = next((r for r in plain_readings(word) if title_word(r)), None)
        if reading is None:
            return word
        return reading.capitalize() if word[0].isupper() else reading  # a capital still marks a title
    return _STYLED_WORD.sub(plain, text)
