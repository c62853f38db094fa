"""`StorePart`, the base of each part of `arena.store.Store` (`Votes`, `Studies`, `ScoringQueue`, ...).

A part's methods run on the store's connections and call helpers another part defines (a battle's vote
checks the versions `DialogueVersions` reads). The declarations below tell the type checker what
`Store` provides; at run time the class is empty, so every call still reaches the one real method in
`Store`'s method resolution order, and a signature that drifts from its declaration is a type error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading
    from contextlib import AbstractContextManager
    from typing import Any, Iterable, Optional

    from sqlalchemy.engine import Connection

    from arena.dialogue import Dialogue, Score, Vote


class StorePart:
    """What the parts of `Store` may use of the whole store (declared for the type checker only)."""

    if TYPE_CHECKING:
        backend: str
        _engine_lock: threading.Lock

        @property
        def owner_id(self) -> str: ...

        def read(self) -> AbstractContextManager[Connection]: ...

        def write(self) -> AbstractContextManager[Connection]: ...

        def get_meta(self, key: str) -> Optional[str]: ...

        def set_meta(self, key: str, value: str) -> None: ...

        @staticmethod
        def _dialogue_row(d: Dialogue) -> dict[str, Any]: ...

        def _put_dialogue(self, conn: Connection, d: Dialogue) -> None: ...

        @staticmethod
        def _put_scores(conn: Connection, dialogue_id: str, scores: dict[str, Score]) -> None: ...

        def _put_board_row(self, conn: Connection, d: Dialogue) -> None: ...

        def _put_vote(self, conn: Connection, vote: Vote) -> None: ...

        @staticmethod
        def _scores_for(conn: Connection, ids: list[str]) -> dict[str, dict[str, Score]]: ...

        def _merge_scores(self, conn: Connection, dialogue_id: str, scores: dict[str, Score],
                          acts_from: Optional[Dialogue]) -> None: ...

        def _lock_keys(self, conn: Connection, keys: Iterable[tuple[str, str]], now: float) -> dict: ...

        @staticmethod
        def _check_versions(conn: Any, expected: Iterable[tuple[str, int]]) -> None: ...
