"""The Dask backend: publishing tables that do not fit one machine's memory on a Dask
cluster (``pip install 'versapub[dask]'``; ``versapub publish --backend dask``).

* :mod:`versapub.scale.cluster` — a ``distributed.LocalCluster`` sized to the machine, or
  an existing scheduler (``--scheduler tcp://HOST:8786``);
* :mod:`versapub.scale.read` — the input (a Parquet dataset or CSV files) read as text by
  ``dask.dataframe``: global dictionaries from distributed value counts, the missing-value
  policies, the records encoded once into a scratch Parquet dataset of codes;
* :mod:`versapub.scale.table` — :class:`~versapub.scale.table.DaskTable`, the
  :mod:`versapub.data.source` seam on the cluster: value counts, sub-tables, count tables
  (aggregated and hash-partitioned by a shuffle, sorted inside each part) and Anatomy's
  grouping without a global sort (ranks from seeded random keys inside each partition
  plus the partition's offset in each bucket).

Count tables are written as directories of Parquet parts (``docs/release-format.md``).
The scratch directory must be visible to the client and every worker.
"""

from __future__ import annotations

from versapub.errors import ConfigError

INSTALL = "pip install 'versapub[dask]'"


def require_dask() -> None:
    """Import Dask (and distributed), or say how to install them."""
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"The Dask backend needs Dask and distributed, which are not installed: {INSTALL} (or pip install "
            "'dask[dataframe]' distributed). Without them, publish with the in-memory backend (the default)."
        ) from None
