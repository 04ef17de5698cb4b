"""The verifier's own reading of a release's files: ``manifest.json`` parsed once, each table
kind read as ``docs/release-format.md`` specifies it (plain count tables, Anatomy QIT/ST,
generalized tables with their labels and order, sa-groups, noisy and fitted tables), the
published tables for the attacks and DuckDB primitives over the files. Nothing here judges a
release; the other rooms read it through these modules."""
