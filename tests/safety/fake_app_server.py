"""The real one-port server (public pages, study page, researcher pages behind a login) with scripted
systems, run as its own process the way `crs-arena serve` runs it (logging set up as `webapp.serve.main`
does, uvicorn through `webapp.one_port.serve`), so a test reads the log an operator would see.

    python tests/safety/fake_app_server.py PORT FOLDER
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from webapp.one_port import serve  # noqa: E402
from webapp.protection.admin_auth import admin_checker, hash_password  # noqa: E402
from webapp.serve import build_app  # noqa: E402

PASSWORD = "a long enough password"


def main() -> None:
    port, folder = int(sys.argv[1]), Path(sys.argv[2])
    logging.basicConfig(level=logging.INFO)
    services = make_services(folder, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=5,
                             admin_users=("ada",), admin_password_hash=hash_password(PASSWORD, iterations=1000))
    app = build_app(services, admin_auth=admin_checker(services.settings))
    serve(app, host="127.0.0.1", port=port, on_ready=lambda: print("READY", flush=True))


if __name__ == "__main__":
    main()
