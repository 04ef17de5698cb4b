"""The browser's job and the CLI's TOML (issue 30): one configuration, both ways; a
publish in the background reports progress and, cancelled, leaves nothing behind."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("tomli_w", reason="the web extra is installed by make test (pip install '.[test,dask,web]')")

from versapub.errors import ConfigError
from versapub.io.config import load_config
from versapub.web import jobs
from versapub.web.paths import Root

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
JOB = {
    "input": "data/data.csv",
    "delimiter": "",
    "header": True,
    "na_values": ["?"],
    "missing": "error",
    "date_formats": {},
    "roles": {"patient_id": "identifying", "race": "insensitive", "hours": "insensitive", "age": "quasi_identifying"},
    "rules": [
        {"rule": "age, sex -> disease", "guarantee": ""},
        {"rule": "zip -> education", "guarantee": "t-closeness:t=0.3"},
    ],
    "guarantee": "l-diversity:l=2",
    "anonymizer": "",
    "decomposition": "gd",
    "hierarchies": {"age": "hier/age.csv"},
    "seed": 3,
    "treatments": ["rounding:columns=hours,base=5", "pram:columns=race,retention=0.9,invariant=true"],
    "marginals": None,
    "mechanism": "",
    "domains": {},
}


@pytest.fixture
def root(tmp_path: Path) -> Root:
    (tmp_path / "data").mkdir()
    shutil.copy(EXAMPLES / "data.csv", tmp_path / "data" / "data.csv")
    return Root.of(tmp_path)


def test_the_browsers_job_is_the_clis_toml_both_ways(root: Root) -> None:
    text = jobs.job_toml(JOB, "jobs/a.toml")
    saved = root.path / "jobs" / "a.toml"
    saved.parent.mkdir()
    saved.write_text(text)
    cfg = load_config(saved)  # the CLI reads it
    assert cfg.input == saved.parent / "../data/data.csv" and cfg.na_values == ("?",) and cfg.seed == 3
    assert [str(r) if isinstance(r, str) else r["rule"] for r in cfg.rules] == [
        "age, sex -> disease",
        "zip -> education",
    ]
    assert cfg.guarantee == "l-diversity" and cfg.l == 2 and cfg.decomposition == "gd"
    assert tuple(cfg.roles.identifying) == ("patient_id",) and "age" in cfg.roles.quasi_identifying
    assert cfg.hierarchies[0].attribute == "age" and cfg.hierarchies[0].file.name == "age.csv"
    assert [t["name"] for t in cfg.treatments] == ["rounding", "pram"]  # [[treatment]], in order
    assert jobs.job_of_toml(text, "jobs/a.toml") == JOB  # and the browser reads it back as it was


def test_unknown_roles_and_a_missing_input_are_refused() -> None:
    with pytest.raises(ConfigError, match="Choose the data file"):
        jobs.job_toml({"input": ""})
    with pytest.raises(ConfigError, match="needs a value for magnitude"):
        jobs.job_toml({"input": "a.csv", "treatments": ["noise:columns=x"]})
    with pytest.raises(ConfigError, match="Unknown column role"):
        jobs.job_toml({"input": "a.csv", "roles": {"x": "secret"}})


def test_a_cancelled_publish_leaves_nothing_behind(root: Root) -> None:
    tasks = jobs.Tasks()
    plain = {"hierarchies": {}, "decomposition": "", "roles": {"patient_id": "identifying"}, "na_values": []}
    cfg = jobs.job_config(root, {**JOB, **plain, "rules": [{"rule": "age, sex, race, zip, hours -> disease"}]})
    cfg = cfg.with_overrides(roles=replace(cfg.roles, others="insensitive"))
    task = tasks.start_publish(root, cfg, "out/rel")
    task.cancel.set()  # the job takes far longer than this line: the next progress step stops it
    deadline = time.monotonic() + 60
    while task.status == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert task.status == "cancelled", task.to_dict()
    assert "nothing was written" in task.message
    left = sorted(p.name for p in (root.path / "out").iterdir()) if (root.path / "out").exists() else []
    assert left == []  # no release, no scratch folder
    done = tasks.start_publish(root, cfg, "out/rel")  # and the same job runs to the end afterwards
    while done.status == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done.status == "done" and done.to_dict()["percent"] is not None, done.message
    assert (root.path / "out" / "rel" / "manifest.json").is_file()
    with pytest.raises(Exception, match="exists"):
        tasks.start_publish(root, cfg, "out/rel")  # never over a release without 'replace'


def test_a_collection_of_marginals_from_the_browser(root: Root) -> None:
    """Anonymized marginals instead of rules: checked, published in the background, and the
    release passes check; its TOML is what `versapub marginals publish` reads."""
    from click.testing import CliRunner

    from versapub.cli.main import cli

    roles = {"patient_id": "identifying", **{c: "insensitive" for c in ("zip", "education", "hours", "race")}}
    marginals = {"sensitive": "disease", "k": 5, "diversity": "l-diversity:l=2", "base": ""}
    marginals |= {"marginals": ["age, sex, disease", "race, disease"], "inject": 0}
    job = {"input": "data/data.csv", "roles": roles, "marginals": marginals}
    text = jobs.job_toml(job, "jobs/m.toml")
    assert text.startswith("# A versapub job, saved by versapub serve: versapub marginals publish")
    assert jobs.job_of_toml(text, "jobs/m.toml")["marginals"] == marginals
    cfg = jobs.job_config(root, job)
    assert cfg.marginals is not None and cfg.marginals.k == 5
    task = jobs.Tasks().start_publish(root, cfg, "out/m")
    deadline = time.monotonic() + 120
    while task.status == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert task.status == "done", task.message
    r = CliRunner().invoke(cli, ["check", str(root.path / "out" / "m")])
    assert r.exit_code == 0, r.output


def test_a_household_id_is_a_role_of_the_page(root: Root) -> None:
    """Issue 68: the page's roles carry the household id, saved as ``[columns] household`` (the
    CLI removes it and reports the household figures) and read back as the same role; two
    columns marked household are refused."""
    job = {**JOB, "roles": {**JOB["roles"], "patient_id": "household"}}
    text = jobs.job_toml(job, "jobs/h.toml")
    saved = root.path / "jobs" / "h.toml"
    saved.parent.mkdir()
    saved.write_text(text)
    cfg = load_config(saved)
    assert cfg.roles.household == "patient_id" and "patient_id" in cfg.roles.identifying
    assert jobs.job_of_toml(text, "jobs/h.toml") == job
    with pytest.raises(ConfigError, match="One column holds the household id"):
        jobs.job_toml({**job, "roles": {**job["roles"], "zip": "household"}}, "jobs/h.toml")
