"""The knowledge graph files the neural systems were trained with.

`entity2id.json` (name -> id), `item_ids.json` (entity ids of recommendable
items), `kg.json` (head id -> [[relation, tail], ...]) and
`relation2id.json`. Edges are added in both directions, as in training.
The padding entity gets the next free id (`pad_id = number of entities`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from arena.runtime.config import ASSETS_DIR
from arena.runtime.imports import heavy_imports

if TYPE_CHECKING:  # torch is imported where a graph is used: the app builds its specs without it
    import torch

KG_FILES = ("entity2id.json", "item_ids.json", "kg.json", "relation2id.json")


def default_kg_dir(dataset: str) -> Path:
    """assets/catalogs/<dataset> (origin and licence in assets/catalogs/README.md)."""
    return ASSETS_DIR / "catalogs" / dataset


def missing_kg_files(directory: Path) -> list[str]:
    return [name for name in KG_FILES if not (Path(directory) / name).is_file()]


@dataclass
class KnowledgeGraph:
    directory: Path
    entity2id: dict[str, int]
    item_ids: list[int]
    triples: dict[str, list[list[int]]]
    relation2id: dict[str, int]

    @classmethod
    def load(cls, directory: Path) -> "KnowledgeGraph":
        directory = Path(directory)
        missing = missing_kg_files(directory)
        if missing:
            raise FileNotFoundError(f"knowledge-graph files missing in {directory}: {', '.join(missing)}")

        def read(name):
            return json.loads((directory / name).read_text(encoding="utf-8"))

        return cls(directory, read("entity2id.json"), read("item_ids.json"), read("kg.json"), read("relation2id.json"))

    @property
    def num_entities(self) -> int:
        return len(self.entity2id)

    @property
    def num_relations(self) -> int:
        return len(self.relation2id)

    @property
    def pad_id(self) -> int:
        return len(self.entity2id)

    @cached_property
    def id2entity(self) -> dict[int, str]:
        return {int(eid): name for name, eid in self.entity2id.items()}

    @cached_property
    def edges(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(edge_index [2, E], edge_type [E]), both directions, deduplicated, sorted."""
        with heavy_imports():
            import torch

        rows: list[tuple[int, int, int]] = []
        for entity in self.entity2id.values():
            for relation, tail in self.triples.get(str(entity), ()):
                rows.append((entity, tail, relation))
                rows.append((tail, entity, relation))
        if not rows:
            return torch.zeros(2, 0, dtype=torch.long), torch.zeros(0, dtype=torch.long)
        table = torch.unique(torch.tensor(rows, dtype=torch.long), dim=0)
        return table[:, :2].T.contiguous(), table[:, 2].contiguous()

    @cached_property
    def item_tensor(self) -> torch.Tensor:
        with heavy_imports():
            import torch

        return torch.tensor(self.item_ids, dtype=torch.long)
