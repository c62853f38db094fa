"""One conversation step at a time per browser session.

Pressing Enter and then Send fires two events with the same text; a person
may also send again (or press Satisfied) while a reply is still being written.
Gradio runs such events concurrently, so without care the dialogue ends up as
user, user, assistant, assistant, or with a reply stored after the feedback.

`TurnGuard` serialises every step of one session (sends and feedback) and
recognises the second copy of a message: one that arrives while the same text
is being answered, or within a moment of the same text being answered. A
client that names its messages gets exact idempotency (`webapp.sessions.idempotent_sends`).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Optional

from arena.dialogue import Dialogue, Role, utc_now

# A repeated message this soon after the stored one is a double submission.
DUPLICATE_WINDOW_S = 2.0
# Sessions remembered at most; the oldest idle ones are forgotten first.
MAX_SESSIONS = 10_000


@dataclass
class _Entry:
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: Optional[str] = None
    users: int = 0
    latest: Optional[Dialogue] = None  # the conversation this session is having
    used_at: float = field(default_factory=time.monotonic)


@dataclass
class Step:
    """What a guarded step may know: whether its text repeats one just sent, and the session's dialogue."""

    duplicate: bool
    entry: _Entry

    @property
    def latest(self) -> Optional[Dialogue]:
        return self.entry.latest

    def remember(self, dialogue: Optional[Dialogue]) -> None:
        self.entry.latest = dialogue


class TurnGuard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    @contextmanager
    def step(self, key: str, text: Optional[str] = None) -> Iterator[Step]:
        """Hold the session's lock for one step; `text` is the message being sent, if any."""
        wanted = (text or "").strip() or None
        with self._lock:
            entry = self._entries.setdefault(key, _Entry())
            entry.users += 1
            entry.used_at = time.monotonic()
            duplicate = wanted is not None and entry.in_flight == wanted
        try:
            with entry.lock:
                mine = wanted is not None and not duplicate
                if mine:
                    entry.in_flight = wanted
                try:
                    yield Step(duplicate=duplicate, entry=entry)
                finally:
                    if mine:
                        entry.in_flight = None
        finally:
            with self._lock:
                entry.users -= 1
                # Idle entries are kept only while they remember a live conversation.
                if entry.users == 0 and (entry.latest is None or entry.latest.ended):
                    self._entries.pop(key, None)
                while len(self._entries) > MAX_SESSIONS:
                    idle = next((k for k, e in self._entries.items() if e.users == 0), None)
                    if idle is None:
                        break
                    del self._entries[idle]

    def forget_idle(self, idle_s: float) -> int:
        """Forget the sessions with no step for `idle_s` (`webapp.sessions.idle_sessions`); returns how many.
        Their conversations are in the store; a returning browser resumes from there."""
        cutoff = time.monotonic() - idle_s
        with self._lock:
            idle = [k for k, e in self._entries.items() if e.users == 0 and e.used_at < cutoff]
            for key in idle:
                del self._entries[key]
        return len(idle)

    def forget(self, key: str) -> None:
        """Forget the session's conversation (the participant deleted their dialogues)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                entry.latest = None


def repeats_last_message(dialogue: Optional[Dialogue], text: Optional[str]) -> bool:
    """Whether `text` is the dialogue's last user message, stored within the duplicate window."""
    text = (text or "").strip()
    if dialogue is None or not text:
        return False
    users = [u for u in dialogue.utterances if u.role == Role.USER]
    if not users or users[-1].text != text:
        return False
    # Counted from the reply: a copy queued behind a slow reply runs only once the reply is in.
    latest = max(users[-1].timestamp, dialogue.utterances[-1].timestamp)
    return (utc_now() - latest).total_seconds() < DUPLICATE_WINDOW_S

