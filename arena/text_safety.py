"""Stored text on its way out: system ids checked on the way in, Markdown/HTML escaped for pages,
spreadsheet formulas neutralised in CSV and Parquet cells.

* An imported system id is shown on researcher pages and in the dataset card; one holding
  `<img src=...>` loaded an outside image there. Ids are now letters, digits, `_ . : -` only
  (`SYSTEM_ID`), checked on import, and every stored text placed into Markdown passes
  `escape_markdown`.
* A vote comment beginning with `=` reached `votes.csv` as a formula. As OWASP advises for CSV
  injection, a text cell beginning with `= + - @`, a tab or a carriage return is prefixed with
  a single quote, which spreadsheets show but do not evaluate (`neutralise_cell`).
"""

from __future__ import annotations

import html
import re
from typing import Any

# Letters and digits of any script, "_", ".", ":" and "-": nothing Markdown or HTML could read as markup.
SYSTEM_ID = re.compile(r"^[\w.:-]{1,100}$")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~<])")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def valid_system_id(value: str) -> bool:
    return bool(SYSTEM_ID.match(value))


def escape_text(text: Any) -> str:
    """Escape HTML and Markdown so stored text is shown literally, line breaks kept (chat messages)."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def escape_markdown(text: Any) -> str:
    """`escape_text` on one line, quotes escaped too: safe inside a Markdown table cell or an attribute."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=True)).replace("\n", " ")


def neutralise_cell(value: Any) -> Any:
    """A text cell a spreadsheet would read as a formula, prefixed with `'`; anything else unchanged."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
