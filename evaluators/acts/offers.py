"""Two exact corrections to the title mentions an utterance yields.

- A catalog link that is only the start of a longer capitalised name ("Ted" in
  "Ted Lasso") is not a mention of that title.
- A title the system has just named, repeated by the user in any case ("ok
  district 9 then"), is a mention of that title.

Both only compare strings; neither says anything about the utterance's intent.
"""

from __future__ import annotations

import re
from typing import Sequence

from arena.titles.linking import Mention
from arena.titles.names import clean_title, years_in_parens


def cut_short(text: str, mention: Mention) -> bool:
    """A catalog link that is only the start of a longer name ("Ted" in "Ted Lasso")."""
    linked = text[mention.start:mention.end]
    if mention.source != "catalog" or mention.start < 0 or next(years_in_parens(linked), None) is not None:
        return False
    return re.match(r" [A-Z][a-z]", text[mention.end:mention.end + 3]) is not None


def echoed_mentions(text: str, offered: list[Mention], taken: Sequence[Mention] = ()) -> list[Mention]:
    """Titles the system just offered, repeated by the user in any case ("ok district 9 then")."""
    out: list[Mention] = []
    for offer in offered:
        bare = clean_title(offer.title)
        if len(bare) < 2:
            continue
        # Short titles ("Up", "It") only as written by the system, capitals included.
        flags = re.IGNORECASE if len(bare) >= 4 else 0
        for m in re.finditer(r"(?<!\w)" + re.escape(bare) + r"(?!\w)", text, flags=flags):
            if not any(k.start < m.end() and m.start() < k.end for k in [*taken, *out]):
                out.append(Mention(title=offer.title, start=m.start(), end=m.end(), source="echo"))
    return out
