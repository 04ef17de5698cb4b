"""A notebook in a script (each ``# %%`` a cell, as Jupyter and VS Code read it): the Python
API a notebook user meets, one job from reading the file to reading the release back.
``tests/test_api_groups.py`` runs it from a copy of ``examples/``:

    python examples/notebook.py
"""

# %% Read the file: every column as text, missing cells refused (one paragraph naming them)
from pathlib import Path

import versapub

table = versapub.read_table("examples/data.csv", missing="error")
print(table.n_rows, "records;", ", ".join(table.names))

# %% Decide every column, then publish in memory: the keyword groups mirror the job's sections
#    ([columns], [privacy], [publish]) — the same job as
#    versapub publish --rule "age, sex -> disease" --l 2 --identifying patient_id --others insensitive
#        --keys age,sex,zip --k 5 --suppression-mode cells --seed 1
roles = versapub.ColumnRoles(identifying=("patient_id",), others="insensitive")
release = versapub.publish(
    table,
    ["age, sex -> disease", "zip -> education"],
    l=2,
    seed=1,
    columns=roles,
    privacy=versapub.Privacy(k=5, keys=("age", "sex", "zip"), suppression_mode="cells"),
    method=versapub.Method(decomposition="uad", anonymizer="anatomy"),
)
print(release.gnf.explain())

# %% Write it: verified from its files first, nothing written unless every check passes
out = Path("notebook-release")
check = versapub.write_release(versapub.workflow.with_utility(release), out, overwrite=out.exists())
print("verdict:", check.verdict)

# %% Use it: the maximum-entropy model behind the release answers counts, with the true answer beside
model = versapub.load_release(out)
estimate = model.count({"sex": ["Female"], "disease": ["flu"]})
q = versapub.inspect.query(out, "sex = 'Female' AND disease = 'flu'", original="examples/data.csv")
print(f"women with flu: estimate {estimate:.1f} (query: {q.estimate:.1f}), true {q.actual}")

# %% Measure it: identity risk of what is published, on the key variables
risk = versapub.inspect.risk(out, qi=["age", "sex", "zip"])
print("highest prosecutor risk:", risk.to_json()["prosecutor"]["highest"])
