"""The optional aspect rating panel of the Chat and Battle tabs (its rules: `webapp.sessions.aspect_ratings`).

After Satisfied/Frustrated a compact panel asks for the dialogue-level aspects
of the rating form; every question may be left open and the whole panel
skipped. Reply-level aspects (relevance) are offered on each system message of
the chat through the Chatbot's feedback menu (`reply_options`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from arena.crowd.aspects import AspectForm


@dataclass
class AspectPanel:
    column: Any
    radios: list[Any]
    save: Any
    skip: Any
    note: Any

    @property
    def inputs(self) -> list[Any]:
        return list(self.radios)

    def show(self) -> tuple[Any, ...]:
        """Updates that open the panel with every answer cleared."""
        return (gr.Column(visible=True), *[gr.Radio(value=None) for _ in self.radios], "")

    def hide(self, note: str = "") -> tuple[Any, ...]:
        return (gr.Column(visible=False), *[gr.skip() for _ in self.radios], note)

    def keep(self, note: str) -> tuple[Any, ...]:
        """Updates that leave the panel open with every answer as picked, and say `note` (a refusal)."""
        return (gr.skip(), *[gr.skip() for _ in self.radios], note)

    @property
    def outputs(self) -> list[Any]:
        return [self.column, *self.radios, self.note]


def build_panel(form: AspectForm, elem_prefix: str, title: str = "Tell us more (optional)") -> AspectPanel:
    with gr.Column(visible=False, elem_id=f"{elem_prefix}-aspects") as column:
        gr.Markdown(f"**{title}.** Answer any of these, or skip them all.")
        radios = []
        with gr.Row(equal_height=False):
            for aspect in form.dialogue:
                choices = [(f"{v}" + (f" {aspect.points[v]}" if v in aspect.points else ""), v)
                           for v in aspect.scale()]
                radios.append(gr.Radio(choices, value=None, label=f"{aspect.label} ({aspect.scale_text()})",
                                       info=aspect.definition, elem_id=f"{elem_prefix}-aspect-{aspect.name}",
                                       min_width=180))
        with gr.Row():
            save = gr.Button("Save ratings", size="sm", elem_id=f"{elem_prefix}-aspects-save")
            skip = gr.Button("Skip", size="sm", variant="secondary", elem_id=f"{elem_prefix}-aspects-skip")
    note = gr.Markdown("", elem_id=f"{elem_prefix}-aspects-note")
    return AspectPanel(column=column, radios=radios, save=save, skip=skip, note=note)
