"""The paper's Figures 1–10 drawn from an experiment's ``runs.csv`` (PNG, matplotlib).

Each figure shows, per method, the mean over runs at each x with a band from the minimum
to the maximum run (the spread), like the paper's line plots (which show means only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from versapub.experiments.versatile import series

STYLE = {
    "uad": ("UAD", "tab:blue", "o"),
    "gd": ("GD", "tab:green", "s"),
    "single-attribute": ("single-attribute", "tab:orange", "^"),
    "multi-sa": ("multi-SA", "tab:red", "D"),
}
METRIC_LABEL = {"kl": "KL-divergence", "rel_error": "relative error", "seconds": "run time (s)"}
SWEEP_LABEL = {
    "c": "number of privacy rules c",
    "qd": "query dimension qd",
    "p": "value percentage p",
    "lhs": "LHS attributes per rule (lhs)",
    "l": "l",
}


@dataclass(frozen=True)
class Figure:
    """One of the paper's figures: which sweep and metric(s) on which dataset family."""

    number: int
    family: str  # "adult" or "texas"
    sweep: str
    metrics: tuple[str, ...]
    title: str
    log: bool = False


FIGURES = (
    Figure(1, "adult", "c", ("kl",), "KL-divergence on Adult, vary c"),
    Figure(2, "adult", "c", ("rel_error",), "Relative error on Adult, vary c"),
    Figure(3, "adult", "c", ("seconds",), "Running time on Adult, vary c", log=True),
    Figure(4, "texas", "c", ("seconds",), "Running time, vary c", log=True),
    Figure(5, "texas", "c", ("kl",), "KL-divergence, vary c"),
    Figure(6, "texas", "c", ("rel_error",), "Relative error, vary c"),
    Figure(7, "texas", "qd", ("rel_error",), "Relative error, vary qd"),
    Figure(8, "texas", "p", ("rel_error",), "Relative error, vary p"),
    Figure(9, "texas", "lhs", ("kl", "rel_error"), "Vary lhs"),
    Figure(10, "texas", "l", ("rel_error",), "Relative error, vary l"),
)


def family(dataset: str) -> str:
    return "adult" if dataset == "adult" else "texas"


def draw(rows: Sequence[dict[str, str]], fig: Figure, dataset: str, path: Path) -> Path:
    """Draw ``fig`` from ``rows`` into ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = len(fig.metrics)
    f, axes = plt.subplots(1, panels, figsize=(4.6 * panels, 3.4), squeeze=False)
    for ax, metric in zip(axes[0], fig.metrics, strict=True):
        data = series(rows, fig.sweep, metric)
        for method in STYLE:
            pts = data.get(method)
            if not pts:
                continue
            label, color, marker = STYLE[method]
            xs = [p.x for p in pts]
            ax.plot(xs, [p.mean for p in pts], marker=marker, color=color, label=label, linewidth=1.5, markersize=4)
            if any(p.n > 1 for p in pts):
                ax.fill_between(xs, [p.lo for p in pts], [p.hi for p in pts], color=color, alpha=0.15, linewidth=0)
        ax.set_xlabel(SWEEP_LABEL[fig.sweep])
        ax.set_ylabel(METRIC_LABEL[metric])
        if fig.log:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    f.suptitle(f"Figure {fig.number} ({dataset}): {fig.title}", fontsize=10)
    f.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    f.savefig(path, dpi=90)
    plt.close(f)
    return path


def draw_all(rows: Sequence[dict[str, str]], dataset: str, directory: Path) -> list[tuple[Figure, Path]]:
    """Every figure of the dataset's family that has data; returns (figure, path) pairs."""
    out = []
    for fig in FIGURES:
        if fig.family != family(dataset) or not series(rows, fig.sweep, fig.metrics[0]):
            continue
        out.append((fig, draw(rows, fig, dataset, directory / f"fig{fig.number:02d}_{dataset}.png")))
    return out
