"""Systems that join the arena from a file (ARENA_SYSTEMS): any CRS behind an HTTP API that
speaks `crs.external.contract`, or ChatCRS on an OpenAI-compatible endpoint of its own.

`systems_file` reads and checks the file, `specs` turns its entries into the registry specs the
built-ins use (so they appear wherever a built-in does), `http_crs` is the client side of the
contract and `server` its reference implementation (`crs-arena serve-crs`).
"""
