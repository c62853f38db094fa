import json

from matplotlib.figure import Figure

from webapp.ui.parts.scorecard import core_scorecard
from evaluators.core import CoreConfig, score_core

from core_fakes import Script, make_client, sample_dialogue


def scored_dialogue():
    def judge(factor, model, retry):
        if factor == "novelty":
            return "no rating at all"
        return f"<b>bold</b> claim about {factor} <rating>{len(factor) % 5}</rating>"

    def debate(role, rnd, model):
        return json.dumps({"evaluator": role, "statement": "<script>alert(1)</script> fine",
                           "score": 40 if rnd == 2 else 30 + len(role)})

    dialogue = sample_dialogue()
    client = make_client(Script(judge=judge, debate=debate))
    for name, score in score_core(dialogue, client, config=CoreConfig(max_rounds=2)).items():
        dialogue.set_score(name, score)
    dialogue.set_score("rdl", dialogue.scores["core.coherence"].model_copy(update={"scorer": "rdl"}))
    return dialogue


def test_scorecard_figure_and_markdown():
    dialogue = scored_dialogue()
    figure, markdown = core_scorecard(dialogue)
    assert isinstance(figure, Figure)
    ax = figure.axes[0]
    assert len(ax.patches) == 12
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == "Coherence" and "Grammatical Correctness" in labels
    widths = {label: patch.get_width() for label, patch in zip(labels, ax.patches)}
    assert widths["Coherence"] == len("coherence") % 5
    assert "unscored" in [t.get_text() for t in ax.texts]
    assert "overall 40.0/100" in ax.get_title()

    assert "### CoRE overall: 40.0 / 100" in markdown
    assert "2 debate round(s)" in markdown and "**Round 2**" in markdown
    assert "| Novelty | unscored |" in markdown
    assert "<script>" not in markdown and "<b>" not in markdown  # model text is escaped
    assert "Common User" in markdown and "rdl" not in markdown


def test_scorecard_accepts_a_score_mapping_and_handles_no_scores():
    dialogue = scored_dialogue()
    figure, markdown = core_scorecard(dialogue.scores)
    assert figure is not None and "CoRE overall" in markdown
    assert core_scorecard(sample_dialogue())[0] is None
    assert "No CoRE scores" in core_scorecard(None)[1]
