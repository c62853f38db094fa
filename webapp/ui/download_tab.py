"""Download tab: the rated corpus, votes and scores, filtered, with a dataset card.

Each request writes a fresh export folder under the system temporary
directory (Gradio serves files from there); only the last few folders of
this process are kept.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any, Optional

import gradio as gr

from arena.corpus.bundle import ExportFilter, export_bundle
from webapp.memory_allocator import release_free_memory
from webapp.services import Services
from webapp.ui.leaderboard_tab import KIND_CHOICES
from webapp.sessions.turn_step import refused_when_full

KEEP_EXPORTS = 8
ZIP_NAME = "crs-arena-corpus.zip"


class ExportFolders:
    """Fresh temporary folders, deleting the oldest beyond `keep`."""

    def __init__(self, keep: int = KEEP_EXPORTS):
        self._keep = keep
        self._folders: deque[Path] = deque()
        self._lock = threading.Lock()

    def new(self) -> Path:
        folder = Path(tempfile.mkdtemp(prefix="crs-arena-export-"))
        with self._lock:
            self._folders.append(folder)
            while len(self._folders) > self._keep:
                shutil.rmtree(self._folders.popleft(), ignore_errors=True)
        return folder


def system_names(services: Services) -> list[str]:
    """Registered systems first, then any other system found in the stored votes or dialogues."""
    names = list(services.registry.names)
    for vote in services.store.list_votes():
        for name in (vote.crs_a, vote.crs_b):
            if name not in names:
                names.append(name)
    return names


def prepare(
    services: Services, folders: ExportFolders, systems: Optional[list[str]], kind_value: Optional[str]
) -> tuple[list[str], str]:
    flt = ExportFilter(
        crs_ids=tuple(systems) if systems else None,
        user_kind=None if kind_value in (None, "", "all") else kind_value,
    )
    salt = services.settings.pseudonym_salt
    result = export_bundle(services.store, folders.new(), flt, zip_name=ZIP_NAME,
                           salt=salt.get_secret_value() if salt else None)
    card = result.files["card"].read_text(encoding="utf-8")
    # Show the card without its YAML header.
    body = card.split("---\n", 2)[2] if card.startswith("---\n") else card
    order = ["zip", "dialogues", "votes", "scores_csv", "scores_parquet", "card"]
    return [str(result.files[key]) for key in order], body


def build(services: Services) -> None:
    folders = ExportFolders()
    gr.Markdown(
        "Download the rated corpus (published under CC BY 4.0): every conversation in the CRSArena-Dial "
        "layout with its feedback, battle vote and automatic scores (`dialogues.jsonl`), the votes "
        "(`votes.csv`), the scores (`scores.csv`, `scores.parquet`) and a dataset card (`README.md`). "
        "User ids are pseudonyms. The same export is available from the command line: "
        "`python -m evaluators export --out DIR`."
    )
    with gr.Row():
        systems = gr.CheckboxGroup(
            choices=system_names(services), value=[], label="Systems (none ticked: all)",
            elem_id="download-systems", scale=3,
        )
        kind = gr.Radio(KIND_CHOICES, value="all", label="Users", elem_id="download-kind", scale=2)
    button = gr.Button("Prepare download", variant="primary", elem_id="download-prepare")
    files = gr.File(label="Files", file_count="multiple", interactive=False, elem_id="download-files")
    card = gr.Markdown("", elem_id="download-card")

    def on_prepare(chosen: list[str], kind_value: str) -> tuple[Any, ...]:
        try:
            with refused_when_full():  # a full disk: one line, and no file of the export is left half-written
                return prepare(services, folders, chosen or None, kind_value)
        finally:
            # the export held every stored dialogue at once, a size that grows with the corpus: its freed
            # pages go back now, not at the idle sweep's next pass (a minute later under load)
            release_free_memory()

    button.click(on_prepare, [systems, kind], [files, card], api_name="download")
