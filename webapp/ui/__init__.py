"""Gradio pages. Each tab module here exposes `build(services)`, called inside a `gr.Tab`;
`study_page` builds the page a recruited worker sees. `parts/` holds what several tabs render.
A larger page keeps its components in a `*_layout` module (`chat_layout`, `study_layout`), one builder
per part, and its events and their wiring in the tab module; no function here is over 110 lines
(`tests/architecture/test_builder_size.py`).
The rules a page follows live below it (`webapp.sessions`, `webapp.protection`, ...), never here."""
