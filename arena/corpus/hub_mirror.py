"""Mirror the store to a Hugging Face dataset repository, and restore it from there.

A Space's disk is wiped on every rebuild and restart; with `ARENA_HUB_DATASET=owner/name`
the corpus lives on in a (private by default) Hub dataset:

* every `ARENA_HUB_PUSH_EVERY` seconds, and once at shutdown, one commit adds a shard per
  kind holding the rows new or changed since the last push, and tombstones of rows that
  were deleted (`arena.corpus.shards`). Shards are only ever added, and their names carry
  the time, the replica and a token drawn at start, so two replicas pushing at once never
  write the same file;
* a start on an empty store downloads the shards and replays them before the app serves;
* `salt.json` holds a fingerprint (an HMAC) of the pseudonym salt. The salt itself must
  come from the secret ARENA_PSEUDONYM_SALT, and a start whose salt differs from the
  corpus's, or that has none, is refused with one line (`MirrorRefused`): a new salt would
  give every returning user a new pseudonym.

After a crash (`kill -9`) what came after the last push is lost if the disk is lost too;
with a persistent disk the next push carries it (what was pushed is recorded in the store,
in the same database as the rows).

The app sets HF_HUB_OFFLINE=1 so that models never reach the Hub at run time;
huggingface_hub checks that flag before every request, so the mirror's own calls lift it
for their duration (`hub_online`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Optional

from arena.corpus import shards
from arena.corpus.records import pseudonymiser
from arena.runtime.imports import heavy_imports
from arena.store import Store, describe_location
from arena.store.jobs_scheduler import Periodic

log = logging.getLogger(__name__)

REPO_TYPE = "dataset"
SHARDS_DIR = "shards"
SALT_FILE = "salt.json"
STATE_META_KEY = "hub_mirror_pushed"  # the digests of what this store pushed (shards.Digests as JSON)
SQUASH_META_KEY = "hub_mirror_squash_due"  # set while a purge is committed but the history not yet squashed
MODERATION_CHECK_S = 5.0  # how often the push thread looks for new moderation (deletions) to push at once
_ONLINE = threading.RLock()


class MirrorRefused(RuntimeError):
    """A start that would break the corpus (a new or different pseudonym salt); the message is one line."""


@contextmanager
def hub_online() -> Iterator[None]:
    """Let huggingface_hub reach the Hub for the calls inside, whatever HF_HUB_OFFLINE says."""
    with heavy_imports():
        from huggingface_hub import constants

    with _ONLINE:
        before = constants.HF_HUB_OFFLINE
        constants.HF_HUB_OFFLINE = False
        try:
            yield
        finally:
            constants.HF_HUB_OFFLINE = before


def salt_fingerprint(salt: str) -> str:
    return hmac.new(salt.encode("utf-8"), b"crs-arena pseudonym salt", hashlib.sha256).hexdigest()


class HubMirror:
    def __init__(self, store: Store, repo_id: str, *, salt: Optional[str], token: Optional[str] = None,
                 endpoint: Optional[str] = None, private: bool = True, replica: Optional[str] = None,
                 every_s: float = 300.0, check_s: float = MODERATION_CHECK_S):
        with heavy_imports():
            from huggingface_hub import HfApi

        self.store = store
        self.repo_id = repo_id
        self.salt = salt
        self.token = token
        self.endpoint = endpoint
        self.private = private
        self.every_s = every_s
        self.check_s = check_s
        # File names: the replica (readable) plus a token drawn now, so even two processes of one host,
        # or a restarted one whose clock went back, never name a shard alike.
        self.replica = re.sub(r"[^A-Za-z0-9_.-]+", "-", replica or socket.gethostname())[:40] or "replica"
        self.run_tag = secrets.token_hex(4)
        self.api = HfApi(endpoint=endpoint, token=token)
        self._seq = 0
        self._salt_pushed = False  # salt.json is in the dataset (checked by `prepare`)
        self._push_lock = threading.Lock()
        self._job: Optional[Periodic] = None
        self.pushes = 0
        self.squashes = 0

    @classmethod
    def from_settings(cls, settings: Any, store: Optional[Store] = None) -> Optional["HubMirror"]:
        if not settings.hub_dataset:
            return None
        return cls(store or Store(settings.db_path), settings.hub_dataset,
                   salt=settings.pseudonym_salt.get_secret_value() if settings.pseudonym_salt else None,
                   token=settings.hub_token.get_secret_value() if settings.hub_token else None,
                   endpoint=settings.hub_endpoint, private=settings.hub_private, replica=settings.replica_id,
                   every_s=settings.hub_push_every_s)

    # -- start: the repository, the salt, the restore ------------------------------------
    def prepare(self) -> dict[str, int]:
        """Create the dataset repository if needed, check the salt, and restore an empty store from the
        shards. Returns what was restored (empty when nothing was). Raises MirrorRefused."""
        with heavy_imports():
            from huggingface_hub import hf_hub_download

        with hub_online():
            self.api.create_repo(self.repo_id, repo_type=REPO_TYPE, private=self.private, exist_ok=True)
            files = self.api.list_repo_files(self.repo_id, repo_type=REPO_TYPE)
            remote_salt = None
            if SALT_FILE in files:
                with tempfile.TemporaryDirectory(prefix="arena-hub-salt-") as scratch:
                    path = hf_hub_download(self.repo_id, SALT_FILE, repo_type=REPO_TYPE, token=self.token,
                                           endpoint=self.endpoint, cache_dir=scratch)
                    remote_salt = json.loads(Path(path).read_text())["fingerprint"]
        has_shards = any(f.startswith(SHARDS_DIR + "/") for f in files)
        if not self.salt:
            raise MirrorRefused(
                f"ARENA_HUB_DATASET={self.repo_id} needs the secret ARENA_PSEUDONYM_SALT"
                + (" (the salt its corpus was pseudonymised with)" if has_shards or remote_salt else
                   " (any long random text, kept as a secret: it must stay the same across restarts)"))
        if remote_salt is not None and not hmac.compare_digest(remote_salt, salt_fingerprint(self.salt)):
            raise MirrorRefused(
                f"ARENA_PSEUDONYM_SALT differs from the salt the corpus in {self.repo_id} was pseudonymised "
                "with; refusing to start, since a new salt would give every returning user a new pseudonym"
            )
        self._salt_pushed = remote_salt is not None
        if not has_shards or not self.store.is_empty():
            return {}
        return self._restore(sorted(f for f in files if f.startswith(SHARDS_DIR + "/")))

    def _restore(self, files: list[str]) -> dict[str, int]:
        with heavy_imports():
            from huggingface_hub import snapshot_download

        found = []
        with hub_online(), tempfile.TemporaryDirectory(prefix="arena-hub-restore-") as scratch:
            folder = Path(
                snapshot_download(
                    self.repo_id,
                    repo_type=REPO_TYPE,
                    allow_patterns=[SHARDS_DIR + "/**"],
                    local_dir=scratch,
                    token=self.token,
                    endpoint=self.endpoint,
                )
            )
            for name in files:
                found.append((name.split("/")[1], Path(name).name, (folder / name).read_bytes()))
        counts = shards.restore(self.store, shards.merge(found))
        self._save_state(shards.digests_of(self._current()))
        log.info(
            "restored %s from the Hub dataset %s (%d shards): %s",
            describe_location(self.store.location),
            self.repo_id,
            len(files),
            ", ".join(f"{n} {kind}" for kind, n in counts.items()),
        )
        return counts

    # -- pushing ----------------------------------------------------------------------------
    def _current(self) -> dict[str, dict[str, dict[str, Any]]]:
        return shards.current_records(self.store, pseudonymiser(self.salt or ""))

    def _load_state(self) -> shards.Digests:
        raw = self.store.get_meta(STATE_META_KEY)
        return json.loads(raw) if raw else {}

    def _save_state(self, digests: shards.Digests) -> None:
        self.store.set_meta(STATE_META_KEY, json.dumps(digests, separators=(",", ":")))

    def push(self) -> int:
        """Commit the rows changed since the last push as new shards; returns how many lines were pushed.

        A push that carries a deletion (a tombstone of a dialogue or a vote) also erases: in the same
        commit it rewrites every earlier shard that holds a record of a deleted key, then squashes the
        dataset's history, so the text is gone from the current files and from every revision."""
        with heavy_imports():
            from huggingface_hub import CommitOperationAdd

        with self._push_lock:
            current = self._current()
            lines = shards.changes(current, self._load_state())
            if not lines:
                if self.store.get_meta(SQUASH_META_KEY):
                    self._squash()  # a purge whose squash failed last time
                return 0
            self._seq += 1
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
            name = f"{stamp}-{self.replica}-{self.run_tag}-{self._seq:05d}.jsonl"
            new = [
                (kind, f"{SHARDS_DIR}/{kind}/{name}", shards.dumps(rows))
                for kind, rows in shards.iter_kinds(lines)
            ]
            operations = [CommitOperationAdd(path, content) for _kind, path, content in new]
            if not self._salt_pushed:
                fingerprint = json.dumps({"fingerprint": salt_fingerprint(self.salt or "")}).encode()
                operations.append(CommitOperationAdd(SALT_FILE, fingerprint))
            n = sum(len(rows) for rows in lines.values())
            erasing = any(
                line.get("deleted") for kind in shards.FINAL_DELETIONS for line in lines.get(kind, ())
            )
            with hub_online():
                parent = None
                if erasing:
                    parent, purge = self._purge_operations(new)
                    operations += purge
                # With a parent the commit is refused (412) if another replica committed since the shards
                # were read, so no shard it added escapes the purge; the next try reads them again.
                self.api.create_commit(self.repo_id, repo_type=REPO_TYPE, operations=operations,
                                       commit_message=f"{self.replica}: {n} change(s)", parent_commit=parent)
            self._salt_pushed = True
            self._save_state(shards.digests_of(current))
            self.pushes += 1
            log.info("pushed %d change(s) to the Hub dataset %s", n, self.repo_id)
            if erasing:
                self.store.set_meta(SQUASH_META_KEY, "1")
                self._squash()
            return n

    def _purge_operations(self, new: list[tuple[str, str, bytes]]) -> tuple[str, list[Any]]:
        """(the head commit read, the operations rewriting or deleting every shard at that head that holds
        a record of a deleted key, counting the tombstones in `new` too)."""
        with heavy_imports():
            from huggingface_hub import CommitOperationAdd, CommitOperationDelete, snapshot_download

        head = self.api.repo_info(self.repo_id, repo_type=REPO_TYPE).sha
        if head is None:  # the purge's commit is made conditional on this head: without it, no purge
            raise RuntimeError(
                f"the Hub named no head commit of {self.repo_id}; the purge waits for the next push"
            )
        with tempfile.TemporaryDirectory(prefix="arena-hub-purge-") as scratch:
            folder = Path(
                snapshot_download(
                    self.repo_id,
                    repo_type=REPO_TYPE,
                    revision=head,
                    token=self.token,
                    allow_patterns=[SHARDS_DIR + "/**"],
                    local_dir=scratch,
                    endpoint=self.endpoint,
                )
            )
            found = (
                [
                    (path.parent.name, path.relative_to(folder).as_posix(), path.read_bytes())
                    for path in sorted((folder / SHARDS_DIR).glob("*/*.jsonl"))
                ]
                if (folder / SHARDS_DIR).is_dir()
                else []
            )
        gone = shards.erased(found + new)
        operations: list[Any] = []
        for kind, path, content in found:
            rewritten = shards.purged(kind, content, gone)
            if rewritten is None:
                continue
            operations.append(
                CommitOperationAdd(path, rewritten) if rewritten else CommitOperationDelete(path)
            )
        log.info("erasing %d deleted row(s) from %d shard(s) of the Hub dataset %s",
                 sum(map(len, gone.values())), len(operations), self.repo_id)
        return head, operations

    def _squash(self) -> None:
        """Replace the dataset's history with one commit of its current files (the purged text leaves
        every earlier revision)."""
        with hub_online():
            self.api.super_squash_history(
                self.repo_id,
                repo_type=REPO_TYPE,
                commit_message=f"{self.replica}: erase deleted rows from the history",
            )
        self.store.set_meta(SQUASH_META_KEY, "")
        self.squashes += 1

    def start(self) -> "HubMirror":
        """Push every `every_s` seconds, a job on the process's scheduler, until `stop`."""
        self._mark, self._due = self.store.last_moderation_entry_id(), time.monotonic() + self.every_s
        self._job = Periodic("hub-mirror", self._check).start(self._next_check())
        return self

    # Why not `huggingface_hub.CommitScheduler`: it uploads the changed files of a local folder
    # every N minutes. The mirror's source is the database, not a folder: each push computes new
    # shards from the rows changed since the stored digests, and records what it pushed in the same
    # database. It must also push at once after moderation and retry sooner after a failure; the
    # scheduler would need the shards written to disk first and would still need this check.
    # Moderation (a deletion above all) is pushed within `check_s`, not at the next period: on a disk
    # that does not survive, a deletion lost in a crash would bring the dialogue back on restore.
    def _next_check(self) -> float:
        return max(0.0, min(self.check_s, self._due - time.monotonic()))

    def _check(self) -> float:
        """One look: push when the period is over or moderation changed something; returns the wait."""
        try:
            now_mark = self.store.last_moderation_entry_id()
            if time.monotonic() >= self._due or now_mark != self._mark:
                self.push()
                self._mark, self._due = now_mark, time.monotonic() + self.every_s
        except Exception as exc:  # the Hub is down or refuses: keep serving, try again next time
            log.warning("could not push to the Hub dataset %s: %s", self.repo_id, exc)
            self._due = time.monotonic() + min(self.every_s, 60.0)
        return self._next_check()

    def stop(self) -> None:
        """Stop the periodic pushes and push what is left (at shutdown)."""
        if self._job is not None:
            self._job.cancel(wait=True, timeout=60)
        try:
            self.push()
        except Exception as exc:
            log.error("the last push to the Hub dataset %s failed: %s", self.repo_id, exc)
