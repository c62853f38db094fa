"""How the researcher pages show a table that may have no rows yet."""

from __future__ import annotations

from typing import Any, Optional

import gradio as gr
import pandas as pd


def shown_table(table: Optional[pd.DataFrame]) -> Any:
    """A table, hidden while it has no rows (an empty one would show placeholder headers "1, 2, 3")."""
    if table is None or table.empty:
        return gr.update(value=None, visible=False)
    return gr.update(value=table, visible=True)
