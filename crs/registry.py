"""Which CRSs exist, which can run here, and one shared instance of each.

Loaded systems are shared by every session of the process: loading happens
once, under a per-system lock, so two sessions asking at once do not load a
model twice.
"""

from __future__ import annotations

import threading
from typing import Iterable, Optional

from arena.conversation.crs_interface import ConversationalRecommender, CRSSpec, CRSUnavailable


class CRSRegistry:
    def __init__(self, specs: Iterable[CRSSpec]):
        self._specs: dict[str, CRSSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"duplicate CRS name {spec.name!r}")
            self._specs[spec.name] = spec
        self._loaded: dict[str, ConversationalRecommender] = {}
        self._errors: dict[str, CRSUnavailable] = {}
        self._locks = {name: threading.Lock() for name in self._specs}

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    def spec(self, name: str) -> CRSSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise KeyError(f"unknown CRS {name!r}; known: {', '.join(self._specs)}") from None

    def title(self, name: str) -> str:
        """The name people read ("KBRD (ReDial)"); an id the registry does not know stays as it is."""
        spec = self._specs.get(name)
        return spec.title if spec is not None else name

    def blurb(self, name: str) -> str:
        """One line about the system in plain words ("" for an unknown id)."""
        spec = self._specs.get(name)
        return spec.blurb if spec is not None else ""

    def problem(self, name: str) -> Optional[CRSUnavailable]:
        """Why `name` cannot run here, or None if it can (cheap check)."""
        if name in self._errors:
            return self._errors[name]
        spec = self._specs.get(name)
        if name in self._loaded and not (spec is not None and spec.live_check):
            return None
        try:
            return self.spec(name).check()
        except Exception as exc:  # a broken check must not take the app down
            return CRSUnavailable(name, f"availability check failed: {exc}")

    def available(self) -> list[str]:
        return [n for n in self._specs if self.problem(n) is None]

    def status_table(self) -> list[dict[str, str]]:
        rows = []
        for name, spec in self._specs.items():
            problem = self.problem(name)
            rows.append(
                {
                    "system": name,
                    "name": spec.title,
                    "family": spec.family,
                    "dataset": spec.dataset,
                    "status": "ready" if problem is None else "unavailable",
                    "why": "" if problem is None else problem.reason,
                    "fix": "" if problem is None else problem.fix,
                    "health": self._health(spec),
                }
            )
        return rows

    @staticmethod
    def _health(spec: CRSSpec) -> str:
        """How an external system's calls went (empty for the built-ins)."""
        if spec.health is None:
            return ""
        try:
            return spec.health()
        except Exception as exc:  # a broken report must not take the table down
            return f"health unknown: {exc}"

    def get(self, name: str) -> ConversationalRecommender:
        """The shared, loaded instance of `name` (loads it on first use)."""
        spec = self.spec(name)
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded
        with self._locks[name]:
            loaded = self._loaded.get(name)
            if loaded is not None:
                return loaded
            problem = self.problem(name)
            if problem is not None:
                raise problem
            try:
                loaded = spec.load()
            except CRSUnavailable as exc:
                self._errors[name] = exc
                raise
            self._loaded[name] = loaded
            return loaded
