"""Keeping credentials out of logs.

An endpoint URL may carry a secret (``https://user:pass@host/v1`` or
``...?api_key=...``). The HTTP library under the OpenAI SDK logs every request
URL at INFO level, so URLs are scrubbed twice: where we print them ourselves
(`redact_url`) and in every log line that reaches a handler
(`RedactingFilter`, installed by `install_log_redaction`).
"""

from __future__ import annotations

import logging
import re
from typing import Iterable, Optional
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"
# Query parameters that commonly hold a secret.
SECRET_PARAMS = re.compile(r"(?i)^(api[-_]?key|key|token|access[-_]?token|secret|password|pass|sig|signature|auth)$")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]*(?::[^/\s@]*)?@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:api[-_]?key|key|token|access[-_]?token|secret|password|pass|sig|signature|auth)=)[^&\s\"']*"
)


def redact_url(url: Optional[str]) -> Optional[str]:
    """The URL without user/password and with secret-looking query values replaced."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if SECRET_PARAMS.match(k) else v) for k, v in pairs], safe="[]")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_text(text: str) -> str:
    """Scrub credentials from any URLs inside a free text (a log message)."""
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _SECRET_QUERY.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


class RedactingFilter(logging.Filter):
    """Rewrites each record's message with credentials scrubbed (never drops a record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is the logging module's business
            return True
        cleaned = redact_text(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install_log_redaction(handlers: Optional[Iterable[logging.Handler]] = None) -> None:
    """Add a `RedactingFilter` to the given handlers (default: every root handler)."""
    for handler in list(handlers if handlers is not None else logging.getLogger().handlers):
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
