"""How a Ray worker of a simulated run builds its own run manager.

Kept apart from `webapp.runs.evaluation` because it builds the app's whole
`Services` (which itself makes run managers): the run manager needs only the
recipe, a picklable callable, not the services.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webapp.runs.evaluation import RunManager
from webapp.services import build_services


@dataclass(frozen=True)
class WorkerRecipe:
    """How a Ray worker builds its run manager: the app's services from the same settings, no scorer."""

    settings: Any

    def __call__(self) -> RunManager:
        return build_services(self.settings, metrics="").run_manager()
