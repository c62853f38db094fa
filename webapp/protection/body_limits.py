"""Request bodies are bounded before they are read whole.

A probe posted four 100 MB bodies at once and the process grew by 1 GB: the
framework reads a JSON body into memory before any handler can look at it. The
largest body a page legitimately sends is a message with the conversation so far
(the Chatbot's value travels with each event), far below `body_limit`. This ASGI
middleware answers 413 at once when the declared Content-Length is above the
limit, and otherwise counts the bytes as they stream in (a chunked body declares
no length), answering 413 as soon as the count passes the limit: nothing past
it is ever held. The researcher app's uploads (`<admin>/upload`) are left to
Gradio's own streamed upload limit (`webapp.protection.upload_limits`).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Iterable

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MIN_BODY_BYTES = 1 << 20  # 1 MiB: room for a long conversation's history with the message
BODY_BYTES_PER_MESSAGE_CHAR = 64  # the history of up to `max_turns` messages, JSON-escaped
TOO_LARGE = b'{"detail": "This request is too large."}'


def body_limit(settings: Any) -> int:
    """The largest request body any page sends, with a wide margin."""
    return max(MIN_BODY_BYTES, BODY_BYTES_PER_MESSAGE_CHAR * settings.max_message_chars * settings.max_turns // 10)


class BodyLimitMiddleware:
    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *, max_bytes: int,
                 exempt_paths: Iterable[str] = ()):
        self.app = app
        self.max_bytes = int(max_bytes)
        self.exempt = {p.rstrip("/") for p in exempt_paths}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("path", "").rstrip("/") in self.exempt:
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await _too_large(send)
            return
        seen, refused, started = 0, False, False

        async def counted() -> dict[str, Any]:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    refused = True
                    if not started:
                        await _too_large(send)
                    return {"type": "http.disconnect"}  # the app stops reading; nothing more is taken in
            return message

        async def guarded(message: dict[str, Any]) -> None:
            nonlocal started
            if refused:
                return  # the 413 is the answer
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted, guarded)


async def _too_large(send: Send) -> None:
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(TOO_LARGE)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": TOO_LARGE})
