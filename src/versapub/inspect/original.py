"""The original table of a release, read as its manifest records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from versapub.errors import ConfigError
from versapub.formats import read_manifest

if TYPE_CHECKING:
    from versapub.data import EncodedTable
    from versapub.model.maxent import ReleaseModel


@dataclass(frozen=True)
class Original:
    """The original table and how it differs from the release (each difference a sentence;
    empty when nothing differs: same records, every value published)."""

    table: EncodedTable
    mismatch: tuple[str, ...]
    #: The table as read, before the release's treatments and recoding are applied to it (what
    #: ``check`` hands the verifier, which applies them itself); None: ``table`` is it.
    as_read: EncodedTable | None = None

    @property
    def read(self) -> EncodedTable:
        """The original as read (before treatments and recoding)."""
        return self.as_read if self.as_read is not None else self.table


def original_table(
    release: str | Path,
    original: str | Path | None = None,
    missing: str | None = None,
    model: ReleaseModel | None = None,
    columns: Sequence[str] | None = None,
    within: Path | None = None,
    households: bool = False,
) -> Original:
    """The original table, read as the manifest records (columns, header and names,
    delimiter, markers, hierarchies and levels, missing policy): from ``original`` (a data
    file or the TOML config it was published with), or by default from the manifest's input
    found by name (beside the release, in the current directory, among the embedded
    datasets) — which must then be the very file published (same SHA-256).  ``columns``:
    read only those of the release's columns (a query's), unless the missing policy drops
    records (:func:`versapub.io.config.original_reader`); ``within``: the recorded input and
    hierarchies are looked for only inside that folder; ``households``: with the household id
    column the manifest names (for ``check``: the verifier reads what was done per household)."""
    from versapub.formats import file_sha256
    from versapub.io.config import original_reader
    from versapub.kinds.load import load_release
    from versapub.model import original_mismatch
    from versapub.release.recoded import as_published
    from versapub.release.treated import as_treated

    d = Path(release)
    manifest = read_manifest(d)
    path = Path(original) if original is not None else None
    cfg = original_reader(manifest, path, missing, d, columns, within, households)
    if path is None:
        recorded = manifest.input.get("sha256")
        if recorded and file_sha256(cfg.input) != recorded:
            raise ConfigError(
                f"{cfg.input} is not the input the release was published from (its sha256 differs from the "
                f"manifest's {recorded[:16]}…): it changed since, or another file has its name. Give the original "
                "with --original."
            )
    read = cfg.read()
    treated, skipped = as_treated(read, manifest.raw.get("treatments"))  # treated before anonymizing
    table = as_published(treated, manifest.raw.get("recoded"))  # columns recoded to meet --k
    perturbed = {
        str(c)
        for r in manifest.raw.get("treatments") or []
        if isinstance(r, dict) and r.get("name") in skipped
        for c in r.get("columns") or []
    }
    named = list(cfg.columns) if columns is not None and cfg.columns else None
    mismatch = tuple(original_mismatch(model or load_release(d), table, ignore=perturbed, attributes=named))
    if skipped:  # noise, PRAM, swapping, microaggregation: the original cannot be treated again
        mismatch = (
            *mismatch,
            f"the release perturbed {', '.join(sorted(perturbed))} before anonymizing ({', '.join(skipped)}): the "
            "figures compare it with the original's own values of those columns, so they include what the "
            "perturbation changed",
        )
    gone = manifest.raw.get("removed")
    records = gone.get("records") if isinstance(gone, dict) else None
    if mismatch and isinstance(records, int) and table.n_rows == manifest.n_records + records:
        mismatch = (  # the records suppression removed are in the original, in no table
            f"the release removed {records:,} of the original's {table.n_rows:,} records by suppression (they are "
            "in no table): the figures compare it with the whole original, those records included",
        )
    return Original(table, mismatch, read if read is not table else None)


def population_table(release: str | Path, population: str | Path, missing: str | None = None) -> EncodedTable:
    """The population a release's records were drawn from (``check --population``), read as
    the manifest records the input (delimiter, markers, hierarchy levels, missing policy),
    every column kept, its SHA-256 computed."""
    from dataclasses import replace

    from versapub.formats import file_sha256
    from versapub.io.config import original_reader

    d, path = Path(release), Path(population)
    cfg = original_reader(read_manifest(d), path, missing, d)
    table = replace(cfg, columns=None).read()
    return table if table.sha256 else replace(table, sha256=file_sha256(path))
