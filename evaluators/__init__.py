"""Dialogue evaluation: dialogue acts, RDL/SRRR/SR and CoRE (kept import-light)."""
