"""``query`` and ``sample``: use a release through its maximum-entropy model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from versapub.errors import ConfigError
from versapub.formats import read_manifest

if TYPE_CHECKING:
    import pyarrow as pa

    from versapub.model.interval import Bound


@dataclass(frozen=True)
class QueryResult:
    """A COUNT query's estimate under the release's model and, when the original was given,
    its actual count. :meth:`to_dict` is ``versapub query --json``."""

    estimate: float
    actual: int | None = None
    original_mismatch: tuple[str, ...] = ()
    #: How the estimate was made beyond the model (a correction for PRAM), in sentences.
    notes: tuple[str, ...] = ()
    #: The range the release allows (:mod:`versapub.model.bounds`), or a statistical interval.
    bound: Bound | None = None
    #: Records the release removed (in no table): the actual count on the whole input may
    #: exceed the range's upper end by at most these (issue 66).
    removed: int = 0

    @property
    def relative_error(self) -> float | None:
        """``|actual - estimate| / actual``; None without the original or when it is 0."""
        if not self.actual:
            return None
        return abs(self.actual - self.estimate) / self.actual

    @property
    def inside(self) -> bool | None:
        """Whether the actual count lies in the range (None without the original or a range)."""
        if self.actual is None or self.bound is None or (self.bound.basis == "dp-noise" and not self.bound.method):
            return None
        if self.removed and not self.bound.statistical:  # the published records' count, plus the removed ones
            return self.bound.lower - 1e-9 <= self.actual <= self.bound.upper + self.removed + 1e-9
        return self.bound.contains(self.actual)

    def text(self) -> str:
        """``estimate 1,078 (any table consistent with the release: 0 to 2,369)``."""
        est = f"estimate {self.estimate:,.2f}"
        return est if self.bound is None else f"{est} ({self.bound.text()})"

    def to_dict(self) -> dict[str, Any]:
        b = self.bound.to_dict() if self.bound is not None else {}
        return {
            "estimate": self.estimate,
            "lower": b.get("lower"),
            "upper": b.get("upper"),
            "sharp": b.get("sharp"),
            "statistical": b.get("statistical"),
            "range_basis": b.get("basis"),
            "range_method": b.get("method"),
            "actual": self.actual,
            "actual_inside": self.inside,
            "original_mismatch": list(self.original_mismatch),
            "notes": list(self.notes),
        }


def query(
    release: str | Path,
    text: str,
    original: str | Path | None = None,
    missing: str | None = None,
    seconds: float = 2.0,
    within: Path | None = None,
) -> QueryResult:
    """Estimated ``COUNT(*) WHERE text`` under the release's maximum-entropy model (the
    query language of :func:`versapub.model.query.parse_query`; a published generalized
    value, ``age = '[60-80)'``, stands for the values it covers), and the actual count on the
    original: ``original`` (a data file or TOML config); a date in the format the input was
    read in (``--date-format``) reads as the ISO date the release publishes; by default the input the
    manifest records when it is found unchanged (as ``evaluate`` does; none when it is not).

    Beside the estimate, the smallest and largest count over every table consistent with
    the release (:mod:`versapub.model.bounds`; ``seconds`` bounds an integer program, past
    which the sound cheap bounds are returned marked not sharp).  ``within``: the recorded
    input is looked for only inside that folder (the web server's root)."""
    d = Path(release)
    manifest = read_manifest(d)  # not a release: one paragraph, before the engines load
    from versapub.inspect.original import original_table
    from versapub.kinds.load import load_release, published_labels
    from versapub.model.query import count, count_rows, parse_query

    model = load_release(d)
    q = parse_query(text).with_labels(published_labels(d))  # a published range reads as what it covers
    q = q.with_dates(manifest.input.get("date_formats") or {})  # 14/03/2021 as 2021-03-14
    fix = {a: c for a, c in pram_corrections(manifest.raw).items() if a in q.attributes}
    est = count(model, q, fix)
    notes = tuple(
        f"corrected for PRAM of {a}: the published transition matrix inverted (T = T* P^-1, Gouweleeuw et al. 1998)"
        for a in fix
    )
    bound = query_range(model, q, manifest.raw, fix, est, seconds)
    from versapub.errors import VersapubError

    try:
        orig = original_table(d, original, missing, model, columns=q.attributes, within=within)
    except VersapubError:
        if original is not None:
            raise
        return QueryResult(est, notes=notes, bound=bound)  # the recorded input is not here: the estimate alone
    t = orig.table
    actual = count_rows(q, {a: t.column(a).values for a in q.attributes}, {a: t.codes(a) for a in q.attributes})
    gone = manifest.raw.get("removed")
    removed = int(gone.get("records") or 0) if isinstance(gone, dict) else 0
    if removed:
        notes += (
            f"the actual count reads the whole input; the release removed {removed:,} record(s) (in no table), so the "
            "true count lies between the range's lower end and its upper end plus those",
        )
    return QueryResult(est, actual, orig.mismatch, notes, bound, removed)


def changed_columns(manifest: Mapping[str, Any]) -> set[str]:
    """Columns whose published values a treatment moved (noise, microaggregation, PRAM,
    swapping: the manifest's ``perturbation``), as opposed to coding."""
    pert = manifest.get("perturbation") or {}
    cols = pert.get("columns") if isinstance(pert, dict) else None
    if isinstance(cols, dict):
        return {str(c) for c in cols}
    if isinstance(cols, list):
        return {str(c) for c in cols}
    return set()


def query_range(
    model: Any, q: Any, manifest: Mapping[str, Any], fix: Mapping[str, Any], estimate: float, seconds: float
) -> Bound:
    """The range beside a query's estimate: over the tables consistent with the release;
    for a PRAM-corrected query the correction's 95 % interval; when a treatment moved values
    of a queried column, the range of the treated values, marked statistical."""
    from dataclasses import replace

    from versapub.model.bounds import count_bounds, pram_interval, query_formula

    if fix:
        return pram_interval(model, q, fix, estimate)
    b = count_bounds(model, query_formula(model, q), seconds=seconds)
    if changed_columns(manifest) & set(q.attributes):
        return replace(b, basis="treated", sharp=False)
    return b


def pram_corrections(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """Column -> (values, matrix) of each PRAM'd column the manifest publishes one matrix
    for, the last treatment of its column (a stratified invariant PRAM has one per stratum:
    not corrected)."""
    import numpy as np

    records = [r for r in manifest.get("treatments") or [] if isinstance(r, dict)]
    last = {str(c): i for i, r in enumerate(records) for c in r.get("columns") or []}
    out: dict[str, Any] = {}
    for i, r in enumerate(records):
        if r.get("name") != "pram":
            continue
        for c in r.get("columns") or []:
            mats = [m for m in r.get("matrices") or [] if isinstance(m, dict) and m.get("column") == c]
            if len(mats) == 1 and last[str(c)] == i:
                out[str(c)] = ([str(v) for v in mats[0]["values"]], np.asarray(mats[0]["matrix"], dtype=float))
    return out


def sample(release: str | Path, n: int, seed: int = 0) -> pa.Table:
    """``n`` synthetic records drawn from the release's maximum-entropy model (values, not
    codes), seeded."""
    d = Path(release)
    read_manifest(d)
    import numpy as np

    from versapub.kinds.load import load_release

    if n < 1:
        raise ConfigError(f"-n must be at least 1, got {n}.")
    return load_release(d).sample(n, np.random.default_rng(seed))


def domains(release: str | Path, limit: int = 500) -> dict[str, list[str]]:
    """Every attribute a query may name, with (up to ``limit`` of) its published values and
    the generalized values a query may use (for completion)."""
    d = Path(release)
    read_manifest(d)
    from versapub.kinds.load import load_release, published_labels

    model = load_release(d)
    labels = published_labels(d)
    out = {}
    for a, dom in model.domains.items():
        values = [str(v) for v in dom] + sorted(labels.get(a, {}))
        out[a] = list(dict.fromkeys(values))[:limit]
    return out
