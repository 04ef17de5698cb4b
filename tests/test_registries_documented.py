"""The help lists and the format document name every registered plug-in (issue 46: a
reviewer's new guarantee was missing from both without any test noticing)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from versapub.anonymizers import ANONYMIZERS
from versapub.cli.main import cli
from versapub.decompositions import DECOMPOSITIONS
from versapub.kinds import KINDS
from versapub.privacy.guarantees.guarantee import ALIASES, GUARANTEES

ROOT = Path(__file__).resolve().parents[1]
#: Written by versapub, never chosen with --guarantee: the manifest form of rules that carry
#: different guarantees (a combination of built guarantees).
NOT_A_FLAG_CHOICE = {"all-of"}


def _help(*command: str) -> str:
    return CliRunner().invoke(cli, [*command, "--help"], terminal_width=10_000).output


def test_publish_help_lists_every_guarantee_and_anonymizer() -> None:
    text = _help("publish")
    spellings = {name: {name, *(a for a, n in ALIASES.items() if n == name)} for name in GUARANTEES}
    missing = [g for g in GUARANTEES if g not in NOT_A_FLAG_CHOICE and not any(s in text for s in spellings[g])]
    assert not missing, f"--guarantee's help does not name {missing}"
    assert not [a for a in ANONYMIZERS if a not in text], "--anonymizer's help misses an anonymizer"
    assert not [d for d in DECOMPOSITIONS if d not in text], "--decomposition's help misses a decomposition"


def test_the_format_document_names_every_guarantee_and_kind() -> None:
    doc = (ROOT / "docs" / "release-format.md").read_text()
    assert not [g for g in GUARANTEES if f"`{g}`" not in doc and g not in doc]
    assert not [k for k in KINDS if k not in doc]
