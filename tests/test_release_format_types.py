"""A typed release format on each side (issue 46): the publisher's ``formats.read_manifest``
returns a frozen :class:`~versapub.formats.Manifest` whose table entries are
:class:`~versapub.formats.TableEntry` values; the verifier reads the same file with its own
:func:`versapub.verify.reading.manifest.contents`, sharing no code with it; both agree on every
release, and each names what is wrong with a malformed one."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import versapub
from versapub import datasets
from versapub.errors import ReleaseError
from versapub.formats import FORMAT, Manifest, TableEntry, read_manifest
from versapub.verify.reading.manifest import Contents, ManifestProblem, contents

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = {"manifest.json", "verification.json", "check.json", "report.md", "report.html"}


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """An Anatomy release of the paper's running example and a generalized one."""
    out = []
    table = datasets.running_example()
    for name, anonymizer in (("anatomy", "anatomy"), ("generalized", "mondrian")):
        d = tmp_path_factory.mktemp(name) / "rel"
        rel = versapub.publish(table, datasets.RUNNING_EXAMPLE_RULES, l=2, seed=3, anonymizer=anonymizer)
        versapub.write_release(rel, d)
        out.append(d)
    return out


def test_both_readers_agree_on_every_release(releases: list[Path]) -> None:
    for d in releases:
        mine = read_manifest(d)
        theirs = contents(json.loads((d / "manifest.json").read_text(encoding="utf-8")), FORMAT)
        assert isinstance(mine, Manifest) and isinstance(theirs, Contents)
        assert mine.n_records == theirs.n_records == datasets.running_example().n_rows
        entries = mine.entries()
        assert all(isinstance(e, TableEntry) for e in entries)
        assert [(e.name, e.kind, e.files) for e in entries] == [(t.name, t.kind, t.files) for t in theirs.tables]
        assert mine.attributes == theirs.attributes
        # every file on disk is one the manifest lists, or one of the release's own
        on_disk = {p.name for p in d.iterdir()}
        assert on_disk - EXTRAS == theirs.listed_files()
        # the remaining keys read as a mapping, as written
        assert mine["guarantee"] == theirs.raw["guarantee"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda m: [], "manifest.json is not a JSON object"),
        (lambda m: {k: v for k, v in m.items() if k != "rules"}, "core key(s) ['rules'] are missing"),
        (lambda m: {**m, "format": "x/9"}, "unknown format 'x/9'"),
        (lambda m: {**m, "n_records": 0}, "n_records must be a positive integer, got 0"),
        (lambda m: {**m, "n_records": True}, "n_records must be a positive integer, got True"),
    ],
)
def test_the_verifier_names_what_is_wrong(releases: list[Path], change: object, said: str) -> None:
    raw = json.loads((releases[0] / "manifest.json").read_text(encoding="utf-8"))
    with pytest.raises(ManifestProblem) as exc:
        contents(change(raw), FORMAT)  # type: ignore[operator]
    assert said in str(exc.value)


def test_a_hierarchy_path_is_named_not_followed(releases: list[Path]) -> None:
    raw = json.loads((releases[0] / "manifest.json").read_text(encoding="utf-8"))
    got = contents({**raw, "hierarchies": {"zip": "../etc/passwd"}}, FORMAT)
    assert got.hierarchies is None
    assert "hierarchies must map attributes to file names" in str(got.hierarchy_problem())


@pytest.mark.parametrize("missing", ["name", "attributes", "kind", "files"])
def test_a_malformed_table_entry_is_one_sentence(missing: str) -> None:
    entry = {"name": "T1", "attributes": ["a"], "kind": "plain", "files": {"data": "T1.csv"}}
    with pytest.raises(ReleaseError, match=f"lacks '{missing}'"):
        TableEntry.parse({k: v for k, v in entry.items() if k != missing})
    assert TableEntry.parse(entry).files == {"data": "T1.csv"}


def test_read_manifest_checks_the_core(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"format": FORMAT, "n_records": 3, "tables": []}))
    with pytest.raises(ReleaseError, match="'tables' must be a non-empty list"):
        read_manifest(tmp_path)


def test_the_readers_share_no_code() -> None:
    """The verifier's reading imports nothing of the publisher's (nor the other way)."""
    theirs = ast.parse((ROOT / "src/versapub/verify/reading/manifest.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(theirs) if isinstance(n, ast.ImportFrom) and n.module} | {
        a.name for n in ast.walk(theirs) if isinstance(n, ast.Import) for a in n.names
    }
    assert not {m for m in imported if m.startswith("versapub")}, imported
