"""Nothing private leaves through the public file route, and no body is read whole past the limit."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from tests.support.asgi_server import running  # noqa: E402
from webapp.protection.admin_auth import admin_checker, hash_password  # noqa: E402
from webapp.protection.body_limits import BodyLimitMiddleware, body_limit  # noqa: E402
from webapp.protection.private_files import LINKS, DownloadLinks  # noqa: E402
from webapp.serve import build_app  # noqa: E402

PASSWORD = "correct horse battery staple"


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=3,
                        admin_users=("ada",), admin_password_hash=hash_password(PASSWORD, iterations=1000))
    yield svc
    svc.store.close()


def test_researcher_exports_are_served_behind_the_login_only(services):
    from gradio_client import Client

    app = build_app(services, admin_auth=admin_checker(services.settings))
    with running(app) as url:
        researcher = Client(url + "/admin/", auth=("ada", PASSWORD), verbose=False, download_files=False)
        files, _card = researcher.predict([], "all", api_name="/download")
        served = {Path(f["path"]).name: f["path"] for f in files}
        cached = served["dialogues.jsonl"]
        assert Path(cached).exists()
        for public in ("/gradio_api/file=", "/study/gradio_api/file="):
            assert httpx.get(url + public + cached, timeout=30).status_code == 404
        assert httpx.get(url + "/admin/gradio_api/file=" + cached, timeout=30).status_code in (401, 403)
        with httpx.Client(base_url=url, timeout=30) as signed_in:
            assert signed_in.post("/admin/login", data={"username": "ada", "password": PASSWORD}).status_code == 200
            assert signed_in.get("/admin/gradio_api/file=" + cached).status_code == 200
        # The public page's own files still load.
        assert httpx.get(url + "/", timeout=30).status_code == 200


def test_a_participants_download_link_stops_working_once_the_data_is_deleted(services, tmp_path):
    from gradio.utils import get_upload_folder

    app = build_app(services)
    folder = Path(get_upload_folder()) / "own-test"
    folder.mkdir(parents=True, exist_ok=True)
    with running(app) as url:
        path = folder / LINKS.name_for("p-0123456789abcdef01234567")
        path.write_text('{"conversation_id": "mine"}\n')
        LINKS.written(path)
        link = url + "/gradio_api/file=" + str(path)
        assert httpx.get(link, timeout=30).status_code == 200  # no cookie needed while it lives
        assert LINKS.revoke("p-0123456789abcdef01234567") == 1
        assert httpx.get(link, timeout=30).status_code == 404 and not path.exists()
        forged = folder / ("my-dialogues-" + "A" * 32 + ".jsonl")  # a name no link handed out
        forged.write_text("x\n")
        assert httpx.get(url + "/gradio_api/file=" + str(forged), timeout=30).status_code == 404
        stray = folder / "someone-elses.jsonl"  # in Gradio's folders, but no public app handed it out
        stray.write_text("x\n")
        assert httpx.get(url + "/gradio_api/file=" + str(stray), timeout=30).status_code == 404


def test_only_the_apps_own_record_opens_the_public_file_route(services):
    """A file in Gradio's cache for the public app, that no public handler handed out through the app's
    record (`DownloadLinks`), is not served there: Gradio's own per-app sets of files are not read."""
    from gradio.utils import get_upload_folder

    app = build_app(services)
    public = next(r.app for r in app.routes if getattr(r, "path", None) == "").get_blocks()
    folder = Path(get_upload_folder()) / "cached-test"
    folder.mkdir(parents=True, exist_ok=True)
    cached = folder / "cached-by-gradio.jsonl"
    cached.write_text("x\n")
    public.temp_file_sets.append({str(cached)})  # as Gradio records a file it moved to its cache
    with running(app) as url:
        assert httpx.get(url + "/gradio_api/file=" + str(cached), timeout=30).status_code == 404
        path = folder / LINKS.name_for("p-0123456789abcdef01234567")
        path.write_text("{}\n")
        LINKS.written(path)
        assert httpx.get(url + "/gradio_api/file=" + str(path), timeout=30).status_code == 200
        LINKS.revoke("p-0123456789abcdef01234567")


def test_a_download_link_expires(tmp_path):
    links = DownloadLinks(ttl_s=0.2)
    path = tmp_path / links.name_for("p-x")
    path.write_text("x")
    links.written(path)
    assert links.allowed(path) is True
    time.sleep(0.3)
    assert links.allowed(path) is False and not path.exists()
    assert links.allowed(tmp_path / "other.csv") is None


def test_bodies_over_the_limit_are_refused_before_they_are_read_whole(services):
    app = build_app(services)
    limit = body_limit(services.settings)
    with running(app) as url:
        declared = httpx.post(url + "/gradio_api/queue/join", content=b"x" * (limit + 1), timeout=30)
        assert declared.status_code == 413 and "too large" in declared.text

        sent = [0]

        def stream():  # no Content-Length: the bytes are counted as they arrive
            for _ in range(64):
                sent[0] += 1
                yield b"y" * (256 * 1024)

        try:
            streamed = httpx.post(url + "/gradio_api/queue/join", content=stream(), timeout=30)
            assert streamed.status_code == 413
        except httpx.HTTPError:
            pass  # the server answered and closed while the client was still sending
        assert sent[0] < 64  # 16 MiB offered, refused after about the limit
        assert httpx.post(url + "/gradio_api/queue/join", json={"data": []}, timeout=30).status_code != 413


def test_the_middleware_hands_the_app_nothing_past_the_limit():
    taken = []

    async def app(scope, receive, send):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            taken.append(len(message["body"]))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    chunks = [{"type": "http.request", "body": b"z" * 100, "more_body": True} for _ in range(10)]
    answered = []

    async def receive():
        return chunks.pop(0)

    async def send(message):
        answered.append(message)

    asyncio.run(BodyLimitMiddleware(app, max_bytes=250)({"type": "http", "path": "/x", "headers": []}, receive, send))
    assert sum(taken) <= 250 and answered[0]["status"] == 413 and len(answered) == 2
