"""score_core end to end through the openai provider and a local HTTP stub server."""

import json
import re

from arena.llm import LLMClient, OpenAIProvider, RetryPolicy
from evaluators.core import CoreConfig, score_core
from tests.support.openai_stub_server import OpenAIStubServer

from core_fakes import sample_dialogue


def answer(request):
    system = request.messages[0]["content"]
    if "Factor under evaluation" in system:
        return "Checked every system turn.\n```\n<rating>2</rating>\n```"
    role = re.search(r"YOUR ROLE: (.+?)\.", system).group(1)
    return "Sure! Here is my answer:\n```json\n" + json.dumps(
        {"evaluator": role, "statement": "agreed", "score": 45}) + "\n```"


def test_score_core_over_http():
    with OpenAIStubServer(default=answer) as server:
        client = LLMClient(OpenAIProvider(server.base_url, default_model="stub-judge"),
                           retry=RetryPolicy(base_delay_s=0.01))
        scores = score_core(sample_dialogue(), client, config=CoreConfig())
        requests = server.chat_requests
    assert len(requests) == 16
    assert {r.json["model"] for r in requests} == {"stub-judge"}
    assert all([m["role"] for m in r.messages] == ["system", "user"] for r in requests)
    assert scores["core.coherence"].value == 2.0
    assert scores["core.coherence"].model == "openai:stub-judge"
    assert scores["core.overall"].value == 45.0
    assert scores["core.overall"].details["tokens"] > 0
