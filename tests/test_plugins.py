"""Plug-ins built with their parameters: one error shape for unknown names and parameters,
config tables and command-line specs, the manifest naming what ran."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import versapub
from versapub.anonymizers import ANONYMIZERS, make_anonymizer
from versapub.cli.main import cli
from versapub.datasets import data_path
from versapub.decompositions import DECOMPOSITIONS, make_decomposition
from versapub.errors import ConfigError, RuleError
from versapub.plugins import Param, parameters, parse_spec
from versapub.privacy.guarantees.guarantee import GUARANTEES, make_guarantee, parse_guarantee

#: The running example's columns that no rule names are published as they are (issue 27).
OTHERS = versapub.ColumnRoles(others="insensitive")


def test_unknown_names_list_the_registered_ones() -> None:
    with pytest.raises(ConfigError) as e:
        make_anonymizer("datafly")
    assert all(n in str(e.value) for n in ANONYMIZERS)
    with pytest.raises(ConfigError) as e:
        make_decomposition("xyz")
    assert all(n in str(e.value) for n in DECOMPOSITIONS)
    with pytest.raises(RuleError) as e2:
        make_guarantee({"name": "p-sensitivity", "p": 0.2})
    assert all(n in str(e2.value) for n in GUARANTEES)


def test_unknown_parameters_list_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"has no parameter.*'width'.*its parameters are: grouping"):
        make_anonymizer("anatomy", width=3)
    with pytest.raises(ConfigError, match="stop_when_worse, max_candidates, jobs"):
        make_decomposition("gd", stop=True)
    with pytest.raises(ConfigError, match=r"max_candidates of gd must be a whole number >= 1 \(or none\), got 'many'"):
        make_decomposition("gd", max_candidates="many")
    with pytest.raises(RuleError, match=r"no parameter.*k.*its parameters are: l"):
        make_guarantee({"name": "l-diversity", "l": 2, "k": 5})


def test_parameters_reach_the_plugin_and_the_manifest() -> None:
    a = make_anonymizer("anatomy", grouping="wrap-around")
    assert a.params() == {"grouping": "wrap-around"}
    assert make_anonymizer("anatomy-wraparound").params() == {"grouping": "wrap-around"}
    rel = versapub.publish(
        versapub.datasets.running_example(),
        ["age, ICD-9-CM -> race"],
        l=2,
        anonymizer="anatomy",
        anonymizer_params={"grouping": "wrap-around"},
        columns=OTHERS,
    )
    assert rel.anonymizer == "anatomy" and rel.anonymizer_params == {"grouping": "wrap-around"}


def test_multi_sa_is_a_registered_anonymizer_named_in_the_manifest() -> None:
    table = versapub.datasets.running_example()
    rel = versapub.publish(
        table,
        ["age -> race", "age -> zipcode"],
        l=2,
        decomposition="multi-sa",
        anonymizer_params={"time_limit_s": 5},
        columns=OTHERS,
    )
    assert rel.anonymizer == "multi-sa" and rel.anonymizer_params["time_limit_s"] == 5.0
    with pytest.raises(ConfigError, match="enforces 1 rule"):
        versapub.publish(
            table,
            ["age -> race", "age -> zipcode"],
            l=2,
            decomposition="multi-sa",
            anonymizer="anatomy",
            columns=OTHERS,
        )


def test_parse_spec() -> None:
    assert parse_spec("GD:stop-when-worse=true,max_candidates=20", "--decomposition") == (
        "gd",
        {"stop_when_worse": True, "max_candidates": 20},
    )
    with pytest.raises(ConfigError, match="key=value"):
        parse_spec("gd:oops", "--decomposition")


def test_config_tables_and_cli_specs(tmp_path: Path) -> None:
    data = data_path("running_example.csv")
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        f'[input]\npath = "{data}"\n[columns]\nothers = "insensitive"\n'
        '[privacy]\nrules = ["age, ICD-9-CM -> race", "gender -> zipcode"]\n'
        '[privacy.guarantee]\nname = "l-diversity"\nl = 2\n'
        '[publish.decomposition]\nname = "gd"\nstop_when_worse = true\n'
        '[publish.anonymizer]\nname = "anatomy"\ngrouping = "wrap-around"\n'
    )
    out = tmp_path / "a"
    r = CliRunner().invoke(cli, ["publish", str(cfg), "--out", str(out), "--no-utility"])
    assert r.exit_code == 0, r.stderr
    m = json.loads((out / "manifest.json").read_text())
    assert m["decomposition"]["name"] == "gd" and m["decomposition"]["params"]["stop_when_worse"] is True
    assert m["anonymizer"] == {"name": "anatomy", "params": {"grouping": "wrap-around"}}
    out2 = tmp_path / "b"
    r = CliRunner().invoke(
        cli,
        [
            "publish",
            str(cfg),
            "--decomposition",
            "uad",
            "--anonymizer",
            "anatomy",
            "--guarantee",
            "l-diversity:l=2",
            "--out",
            str(out2),
            "--no-utility",
        ],
    )
    assert r.exit_code == 0, r.stderr
    m = json.loads((out2 / "manifest.json").read_text())
    assert m["decomposition"]["name"] == "uad" and m["anonymizer"]["params"] == {"grouping": "greedy"}
    r = CliRunner().invoke(cli, ["publish", str(cfg), "--anonymizer", "anatomy:width=2", "--out", str(tmp_path / "c")])
    assert r.exit_code == 2 and "its parameters are: grouping" in r.stderr


def _bad_value(p: Param) -> object:
    """A value the constraint refuses."""
    if p.kind in ("whole", "number", "numbers"):
        return "many" if p.low is None else ([p.low - 1] if p.kind == "numbers" else p.low - 1)
    return 3 if p.kind in ("flag", "choice", "text") else None


def _plugins() -> list[tuple[str, str, object, type]]:
    out: list[tuple[str, str, object, type]] = [("anonymizer", n, c, ConfigError) for n, c in ANONYMIZERS.items()]
    out += [("decomposition", n, c, ConfigError) for n, c in DECOMPOSITIONS.items()]
    out += [("guarantee", n, c, RuleError) for n, c in GUARANTEES.items() if n != "all-of"]
    return out


@pytest.mark.parametrize(("what", "name", "cls", "error"), _plugins(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_plugin_declares_its_parameters_and_every_error_has_one_shape(
    what: str, name: str, cls: object, error: type
) -> None:
    """Each registered plug-in declares a constraint per parameter and describes itself for
    the report's glossary; a value outside a constraint is refused as 'P of NAME must be ...,
    got V.' whether the plug-in is built by name or constructed directly."""
    constraints = cls.parameter_constraints  # type: ignore[attr-defined]
    assert cls.glossary  # type: ignore[attr-defined]
    assert parameters(cls) == list(constraints) or not constraints
    example = dict(getattr(cls, "example", {}))
    for p, c in constraints.items():
        bad = _bad_value(c)
        given = {**example, p: bad}
        with pytest.raises(error, match=rf"^{p} of {name} must be {re.escape(c.describe())}, got "):
            if what == "guarantee":
                make_guarantee({"name": name, **given})
            elif what == "anonymizer":
                make_anonymizer(name, **given)
            else:
                make_decomposition(name, **given)


def test_one_parser_for_every_plugin() -> None:
    """Booleans, none, numbers, lists and hyphenated names read the same for every kind of plug-in."""
    assert parse_spec("msa-decomposition:above-l-per=true,primary=none", "--anonymizer") == (
        "msa-decomposition",
        {"above_l_per": True, "primary": None},
    )
    g = make_guarantee(parse_guarantee("functional:tau=0.5,lambda=3,phi=[0.5; 0.8]"))
    assert g.params()["tau"] == 0.5 and g.params()["lambda"] == 3 and tuple(g.params()["phi"]) == (0.5, 0.8)
    assert make_guarantee(parse_guarantee("t-closeness:t=0.2,distance=equal")).params()["distance"] == "equal"
    d = make_decomposition("gd", **parse_spec("gd:stop-when-worse=true,max-candidates=4", "--decomposition")[1])
    assert d.params() == {"stop_when_worse": True, "max_candidates": 4}
