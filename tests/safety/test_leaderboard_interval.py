"""A Bradley-Terry estimate outside its own bootstrap interval still plots."""

from __future__ import annotations

import pandas as pd
import pytest

from webapp.leaderboard.table import COLUMNS, leaderboard_figure


def test_estimate_outside_its_interval_plots():
    pytest.importorskip("matplotlib")
    rows = [
        {col: None for col in COLUMNS} | {"system": "kbrd", "bt": 1040.0, "bt_low": 1000.0, "bt_high": 1030.0,
                                          "satisfaction": 1.0, "satisfaction_low": 0.2, "satisfaction_high": 1.0},
        {col: None for col in COLUMNS} | {"system": "unicrs", "bt": 960.0, "bt_low": 970.0, "bt_high": 1000.0,
                                          "satisfaction": 0.0, "satisfaction_low": 0.0, "satisfaction_high": 0.8},
    ]
    figure = leaderboard_figure(pd.DataFrame(rows, columns=COLUMNS))
    assert len(figure.axes) == 2
