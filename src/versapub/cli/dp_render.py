"""The command line's side of a differentially private release: the progress bar around
:func:`versapub.publishing.dp_release.run_dp` and the summary (render only)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from versapub.cli.progress import _progress


def run_dp_with_bar(cfg: Any, out_dir: Path, overwrite: bool, quiet: bool) -> tuple[Any, Any, float]:
    """Run the job under a progress bar: the mechanism's output, the check, seconds."""
    from versapub.publishing.dp_release import run_dp

    start = time.perf_counter()
    with _progress(quiet) as bar:
        task = bar.add_task(f"reading {cfg.input.name}", total=None)

        def hook(desc: str, done: int, total: int) -> None:
            bar.update(task, description=desc, completed=done, total=total or None)

        synth, check = run_dp(cfg, out_dir, overwrite=overwrite, progress=hook)
    return synth, check, time.perf_counter() - start


def dp_summary(synth: Any, check: Any, out_dir: Path, seconds: float) -> str:
    """What was published, the budget spent and the verdict, in a few lines."""
    ledger = synth.ledger
    noisy = [m for m in synth.measured]
    lines = [
        f"Published a differentially private release to {out_dir} in {seconds:.1f} s: "
        f"(epsilon {ledger.epsilon:g}, delta {ledger.delta:g})-DP, zCDP rho {ledger.rho:.6g} "
        f"of which {ledger.spent_rho:.6g} spent.",
        f"  {len(noisy)} noisy marginal(s) (Gaussian noise, OpenDP's discrete sampler): "
        + "; ".join(f"{'+'.join(m.attributes)} (sigma {m.entry.sigma:.3g})" for m in noisy[:12])
        + (f"; ... {len(noisy) - 12} more" if len(noisy) > 12 else ""),
        f"  the model fitted to them: {len(synth.model.cliques)} clique(s), {synth.model.iterations} "
        f"mirror-descent step(s); estimated records: {synth.model.total:,.0f}",
    ]
    if synth.selected:
        lines.append("  pairs selected by MST: " + "; ".join(f"{a}+{b}" for a, b in synth.selected))
    lines.append(
        f"  verification: {check.verdict} — the ledger is consistent; differential privacy rests on the mechanism"
    )
    lines.append(f'  next: versapub query {out_dir} "..." | versapub sample {out_dir} -n 1000 -o synth.csv')
    return "\n".join(lines)
