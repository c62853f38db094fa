"""Pieces the tabs share: rendering, refusals, the aspect form, score cards, styles, the participant."""
