"""Systems tab (researcher app only): which systems can run here, why not, and the command that fixes it.

Checkpoint folders and `python -m crs download ...` are for whoever runs the
arena, so they live here and not on the public pages, which only offer the
systems that are ready.
"""

from __future__ import annotations

import gradio as gr

from webapp.services import Services
from arena.text_safety import escape_text


def systems_status_markdown(services: Services) -> str:
    rows = services.registry.status_table()
    lines = ["| system | name | status | why | how to fix |", "|---|---|---|---|---|"]
    for row in rows:
        fix = f"`{row['fix']}`" if row["fix"] else ""
        lines.append(f"| `{row['system']}` | {escape_text(row['name'])} | {row['status']} | "
                     f"{escape_text(row['why'])} | {fix} |")
    return "\n".join(lines)


def build(services: Services) -> None:
    gr.Markdown("The systems this app knows. Participants see only those that are ready, by name.")
    table = gr.Markdown(systems_status_markdown(services), elem_id="systems-status")
    refresh = gr.Button("Refresh", elem_id="systems-refresh")
    refresh.click(lambda: systems_status_markdown(services), None, table, api_name="systems_status")
