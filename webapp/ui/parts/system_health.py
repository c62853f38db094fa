"""For the researcher app: every system's status and, for the systems of ARENA_SYSTEMS, how their
calls went (calls, failures, the last failure), refreshed on demand. Not on the public pages: a
failure's text names the server."""

from __future__ import annotations

import gradio as gr

from webapp.services import Services
from arena.text_safety import escape_text


def health_markdown(services: Services) -> str:
    lines = ["| system | name | family | dataset | status | why | health |", "|---|---|---|---|---|---|---|"]
    for row in services.registry.status_table():
        cells = [row["system"], row.get("name", ""), row["family"], row["dataset"], row["status"],
                 row["why"], row.get("health", "")]
        lines.append("| " + " | ".join(escape_text(str(c)) for c in cells) + " |")
    return "\n".join(lines)


def build(services: Services) -> None:
    with gr.Accordion("Systems and their health", open=False):
        table = gr.Markdown(health_markdown(services), elem_id="system-health")
        refresh = gr.Button("Refresh health", size="sm")
        refresh.click(lambda: health_markdown(services), outputs=table)
