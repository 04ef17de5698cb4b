"""What a release shows of identities beside its guarantees: each table's cells of its key
variables (``--keys``, else every exactly published non-sensitive column; an empty value
matching any value after local suppression) against ``--k`` (k-anonymity of the published
cells, Samarati & Sweeney) and ``--max-risk`` (the prosecutor risk, El Emam), and the
row-order hygiene of the files."""
