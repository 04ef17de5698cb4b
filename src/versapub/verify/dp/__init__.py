"""A differentially private release checked from its files (issue 52): every noisy table
lists its declared domain, the budget ledger recomputed under zero-concentrated DP (Bun &
Steinke 2016), and with the original the noise each table carries against its stated scale."""
