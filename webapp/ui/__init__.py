"""Gradio pages. Each tab module here exposes `build(services)`, called inside a `gr.Tab`;
`study_page` builds the page a recruited worker sees. `parts/` holds what several tabs render.
The rules a page follows live below it (`webapp.sessions`, `webapp.protection`, ...), never here."""
