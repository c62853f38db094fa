"""The researchers' Studies tab over HTTP: a bad file is one line and saves nothing, each save is a new
version, and the payment sheet and the study's export come back as files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from battle_support import launch
from study_support import study_yaml


@pytest.fixture
def researcher(services):
    from gradio_client import Client

    demo, url = launch(services, admin=True)
    yield Client(url, verbose=False, httpx_kwargs={"timeout": 120})
    demo.close()


def test_saving_versions_and_downloading_the_payment_sheet_and_export(services, researcher):
    line, _ = researcher.predict(study_yaml(mode="poll"), api_name="/study_save")
    assert line.startswith("⚠️ study file: mode") and "\n" not in line
    assert services.store.study_ids() == []
    line, _ = researcher.predict(study_yaml(), api_name="/study_save")
    assert "version 1" in line
    line, _ = researcher.predict(study_yaml(title="Second wave"), api_name="/study_save")
    assert "version 2" in line and services.store.study_ids() == [("pilot", 2)]
    text, overview, link, quotas, people, board = researcher.predict("pilot", api_name="/study_show")
    assert "Second wave" in text and "version 2" in overview and "open" in overview
    assert "Paste the link into Prolific as it is" in overview and "placeholders left in, is refused" in overview
    assert link.startswith("http://127.0.0.1:") and link.endswith(
        "/study/?study=pilot&PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    assert [row[0] for row in quotas["value"]["data"]] == ["alpha", "beta", "gamma"] and not people["visible"]
    approve, reject, bonus, sheet = researcher.predict("pilot", api_name="/study_payments")
    assert Path(bonus).read_text().splitlines() == ["id,amount"]
    assert Path(approve).name == "pilot-approve.txt" and Path(approve).read_text() == ""
    assert Path(reject).read_text().splitlines() == ["id,reason"]
    assert Path(sheet).read_text().splitlines()[0].startswith("PROLIFIC_PID,SESSION_ID,STUDY_ID,status,")
    files = researcher.predict("pilot", False, api_name="/study_export")
    (bundle,) = [f for f in files if f.endswith(".zip")]
    assert "study-pilot-v2.yaml" in zipfile.ZipFile(bundle).namelist()


def test_a_study_naming_a_system_that_cannot_run_is_refused_at_save(tmp_path):
    from gradio_client import Client

    from battle_support import FakeCatalogCRS, make_services

    services = make_services(tmp_path, [FakeCatalogCRS(n) for n in ("alpha", "beta", "gamma")], unavailable=["beta"])
    demo, url = launch(services, admin=True)
    try:
        line, _ = Client(url, verbose=False).predict(study_yaml(), api_name="/study_save")
    finally:
        demo.close()
        services.store.close()
    assert line == "⚠️ study file: systems: beta cannot run here: no checkpoint; to get it: make models"
    assert services.store.study_ids() == []
