"""Fetching checkpoints: from a local archive, over http on 127.0.0.1, from a
folder; unsafe or damaged archives are refused; offline fails fast and clearly."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import tarfile
import threading
import time
from pathlib import Path

import pytest

from arena.runtime.config import Settings
from crs.__main__ import main
from crs.checkpoints import DEFAULT_SOURCE, DownloadError, download_checkpoints, resolve_source

KBRD = ["kbrd_rec_redial", "kbrd_conv_redial"]


def make_archive(models: Path, target: Path, folders: list[str], wrapper: str = "", extra=()) -> Path:
    with tarfile.open(target, "w:gz", compresslevel=1) as tar:
        for folder in folders:
            tar.add(models / folder, arcname=f"{wrapper}{folder}")
        for name, data, kind in extra:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                info.type = tarfile.SYMTYPE
                info.linkname = data
                tar.addfile(info)
    return target


@pytest.fixture(scope="module")
def archive(tiny_models, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("archive")
    return make_archive(tiny_models, folder / "models.tar.gz", KBRD + ["barcor_rec_redial", "barcor_conv_redial"])


def test_default_source_is_crs_arenas_archive():
    assert resolve_source() == DEFAULT_SOURCE == "https://gustav1.ux.uis.no/crs_arena/models.tar.gz"
    setting = Settings.from_env({"ARENA_CHECKPOINT_SOURCE": "/somewhere/models.tar.gz"}).checkpoint_source
    assert resolve_source(None, setting) == "/somewhere/models.tar.gz"
    assert resolve_source("hf://org/repo", setting) == "hf://org/repo"


def test_download_from_file_url_installs_only_what_is_asked(archive, tmp_path, tiny_models):
    target = tmp_path / "installed"
    installed = download_checkpoints(["kbrd_redial"], target, archive.as_uri(), progress=False)
    assert sorted(p.name for p in installed) == sorted(KBRD)
    assert (target / "kbrd_rec_redial" / "model.pt").read_bytes() == (tiny_models / "kbrd_rec_redial" / "model.pt").read_bytes()
    assert not (target / "barcor_rec_redial").exists()
    assert not [p for p in target.iterdir() if p.name.startswith(".staging")]
    # Present already: nothing to fetch, the source is not even opened.
    assert download_checkpoints(["kbrd_redial"], target, "/does/not/exist.tar.gz") == []


def test_archive_with_a_wrapping_folder_and_sha256(tiny_models, tmp_path):
    archive = make_archive(tiny_models, tmp_path / "wrapped.tar.gz", KBRD, wrapper="models/")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    target = tmp_path / "installed"
    download_checkpoints(["kbrd_redial"], target, str(archive), sha256=digest, progress=False)
    assert (target / "kbrd_conv_redial" / "config.json").is_file()
    with pytest.raises(DownloadError, match="sha256"):
        download_checkpoints(["kbrd_redial"], tmp_path / "other", str(archive), sha256="0" * 64, progress=False)


@pytest.mark.parametrize(
    "member, why",
    [
        (("../escaped.txt", b"x", "file"), "leaves the target folder"),
        (("kbrd_rec_redial/../../escaped.txt", b"x", "file"), "leaves the target folder"),
        (("/tmp/absolute.txt", b"x", "file"), "absolute path"),
        (("kbrd_rec_redial/link", "/etc/passwd", "symlink"), "links are not accepted"),
    ],
)
def test_unsafe_members_are_refused_before_anything_escapes(tiny_models, tmp_path, member, why):
    folders = ["unicrs_rec_opendialkg", "unicrs_conv_opendialkg"]
    archive = make_archive(tiny_models, tmp_path / "evil.tar.gz", folders, extra=[member])
    target = tmp_path / "deep" / "installed"
    with pytest.raises(DownloadError, match=why):
        download_checkpoints(["unicrs_opendialkg"], target, str(archive), progress=False)
    assert not (tmp_path / "deep" / "escaped.txt").exists() and not (tmp_path / "escaped.txt").exists()
    assert not Path("/tmp/absolute.txt").exists()
    assert not (target / "unicrs_rec_opendialkg").exists()


def test_damaged_or_incomplete_archives_are_refused(tiny_models, tmp_path, archive):
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(DownloadError, match="not a readable tar archive or is incomplete"):
        download_checkpoints(["kbrd_redial"], tmp_path / "a", str(truncated), progress=False)
    partial = make_archive(tiny_models, tmp_path / "partial.tar.gz", ["kbrd_rec_redial"])
    with pytest.raises(DownloadError, match="kbrd_conv_redial is missing"):
        download_checkpoints(["kbrd_redial"], tmp_path / "b", str(partial), progress=False)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def http_server(archive):
    handler = functools.partial(_Quiet, directory=str(archive.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_download_over_http_from_localhost(http_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARENA_CHECKPOINT_SOURCE", f"{http_server}/models.tar.gz")
    target = tmp_path / "installed"
    assert main(["download", "barcor_redial", "--models-dir", str(target), "--no-base", "--quiet"]) == 0
    assert (target / "barcor_rec_redial" / "pytorch_model.bin").is_file()
    assert "installed barcor_conv_redial" in capsys.readouterr().out
    with pytest.raises(DownloadError, match="HTTP 404"):
        download_checkpoints(["kbrd_redial"], tmp_path / "x", f"{http_server}/missing.tar.gz", progress=False)


def test_offline_fails_fast_with_a_clear_message(tmp_path, capsys):
    started = time.monotonic()
    # 192.0.2.0/24 is reserved for documentation: nothing answers there.
    code = main(["download", "all", "--models-dir", str(tmp_path), "--source", "http://192.0.2.1/models.tar.gz",
                 "--timeout", "1", "--no-base", "--quiet"])
    elapsed = time.monotonic() - started
    error = capsys.readouterr().err
    assert code == 1 and elapsed < 10
    assert "cannot reach 192.0.2.1:80" in error and "offline" in error
    assert "--source /path/to/models.tar.gz" in error


def test_hub_source_offline_is_explained(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DownloadError, match="HF_HUB_OFFLINE is set"):
        download_checkpoints(["kbrd_redial"], tmp_path, "hf://iai-group/crs-arena-models", progress=False)


def test_folder_source_and_list_command(tiny_models, tmp_path, capsys):
    target = tmp_path / "installed"
    assert main(["download", "unicrs_opendialkg", "--models-dir", str(target), "--source", str(tiny_models),
                 "--no-base", "--quiet"]) == 0
    assert (target / "unicrs_conv_opendialkg" / "model.pt").is_file()
    assert main(["list", "--models-dir", str(target)]) == 0
    listing = capsys.readouterr().out
    assert "kbrd_redial" in listing and "kbrd_rec_redial is missing" in listing
    line = next(l for l in listing.splitlines() if "unicrs_opendialkg" in l)
    assert "kbrd" not in line and "unicrs_conv" not in line  # its folders are there, base models are not


def test_unknown_system_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit):
        main(["download", "nonexistent", "--models-dir", str(tmp_path)])
    with pytest.raises(DownloadError, match="unknown system"):
        download_checkpoints(["nonexistent"], tmp_path, "/x.tar.gz")
