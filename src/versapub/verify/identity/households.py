"""A floor that counts households (``job.unit = "household"``, issue 68), checked with the
original: the input's household id (the manifest's ``household.column``) groups its records;
in every table that publishes key cells of records, a household's structure is its values of
the keys constant within every household and the sorted list of its members' other key values
(each read as published: the caller passes the input recoded as the release recodes it). The
verifier removes the households whose structure fewer than ``k`` households share, again until
none is short, and the records left must be the release's ``n_records`` with the manifest's
``removed`` count — a release that kept a household unique on its structure, or claims a
count it did not remove, fails. Written apart from the publisher's (DuckDB-free pandas
grouping on text, not its code arrays)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from versapub.verify.identity.key_cells import excluded_of, keys_of
from versapub.verify.reading.kind_checks import reading
from versapub.verify.reading.reading import parse_entry


def household_findings(manifest: dict[str, Any], original: Any) -> list[tuple[bool, str]]:
    """The check (module docstring) as findings; none when the floor counts records."""
    job = manifest.get("job")
    if not isinstance(job, dict) or job.get("unit") != "household":
        return []
    block = manifest.get("household")
    column = block.get("column") if isinstance(block, dict) else None
    k = int(job.get("floor") or 1)
    if not isinstance(column, str) or column not in getattr(original, "names", ()):
        return [(False, "the floor counts households, but the input holds no household id the manifest names")]
    tables = _table_keys(manifest)
    wanted = sorted({column, *(a for keys in tables for a in keys)})
    frame = pd.DataFrame({a: original.column(a).values.astype(str)[original.codes(a)] for a in wanted})
    alive = pd.Series(True, index=frame.index)
    for _ in range(len(frame) + 1):
        short: set[str] = set()
        for keys in tables:
            short |= _short(frame[alive], column, keys, k)
        if not short:
            break
        alive &= ~frame[column].isin(short)
    left, households = int(alive.sum()), int(frame.loc[alive, column].nunique())
    removed = manifest.get("removed")
    gone = int(removed.get("records") or 0) if isinstance(removed, dict) else 0
    ok = left == int(manifest.get("n_records") or -1) and gone == len(frame) - left
    return [
        (
            ok,
            f"every published household's structure is shared by at least {k} households: {households:,} households "
            f"({left:,} records) are left when those of shorter structures are removed whole, as published"
            if ok
            else f"the floor counts households (k = {k}): removing the households of shorter structures leaves "
            f"{left:,} records ({len(frame) - left:,} removed), but the release publishes {manifest.get('n_records')} "
            f"and says it removed {gone}",
        )
    ]


def _table_keys(manifest: dict[str, Any]) -> list[list[str]]:
    """Each table's key cell columns (as the identity check reads them), of tables of records."""
    named, left_out = keys_of(manifest, None), excluded_of(manifest, None)
    out = []
    for e in manifest.get("tables") or []:
        entry = parse_entry(e)
        kind = reading(entry.kind)
        if not kind.records:
            continue
        _, cells = kind.cells(entry)
        keys = [a for a in cells if a not in left_out] if named is None else [a for a in cells if a in named]
        if keys:
            out.append([str(a) for a in keys])
    return out


def _short(frame: pd.DataFrame, column: str, keys: list[str], k: int) -> set[str]:
    """The households whose structure on ``keys`` fewer than ``k`` households share."""
    if frame.empty:
        return set()
    level = [a for a in keys if int(frame.groupby(column)[a].nunique().max()) <= 1]
    person = [a for a in keys if a not in level]
    member = _joined(frame, person)
    grouped = pd.DataFrame({"h": frame[column], "m": member}).sort_values(["h", "m"])
    structure = grouped.groupby("h")["m"].agg("\x1e".join)
    if level:
        structure = structure + "\x1d" + _joined(frame.groupby(column)[level].first(), level)
    shared = structure.map(structure.value_counts())
    return set(shared[shared < k].index)


def _joined(frame: pd.DataFrame, names: list[str]) -> pd.Series:
    """Each row's values of ``names`` as one text (vectorized)."""
    if not names:
        return pd.Series("", index=frame.index)
    return frame[names[0]].str.cat([frame[a] for a in names[1:]], sep="\x1f") if len(names) > 1 else frame[names[0]]
