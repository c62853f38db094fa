"""The leaderboard plot's panel titles stay inside the image whatever the systems' names (issue 37: with long
names the axes moved right and the title, centred over them, was cut: "95% bootstrap C"). The image is
420 px wide at every page width (a phone scales it down whole), so fitting the image is fitting the page."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from arena.dialogue import Dialogue, Feedback, UserInfo, UserKind
from webapp.leaderboard.table import compute_leaderboard, leaderboard_figure


def rated(system: str, sentiment: str) -> Dialogue:
    d = Dialogue(crs_id=system, user=UserInfo(kind=UserKind.HUMAN, id="u"))
    d.add_user("hi")
    d.add_agent("hello")
    d.feedback = Feedback(sentiment=sentiment)
    return d


@pytest.mark.parametrize("names", [("kbrd", "unicrs"),
                                   ("a-very-long-system-name_redial", "barcor_opendialkg_with_a_long_tail")])
def test_every_panel_title_fits_the_image(names):
    table = compute_leaderboard([rated(n, s) for n in names for s in ("satisfied", "frustrated")], [])
    fig = leaderboard_figure(table, title="people")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    width = fig.bbox.width
    titles = [ax.title for ax in fig.axes]
    assert [t.get_text() for t in titles] == ["Bradley-Terry rating (95% bootstrap CI)",
                                              "Satisfaction rate (95% Wilson CI)"]
    for text in titles:
        box = text.get_window_extent(canvas.get_renderer())
        assert 0 <= box.x0 and box.x1 <= width, (text.get_text(), box.x0, box.x1, width)
