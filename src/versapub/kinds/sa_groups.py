"""The ``sa-groups`` kind (Ye et al., DASFAA 2009): the decomposed table of the MSA
decomposition (``docs/release-format.md``).

* ``qit``: ``qi..., group_id, count`` — QI values exact, each record's SA-group;
* ``sets`` (a listing): ``group_id, attribute, value`` — each group's set of values per
  sensitive attribute (Definition 1; a value listed once however many records hold it,
  noise values indistinguishable from the others);
* ``ts``: ``s_1, ..., s_d, count`` — the sensitive table ``T^S``, exact.

Manifest keys: ``primary`` (the primary sensitive attribute) and ``diversity``
(``{attribute: {"l": l_i, "l_per": l_per}}``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.counts import CountTable
from versapub.data.table import GROUP_KEY
from versapub.errors import ReleaseError
from versapub.kinds.anatomy import group_column
from versapub.kinds.base import CodesOf, CountRows, Entry, LeafSets, TablePart, View, register
from versapub.model.factors import AnatomyFactor, Choices, Factor
from versapub.model.set_groups import allowed_pairs, fit
from versapub.privacy.guarantees.guarantee import Guarantee

SETS_COLUMNS = ["group_id", "attribute", "value"]


def set_members(
    entry: Entry, sens: Sequence[str], ids: np.ndarray, codes_of: CodesOf, cards: Mapping[str, int]
) -> list[np.ndarray]:
    """Per sensitive attribute, a boolean matrix ``[group index, value code]`` of the
    groups' sets (``ids``: the group ids, index = position), from the ``sets`` listing."""
    rows = entry.listings.get("sets")
    if rows is None:
        raise ReleaseError(f"Table {entry.name!r}: its 'sets' listing is missing.")
    pos = {int(g): i for i, g in enumerate(ids.tolist())}
    out = []
    for a in sens:
        mine = [r for r in rows if r[1] == a]
        try:
            g = np.asarray([pos[int(r[0])] for r in mine], dtype=np.int64)
        except (KeyError, ValueError):
            raise ReleaseError(f"Table {entry.name!r}: the sets name a group the QIT does not hold.") from None
        v = codes_of(a, [r[2] for r in mine])
        if len(v) and int(v.min()) < 0:
            raise ReleaseError(f"Table {entry.name!r}: a set lists a value of {a!r} that T^S never holds.")
        m = np.zeros((len(ids), cards[a]), dtype=bool)
        m[g, v] = True
        out.append(m)
    return out


class SAGroups:
    """SA-groups with value sets, and the sensitive table."""

    name = "sa-groups"
    glossary = (
        "The MSA decomposition's tables (Ye et al.): each record's quasi-identifier values are published exactly "
        "with its SA-group, each group's set of values per sensitive attribute (at least l_i values, noise "
        "included) separately, and the sensitive table T^S as it is."
    )
    exact_values = True
    counts = "exact"
    in_model = True

    def sensitive_runs(self, directory: Path, entry: Entry) -> dict[str, tuple[str, str]]:
        return {}

    def sensitive_of(self, entry: Entry) -> tuple[str, ...]:
        rules = [entry.raw.get("enforces") or {}, *(entry.raw.get("also_enforces") or [])]
        s = [r.get("rhs") if isinstance(r, dict) else None for r in rules]
        if any(not isinstance(a, str) or a not in entry.attributes for a in s) or len(set(s)) != len(s):
            raise ReleaseError(
                f"sa-groups table {entry.name!r} must enforce rules whose sensitive attributes it holds."
            )
        return tuple(str(a) for a in s)

    def roles(self, entry: Entry) -> dict[str, list[str]]:
        s = self.sensitive_of(entry)
        return {"qit": [*(a for a in entry.attributes if a not in s), "group_id", "count"], "ts": [*s, "count"]}

    def file_names(self, table: str, ext: str) -> dict[str, str]:
        return {"qit": f"{table}_qit.{ext}", "ts": f"{table}_ts.{ext}", "sets": f"{table}_sets.{ext}"}

    def groups(self, entry: Entry) -> tuple[str, list[str]] | None:
        return None  # a group's sensitive values are a set, not counts: the posterior uses the model

    def cells(self, entry: Entry) -> tuple[str, list[str]]:
        s = self.sensitive_of(entry)
        return "qit", [a for a in entry.attributes if a not in s]

    def unguarded(self, entry: Entry) -> list[str]:
        """The QIT's columns, as Anatomy's."""
        return self.cells(entry)[1]

    def listing_roles(self, entry: Entry) -> dict[str, list[str]]:
        return {"sets": list(SETS_COLUMNS)}

    def listings(self, table: AnonymizedTable) -> dict[str, list[tuple[str, ...]]]:
        return {"sets": list(table.listed.get("sets", ()))}

    def leaf_sets(self, entry: Entry, listings: Mapping[str, Sequence[tuple[str, ...]]]) -> LeafSets:
        return {}

    def product_parts(self, table: AnonymizedTable) -> tuple[CountTable, CountTable | None, str | None] | None:
        return None  # IPF over group sets: no closed product

    def manifest_fields(self, table: AnonymizedTable) -> dict[str, Any]:
        return {
            "also_enforces": [r.to_json() for r in table.also_enforces],
            "primary": table.stats.get("primary"),
            "diversity": {a: {"l": d["l"], "l_per": d["l_per"]} for a, d in table.stats.get("diversity", {}).items()},
        }

    def validate(self, table: AnonymizedTable) -> None:
        if set(table.parts) != {"qit", "ts"} or "sets" not in table.listed or table.enforces is None:
            raise ValueError("an sa-groups table has parts 'qit' and 'ts', a 'sets' listing, and enforces a rule")

    def withheld(self, entry: Entry, group_counts: Mapping[int, int]) -> dict[str, int]:
        return {}

    def factor(
        self, entry: Entry, parts: Mapping[str, TablePart], n: int, cards: Mapping[str, int], codes_of: CodesOf
    ) -> Factor:
        """Latent groups as for Anatomy, with each group's sensitive combinations fitted by
        maximum entropy to the group sizes, ``T^S`` and the sets (:mod:`versapub.model.set_groups`)."""
        s = self.sensitive_of(entry)
        qi = [a for a in entry.attributes if a not in s]
        qit, ts = parts["qit"], parts["ts"]
        ids, g_q = np.unique(qit.columns["group_id"], return_inverse=True)
        g_q = g_q.astype(np.int64).ravel()
        size = np.bincount(g_q, weights=qit.counts, minlength=len(ids)).astype(np.float64)
        member = set_members(entry, s, ids, codes_of, cards)
        pair_g, pair_k = allowed_pairs(member, [ts.columns[a] for a in s])
        try:
            counts, _ = fit(size, ts.counts, pair_g, pair_k)
        except ValueError as exc:
            raise ReleaseError(f"Table {entry.name!r}: its QIT, sets and T^S are inconsistent: {exc}.") from None
        keep = counts > 0
        cols = {a: qit.columns[a] for a in qi}
        cols[GROUP_KEY] = g_q
        st_cols = {a: ts.columns[a][pair_k[keep]] for a in s}
        # Bounds read the sets themselves: each record may hold any combination its group allows.
        choices = Choices(np.ones(len(ids), dtype=bool), pair_g, {a: ts.columns[a][pair_k] for a in s}, exact=False)
        return AnatomyFactor(
            tuple(qi), s, cols, qit.counts, pair_g[keep], st_cols, counts[keep], size, float(n), dict(cards), choices
        )

    def view(self, entry: Entry, parts: Mapping[str, CountRows]) -> View:
        """The QIT over the QI and the latent group, and ``T^S`` apart: the count tables an
        adversary reads.  The group sets are not counts; the kind's own attack
        (:mod:`versapub.verify.attacks.attack_msa`) reads them."""
        s = self.sensitive_of(entry)
        qi = tuple(a for a in entry.attributes if a not in s)
        qit, ts = parts["qit"], parts["ts"]
        g = group_column(entry.name)
        return View((CountRows(qit.source, (*qi, g), qit.rows, qit.counts), ts), s)

    def summary(self, directory: Path, entry: Entry, guarantee: Guarantee | None) -> dict[str, Any]:
        """Group sizes, the smallest set per attribute (the achieved ``l_i``), from the manifest's stats."""
        stats = entry.raw.get("stats") or {}
        return {
            "groups": stats.get("groups"),
            "group_sizes": {int(k): int(v) for k, v in (stats.get("group_sizes") or {}).items()},
            "achieved": stats.get("achieved"),
            "achieved_note": "smallest set",
            "residual_records": stats.get("residual_records"),
            "noise_values": stats.get("noise_total"),
        }


SA_GROUPS = register(SAGroups())
