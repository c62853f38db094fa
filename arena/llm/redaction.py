"""Keeping credentials out of logs, stored errors and exports.

An endpoint URL may carry a secret (``https://user:pass@host/v1`` or
``...?api_key=...``), and an endpoint may echo its request headers
(``Authorization: Basic ...``, ``Bearer ...``, ``x-api-key: ...``) into an
error that then travels into logs, the database and the researcher export.
`redact_text` is the one function that scrubs all of them (URL userinfo,
secret query values, Basic/Bearer credentials, key=value secrets and the
shapes of common API keys); every sink uses it: each log record as it is made
(`install_log_redaction`, exception text included), each error the store
writes (`arena.store.engine`, `arena.store.scoring_queue`) and each error an export writes
(`arena.corpus.bundle`). `redact_url` is for URLs we print ourselves.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable, Optional
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"
# Query parameters that commonly hold a secret, and a study link's platform ids and preview key (kept
# only for the researchers' payment sheet, never in a log).
SECRET_PARAMS = re.compile(
    r"(?i)^(api[-_]?key|key|token|access[-_]?token|secret|password|pass|sig|signature|auth"
    r"|prolific_pid|session_id|worker_id|preview)$"
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]*(?::[^/\s@]*)?@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:api[-_]?key|key|token|access[-_]?token|secret|password|pass|sig|signature|auth"
    r"|prolific_pid|session_id|worker_id|preview)=)[^&\s\"']*"
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


# "Authorization: Basic dXNlcjpwYXNz", "'authorization': 'Bearer abc'", "Proxy-Authorization=Token x".
_AUTH_HEADER = re.compile(
    r"(?i)((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token|digest)?\s*)[^\s\"',;}]+")
# A bare "Basic xxx" / "Bearer xxx" outside a header: only a token that looks like one (a digit, one of
# "=+/", or a capital past its first letter), so "Basic Instinct" stays a film.
_AUTH_SCHEME = re.compile(
    r"\b((?i:basic|bearer)\s+)(?=[A-Za-z0-9._~+/=-]{6,})"
    r"(?:[A-Za-z0-9._~+/=-]*[0-9=+/][A-Za-z0-9._~+/=-]*|[A-Za-z0-9._~+/=-][a-z0-9._~+/=-]*[A-Z][A-Za-z0-9._~+/=-]*)")
# key = value / "key": "value" secrets, headers such as x-api-key included.
_SECRET_PAIR = re.compile(
    r"(?i)\b((?:x-)?(?:api[-_]?key|access[-_]?token|refresh[-_]?token|client[-_]?secret|secret|password|passwd)"
    r"[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&}]+")
# Shapes of keys that are secrets wherever they appear (OpenAI, Hugging Face, GitHub, AWS, Slack).
_KEY_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}"
    r"|xox[abpr]-[A-Za-z0-9-]{10,})\b")


def redact_text(text: str) -> str:
    """Scrub credentials of any kind from a free text (a log line, an error, an export cell)."""
    if not text:
        return text
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _SECRET_QUERY.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _SECRET_PAIR.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return _KEY_SHAPES.sub(REDACTED, text)


def redact_optional(text: Optional[str]) -> Optional[str]:
    return redact_text(text) if text else text


def redact_strings(value: Any) -> Any:
    """`redact_text` applied to every string inside nested dicts and lists (score details, metadata).

    Applied to values, never to serialised JSON: a pattern run over JSON text could join two fields."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_strings(v) for v in value)
    return value


def _redact_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a broken format string is the logging module's business
        return
    cleaned = redact_text(message)
    if cleaned != message:
        record.msg, record.args = cleaned, None
    if record.exc_info and not record.exc_text:
        # The traceback's text (an exception message may quote a header) is made now, scrubbed, and
        # kept: formatters use exc_text when it is set.
        record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redact_text(record.stack_info)


class RedactingFilter(logging.Filter):
    """Rewrites each record's message (and exception text) with credentials scrubbed; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        _redact_record(record)
        return True


_factory_installed = False


def install_log_redaction(handlers: Optional[Iterable[logging.Handler]] = None) -> None:
    """Scrub every log record as it is made (whatever handler, logger or library logs it), and add a
    `RedactingFilter` to the given handlers (default: every root handler) for records made elsewhere."""
    global _factory_installed
    if not _factory_installed:
        previous = logging.getLogRecordFactory()

        def factory(*args: object, **kwargs: object) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            _redact_record(record)
            return record

        logging.setLogRecordFactory(factory)
        _factory_installed = True
    for handler in list(handlers if handlers is not None else logging.getLogger().handlers):
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
