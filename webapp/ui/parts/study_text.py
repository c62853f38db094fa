"""A study's consent and instructions, shown as Markdown with an allowlist.

Study texts are written by researchers and shown to every recruited worker. The
page renders Markdown, which lets raw HTML through: a study file could load a
remote image (a tracking pixel that reports each worker's address), post a form
to another site or frame another page. `study_markdown` keeps the Markdown a
consent form needs (headings, emphasis, lists, tables, links, code) and turns
everything else into text:

* no raw HTML at all: every `<` outside code is written as `&lt;`, so a tag is
  shown as the text it is (`<form>`, `<iframe>`, `<img>`, `<script>`); an
  autolink `<https://...>` becomes an ordinary link;
* no images: `![alt](url)` becomes a link to `url`, which a worker may follow
  but which the page never fetches;
* links only to `http(s)`, `mailto:` or a page of this site: any other scheme
  (`javascript:`, `data:`) becomes `#`.

Code (fenced blocks and inline spans) is left as is: Markdown already shows it
as text.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.DOTALL)
_AUTOLINK = re.compile(r"<((?:https?://|mailto:)[^<>\s]+)>", re.IGNORECASE)
_IMAGE = re.compile(r"!(?=\[)")
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]*)")
_REFERENCE = re.compile(r"^( {0,3}\[[^\]]+\]:\s*)(\S+)", re.MULTILINE)
_SAFE_TARGET = re.compile(r"^(?:https?://|mailto:|/|#|\?|\.{0,2}/)|^[^:/?#]*$", re.IGNORECASE)


def _target(url: str) -> str:
    return url if _SAFE_TARGET.match(url) else "#"


def _prose(text: str) -> str:
    """Text outside code: autolinks kept as links, then no HTML, no images, only safe link targets."""
    text = _AUTOLINK.sub(lambda m: f"[{m[1]}]({m[1]})", text)
    text = text.replace("<", "&lt;")
    text = _IMAGE.sub(r"\\!", text)
    text = _LINK_TARGET.sub(lambda m: "](" + _target(m[1]), text)
    return _REFERENCE.sub(lambda m: m[1] + _target(m[2]), text)


def _outside_code_spans(text: str) -> str:
    out, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [_prose(text[last:span.start()]), span[0]]
        last = span.end()
    return "".join(out + [_prose(text[last:])])


def study_markdown(text: str) -> str:
    """`text` (a study's consent or instructions) as Markdown that renders no HTML, no image and no
    unsafe link (see the module doc)."""
    blocks, prose, fence = [], [], None
    for line in str(text or "").splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence is None and opened:
            blocks.append(_outside_code_spans("".join(prose)))
            prose, fence = [], opened[1]
            blocks.append(line)
        elif fence is not None:
            blocks.append(line)
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
        else:
            prose.append(line)
    blocks.append(_outside_code_spans("".join(prose)))
    return "".join(blocks)
