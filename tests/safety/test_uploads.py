"""Uploads (issue 26): the public app, which has no file input, refuses every upload; the researcher
app caps them at ARENA_MAX_UPLOAD_BYTES."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402


def upload(url: str, size: int) -> httpx.Response:
    files = {"files": ("big.bin", b"x" * size, "application/octet-stream")}
    return httpx.post(url + "gradio_api/upload", files=files, timeout=60)


def test_public_app_refuses_uploads_and_admin_caps_them(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_upload_bytes=2_000_000)
    public, public_url = launch(services)
    try:
        refused = upload(public_url, 5_000_000)  # the probe sent 100 MB; 5 MB shows the same
        assert refused.status_code == 413
        assert upload(public_url, 10).status_code == 413
    finally:
        public.close()
    admin, admin_url = launch(services, admin=True)
    try:
        assert upload(admin_url, 1_000).status_code == 200
        assert upload(admin_url, 3_000_000).status_code == 413
    finally:
        admin.close()
