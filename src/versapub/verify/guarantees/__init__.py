"""Every guarantee checked from the files by the verifier's own reading: Guardian Normal Form
of the schema (Jin et al., KDD 2010, Definitions 3-5), each group's guarantee (frequency,
distinct, entropy and recursive l-diversity, t-closeness, beta-likeness, delta-disclosure,
k-anonymity and the others of the release format), the thresholds each guarantee sets for an
attack and a posterior, and delta-presence and k-map against a population (Nergiz et al.)."""
