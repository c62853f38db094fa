"""A local Hub-compatible HTTP server: just what huggingface_hub 2.4 needs to create a dataset repository,
commit files to it and download them back (the real Hub is unreachable in tests).

Point `HF_ENDPOINT` at `HubServer.url` *before* huggingface_hub is imported (it reads the variable once),
or pass `endpoint=` to `HfApi`. Endpoints, as the library calls them:

* `POST /api/repos/create`                                create_repo (409 when it exists)
* `GET  /api/{type}s/{repo}/revision/{rev}`               repo_info (snapshot_download resolves main)
* `GET  /api/{type}s/{repo}/tree/{rev}[/{path}]`          list_repo_tree / list_repo_files
* `POST /api/{type}s/{repo}/preupload/{rev}`              create_commit: every file "regular" (inline)
* `POST /api/{type}s/{repo}/commit/{rev}`                 create_commit: NDJSON header + files + deletions
* `HEAD|GET /{type}s/{repo}/resolve/{rev}/{path}`         hf_hub_download
* `GET  /api/{type}s/{repo}/commits/{rev}`                list_repo_commits (newest first)
* `POST /api/{type}s/{repo}/super-squash/{rev}`           super_squash_history

Each commit is an immutable snapshot (path -> bytes) with a 40-hex id; commits are applied one at a time
under a lock, as on the Hub, and a `parentCommit` other than the head is refused (412). Every revision
stays readable by its id, as in a git repository, until a super-squash replaces the whole history with one
commit holding the head's files: the earlier ids then answer 404 (RevisionNotFound), as on the Hub.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, unquote, urlparse


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    repo_type: str
    private: bool
    commits: list[tuple[str, dict[str, bytes]]] = field(default_factory=list)  # (sha, files), oldest first
    titles: dict[str, str] = field(default_factory=dict)  # sha -> commit title
    squashes: int = 0

    def snapshot(self, revision: str) -> Optional[tuple[str, dict[str, bytes]]]:
        if revision == "main":
            return self.commits[-1]
        return next((c for c in self.commits if c[0] == revision), None)


class HubServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.repos: dict[tuple[str, str], Repo] = {}  # (type, owner/name) -> Repo
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []  # (method, path), for tests that count calls
        self.tokens_seen: set[str] = set()
        handler = type("Handler", (_Handler,), {"hub": self})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "HubServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- what tests read --------------------------------------------------------------
    def files(self, repo_id: str, repo_type: str = "dataset") -> dict[str, bytes]:
        with self.lock:
            return dict(self.repos[(repo_type, repo_id)].commits[-1][1])

    def commit_count(self, repo_id: str, repo_type: str = "dataset") -> int:
        with self.lock:
            return len(self.repos[(repo_type, repo_id)].commits) - 1  # the first is the empty initial commit

    def history(self, repo_id: str, repo_type: str = "dataset") -> list[tuple[str, dict[str, bytes]]]:
        """Every revision still reachable, oldest first: (sha, path -> bytes)."""
        with self.lock:
            return [(sha, dict(files)) for sha, files in self.repos[(repo_type, repo_id)].commits]


_REPO = r"(?P<type>model|dataset|space)s/(?P<repo>[^/]+/[^/]+)"
ROUTES = [
    ("POST", re.compile(r"^/api/repos/create$"), "create"),
    ("GET", re.compile(rf"^/api/{_REPO}/revision/(?P<rev>[^/]+)$"), "info"),
    ("GET", re.compile(rf"^/api/{_REPO}$"), "info"),
    ("GET", re.compile(rf"^/api/{_REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$"), "tree"),
    ("POST", re.compile(rf"^/api/{_REPO}/preupload/(?P<rev>[^/]+)$"), "preupload"),
    ("POST", re.compile(rf"^/api/{_REPO}/commit/(?P<rev>[^/]+)$"), "commit"),
    ("GET", re.compile(rf"^/api/{_REPO}/commits/(?P<rev>[^/]+)$"), "commits"),
    ("POST", re.compile(rf"^/api/{_REPO}/super-squash/(?P<rev>[^/]+)$"), "squash"),
    ("HEAD", re.compile(rf"^/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"), "resolve"),
    ("GET", re.compile(rf"^/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"), "resolve"),
]


class _Handler(BaseHTTPRequestHandler):
    hub: HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _route(self, method: str) -> None:
        parsed = urlparse(self.path)
        path = unquote(parsed.path)
        with self.hub.lock:
            self.hub.requests.append((method, path))
        auth = self.headers.get("authorization", "")
        if auth.startswith("Bearer "):
            self.hub.tokens_seen.add(auth[7:])
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        for verb, pattern, name in ROUTES:
            match = pattern.match(path)
            if verb == method and match:
                getattr(self, "_" + name)(match.groupdict(), body, parse_qs(parsed.query), head=method == "HEAD")
                return
        self._json(404, {"error": f"no route {method} {path}"})

    def do_GET(self) -> None:
        self._route("GET")

    def do_HEAD(self) -> None:
        self._route("HEAD")

    def do_POST(self) -> None:
        self._route("POST")

    def _send(self, status: int, body: bytes, headers: Optional[dict[str, str]] = None, head: bool = False,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, status: int, data: Any, headers: Optional[dict[str, str]] = None) -> None:
        if status >= 400:  # as the Hub: the error message in a header and the body
            headers = {"X-Error-Message": str(data.get("error", "")), **(headers or {})}
        self._send(status, json.dumps(data).encode(), headers)

    def _repo(self, groups: dict[str, str]) -> Optional[Repo]:
        repo = self.hub.repos.get((groups["type"], groups["repo"]))
        if repo is None:
            self._json(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
        return repo

    def _revision(self, groups: dict[str, str], rev: str) -> Optional[tuple[Repo, tuple[str, dict]]]:
        """The repository and its (sha, files) at `rev`; None once a 404 has been answered."""
        with self.hub.lock:
            repo = self._repo(groups)
            if repo is None:
                return None
            found = repo.snapshot(rev)
        if found is None:
            self._json(404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"})
            return None
        return repo, found

    # -- endpoints ----------------------------------------------------------------------
    def _create(self, groups: dict[str, str], body: bytes, query: dict, head: bool) -> None:
        payload = json.loads(body or b"{}")
        repo_id = f"{payload.get('organization')}/{payload['name']}"
        repo_type = payload.get("type") or "model"
        with self.hub.lock:
            if (repo_type, repo_id) in self.hub.repos:
                self._json(409, {"error": "You already created this repo", "url": f"{self.hub.url}/{repo_id}"})
                return
            repo = Repo(repo_type, private=payload.get("visibility", "public") == "private")
            repo.commits.append((hashlib.sha1(repo_id.encode()).hexdigest(), {}))
            self.hub.repos[(repo_type, repo_id)] = repo
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        self._json(200, {"url": f"{self.hub.url}/{prefix}{repo_id}", "name": repo_id})

    def _info(self, groups: dict[str, str], body: bytes, query: dict, head: bool) -> None:
        revision = self._revision(groups, groups.get("rev") or "main")
        if revision is not None:
            repo, (sha, files) = revision
            self._json(200, {"id": groups["repo"], "sha": sha, "private": repo.private,
                             "siblings": [{"rfilename": p} for p in sorted(files)]})

    def _tree(self, groups: dict[str, str], body: bytes, query: dict, head: bool) -> None:
        revision = self._revision(groups, groups["rev"])
        if revision is None:
            return
        files = revision[1][1]
        prefix = (groups.get("path") or "").strip("/")
        recursive = query.get("recursive", ["False"])[0].lower() == "true"
        entries, folders = [], set()
        for path in sorted(files):
            if prefix and not path.startswith(prefix + "/"):
                continue
            rest = path[len(prefix) + 1:] if prefix else path
            if not recursive and "/" in rest:
                folders.add((prefix + "/" if prefix else "") + rest.split("/", 1)[0])
                continue
            if recursive:
                parts = path.split("/")[:-1]
                folders.update("/".join(parts[:i + 1]) for i in range(len(parts)) if "/".join(parts[:i + 1])
                               .startswith(prefix))
            entries.append({"type": "file", "path": path, "size": len(files[path]),
                            "oid": _git_blob_id(files[path])})
        entries += [{"type": "directory", "path": f, "oid": hashlib.sha1(f.encode()).hexdigest()}
                    for f in sorted(folders) if f and f != prefix]
        self._json(200, entries)

    def _preupload(self, groups: dict[str, str], body: bytes, query: dict, head: bool) -> None:
        with self.hub.lock:
            repo = self._repo(groups)
            if repo is None:
                return
            files = repo.commits[-1][1]
        payload = json.loads(body)
        self._json(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                    "oid": _git_blob_id(files[f["path"]]) if f["path"] in files else None}
                                   for f in payload["files"]]})

    def _commit(self, groups: dict[str, str], body: bytes, query: dict, head: bool) -> None:
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next((item["value"] for item in lines if item["key"] == "header"), {})
        with self.hub.lock:
            repo = self._repo(groups)
            if repo is None:
                return
            head_sha, files = repo.commits[-1]
            if header.get("parentCommit") and header["parentCommit"] != head_sha:
                self._json(412, {"error": "A commit has happened since. Please refresh and try again."})
                return
            files = dict(files)
            for item in lines:
                value = item["value"]
                if item["key"] == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                elif item["key"] == "deletedFile":
                    files.pop(value["path"], None)
                elif item["key"] == "deletedFolder":
                    files = {p: d for p, d in files.items() if not p.startswith(value["path"].rstrip("/") + "/")}
                elif item["key"] != "header":
                    self._json(400, {"error": f"this test server does not support {item['key']}"})
                    return
            sha = hashlib.sha1(f"{head_sha}{len(repo.commits)}{header.get('summary')}".encode()).hexdigest()
            repo.commits.append((sha, files))
            repo.titles[sha] = str(header.get("summary") or "")
        prefix = "" if groups["type"] == "model" else f"{groups['type']}s/"
        self._json(200, {"commitUrl": f"{self.hub.url}/{prefix}{groups['repo']}/commit/{sha}", "commitOid": sha})

    def _resolve(self, groups: dict[str, str], body: bytes, query: dict, head: bool) -> None:
        revision = self._revision(groups, groups["rev"])
        if revision is None:
            return
        sha, files = revision[1]
        data = files.get(groups["path"])
        if data is None:
            self._json(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
            return
        self._send(200, data, {"X-Repo-Commit": sha, "ETag": f'"{_git_blob_id(data)}"'}, head=head,
                   content_type="application/octet-stream")

    def _commits(self, groups: dict[str, str], body: bytes, query: dict, head: bool) -> None:
        revision = self._revision(groups, groups["rev"])
        if revision is None:
            return
        repo, (sha, _files) = revision
        with self.hub.lock:
            shas = [c[0] for c in repo.commits]
        upto = shas[: shas.index(sha) + 1]
        self._json(200, [{"id": s, "authors": [], "date": "2026-01-01T00:00:00.000Z",
                          "title": repo.titles.get(s, ""), "message": ""} for s in reversed(upto)])

    def _squash(self, groups: dict[str, str], body: bytes, query: dict, head: bool) -> None:
        """One commit with the head's files replaces the whole history; the earlier revisions are gone."""
        message = json.loads(body or b"{}").get("message") or "Super-squash"
        with self.hub.lock:
            repo = self._repo(groups)
            if repo is None:
                return
            if groups["rev"] != "main":
                self._json(400, {"error": "Only the main branch can be squashed here"})
                return
            head_sha, files = repo.commits[-1]
            sha = hashlib.sha1(f"squash {head_sha} {repo.squashes}".encode()).hexdigest()
            repo.commits = [(sha, dict(files))]
            repo.titles = {sha: message}
            repo.squashes += 1
        self._json(200, {"commitId": sha})
