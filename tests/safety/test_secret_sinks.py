"""Credentials of any kind (URL userinfo, Basic/Bearer headers, keys) never reach a log line, a stored
error or an export (issue 26): one redaction function at every sink."""

from __future__ import annotations

import base64
import io
import logging

import pytest

from arena.corpus.bundle import export_bundle
from arena.dialogue import Dialogue, Feedback, Score, UserInfo, Vote
from arena.llm.redaction import install_log_redaction, redact_text
from arena.store import Store

BASIC = base64.b64encode(b"alice:s3cr3t-pass").decode()
SECRETS = ["s3cr3t-pass", BASIC, "tok3nVALUE99", "sk-abcdefghijklmnopqrstu", "k3y-value"]
ECHO = (f"upstream 401: echoed headers {{'Authorization': 'Basic {BASIC}'}} from "
        "http://alice:s3cr3t-pass@llm.example/v1?api_key=k3y-value; retry with Bearer tok3nVALUE99, "
        "x-api-key: sk-abcdefghijklmnopqrstu")


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


@pytest.mark.parametrize("text", [
    ECHO,
    f"Authorization: Basic {BASIC}",
    '{"authorization": "Bearer tok3nVALUE99"}',
    "password=s3cr3t-pass&user=x",
    "OPENAI key sk-abcdefghijklmnopqrstu",
])
def test_one_function_scrubs_every_kind(text):
    assert leaked(redact_text(text)) == []
    assert "[redacted]" in redact_text(text)


def test_ordinary_text_is_left_alone():
    for text in ("I liked Basic Instinct", "Bearer of bad news", "my password manager", "see http://example.org/x"):
        assert redact_text(text) == text


def test_log_lines_and_tracebacks_are_scrubbed_whatever_the_handler():
    install_log_redaction([])  # the record factory alone: a handler added later has no filter
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("test.secret.sinks")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.info("calling %s", "http://alice:s3cr3t-pass@llm.example/v1")
        try:
            raise RuntimeError(ECHO)
        except RuntimeError:
            logger.exception("judge failed")
    finally:
        logger.removeHandler(handler)
    out = stream.getvalue()
    assert "judge failed" in out and "RuntimeError" in out
    assert leaked(out) == []


def test_stored_errors_and_exports_carry_no_credentials(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    a = Dialogue(crs_id="alpha", user=UserInfo(id="u"), metadata={"errors": [ECHO]})
    a.add_user("hi")
    a.add_agent("sorry", error=ECHO)
    a.feedback = Feedback(sentiment="frustrated")
    a.scores["core.overall"] = Score(value=None, scorer="core", version="1", error=ECHO,
                                     details={"judges": [{"error": ECHO}]})
    b = Dialogue(crs_id="beta", user=UserInfo(id="u"))
    b.add_user("hi")
    b.add_agent("ok")
    b.feedback = Feedback(sentiment="satisfied")
    store.save_battle(a, b, Vote(battle_id="b1", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id,
                                 crs_a="alpha", crs_b="beta", choice="B", user_id="u"))
    store.enqueue_scoring([a.dialogue_id])
    store.claim_scoring_job()
    store.finish_scoring_job(a.dialogue_id, error=ECHO)
    stored = store.get_dialogue(a.dialogue_id)
    assert leaked(stored.model_dump_json()) == []
    assert stored.utterances[1].error and "[redacted]" in stored.utterances[1].error
    assert leaked(str(store.failed_jobs())) == []
    result = export_bundle(store, tmp_path / "export")
    for path in result.paths():
        assert leaked(path.read_bytes().decode("utf-8", errors="replace")) == [], path.name
    store.close()
