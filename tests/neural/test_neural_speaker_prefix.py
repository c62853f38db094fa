import pytest

from crs.neural.barcor import _strip_speaker


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("System: Have you seen Heat?", "Have you seen Heat?"),
        ("System;  sure", "sure"),
        ("Steven Spielberg made it", "Steven Spielberg made it"),  # not a character set to strip
        ("  Try Heat (1995)  ", "Try Heat (1995)"),
    ],
)
def test_only_the_speaker_prefix_is_removed(raw, expected):
    assert _strip_speaker(raw) == expected
