"""Start-up time of the command line: `--help`, a bad input and a non-release directory.

Target (issue 10): each under 1 s.  Each command is run 5 times; the median is printed next
to a bare `python -c pass` measured in the same run (the interpreter's own start-up).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time(args: list[str]) -> float:
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run(args, capture_output=True, check=False)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        bad = Path(d) / "t.csv"
        bad.write_text("a,b\nx,1\n")
        cli = [sys.executable, "-m", "versapub.cli.main"]
        rows = [
            ("python -c pass (reference)", [sys.executable, "-c", "pass"]),
            ("versapub --help", [*cli, "--help"]),
            (
                "publish with an unknown rule attribute",
                [*cli, "publish", "--input", str(bad), "--rule", "a -> c", "--out", str(Path(d) / "o")],
            ),
            ("check of a missing directory", [*cli, "check", str(Path(d) / "none")]),
        ]
        print(f"{'command':<42} {'median s':>9}  target")
        for name, args in rows:
            print(f"{name:<42} {_time(args):>9.3f}  {'-' if 'reference' in name else '< 1 s'}")


if __name__ == "__main__":
    main()
