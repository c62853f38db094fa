"""Gradio tabs. Each module exposes `build(services)`, called inside a `gr.Tab`."""
