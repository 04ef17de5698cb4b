"""The population-uniqueness figure of each table of a written release (issue 69): what
``check --sampling-fraction`` and ``report --sampling-fraction`` add to every identity
finding. A figure, not a test: the verifier's findings are left as they are and the figure
is added beside them here, on the read side (the verifier shares no code with the measures
of :mod:`versapub.privacy.risk`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def population_text(pu: dict[str, Any]) -> str:
    """The population-uniqueness figure of an identity finding, as a sentence."""
    iv = pu.get("interval")
    within = f", 95 % under the model {iv[0]:,.1f}-{iv[1]:,.1f}" if iv else ""
    return (
        f"Of its records alone, {pu['estimate']:,.1f} are estimated unique in the population (sampling fraction "
        f"{pu['sampling_fraction']:g}, {pu['model']} model{within})."
    )


def with_population(directory: Path, identity: list[dict[str, Any]], fraction: float) -> list[dict[str, Any]]:
    """``identity`` (``check``'s findings, one per table) with each table of records' figure:
    the records of its cells over the finding's attributes estimated unique in the population
    the original was a ``fraction`` of (every model, the default's as the estimate:
    :func:`versapub.privacy.risk.population.estimate`), read from the table's file. A release
    whose empty values match any value (local suppression) has no exact cells: left as it is."""
    from versapub.inspect.risks import release_classes
    from versapub.privacy.risk.population import estimate
    from versapub.verify.identity.key_cells import matches_any
    from versapub.verify.reading.manifest import manifest_of

    if matches_any(manifest_of(directory)):
        return identity
    out = []
    read: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in identity:
        keys = tuple(str(a) for a in row.get("attributes") or [])
        if keys and keys not in read:
            read[keys] = {c.name: c for c in release_classes(directory, list(keys))}
        c = read.get(keys, {}).get(str(row.get("table")))
        if c is None or tuple(c.attributes) != keys:  # no attributes, or counts that are not records (DP)
            out.append(row)
            continue
        g = c.grouped()
        pu = estimate(g.codes, g.cards, g.counts, fraction, orders=g.orders or None, names=g.attributes).to_json()
        message = str(row.get("message", "")).rstrip(".") + ". " + population_text(pu)
        out.append({**row, "population_uniques": pu, "message": message})
    return out
