"""Reading inputs as text, missing-value policies, bad inputs, hierarchies."""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from versapub.data import EncodedTable, Hierarchy
from versapub.data.table import Column
from versapub.errors import HierarchyError, InputError
from versapub.io.read import read_table


def _write(tmp_path: Path, text: str | bytes, name: str = "in.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def test_every_column_is_text(tmp_path: Path) -> None:
    p = _write(tmp_path, "zip,flag,n\n02139,NA,1.0\n00501,null,1\n02139,NA,001\n")
    t = read_table(p)
    assert t.to_pydict() == {
        "zip": ["02139", "00501", "02139"],
        "flag": ["NA", "null", "NA"],
        "n": ["1.0", "1", "001"],
    }
    # dictionaries are sorted by text, codes follow
    assert list(t.column("zip").values) == ["00501", "02139"]
    assert t.codes("zip").tolist() == [1, 0, 1]


def test_quoted_values_and_delimiters(tmp_path: Path) -> None:
    p = _write(tmp_path, 'a;b\n"x;y";" padded "\nz;w\n')
    t = read_table(p, delimiter=";")
    assert t.to_pydict() == {"a": ["x;y", "z"], "b": [" padded ", "w"]}


def test_gzip_and_tsv(tmp_path: Path) -> None:
    p = tmp_path / "in.tsv.gz"
    p.write_bytes(gzip.compress(b"a\tb\n1\t2\n3\t4\n"))
    assert read_table(p).to_pydict() == {"a": ["1", "3"], "b": ["2", "4"]}


def test_parquet_reads_as_text_and_nulls_are_missing(tmp_path: Path) -> None:
    p = tmp_path / "in.parquet"
    pq.write_table(pa.table({"i": [1, 2, None], "s": ["02139", "a", "b"]}), p)
    with pytest.raises(InputError, match=r"'i' \(1 cell\(s\), first at row\(s\) 3"):
        read_table(p)
    t = read_table(p, missing="drop")
    assert t.to_pydict() == {"i": ["1", "2"], "s": ["02139", "a"]}
    assert t.n_dropped == 1


def test_missing_policies(tmp_path: Path) -> None:
    p = _write(tmp_path, "a,b\nx,1\n,2\ny, \nz,4\n")
    with pytest.raises(InputError) as exc:
        read_table(p)
    msg = str(exc.value)
    assert "'a' (1 cell(s)" in msg and "row(s) 2" in msg and "'drop'" in msg
    kept = read_table(p, missing="drop")
    assert kept.to_pydict() == {"a": ["x", "z"], "b": ["1", "4"]}
    assert kept.n_dropped == 2
    assert list(kept.column("a").values) == ["x", "z"]  # the empty value is gone from the dictionary
    as_value = read_table(p, missing="value")
    assert as_value.to_pydict() == {"a": ["x", "", "y", "z"], "b": ["1", "2", " ", "4"]}
    with pytest.raises(InputError, match="Unknown missing-value policy"):
        read_table(p, missing="ignore")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("a,a\n1,2\n", "duplicate column name"),
        ("a,,c\n1,2,3\n", r"header column\(s\) \[2\] are blank"),
        ("", "is empty"),
        ("a,b\n", "no records"),
        ("a,b\n1,2\n3\n", "do not have the 2 fields"),
        (b"a,b\n1,caf\xe9\n", "not UTF-8 text .*line 2"),
        (b"a,\xff\n1,2\n", "not UTF-8"),
    ],
)
def test_bad_inputs_give_clear_errors(tmp_path: Path, content: str | bytes, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        read_table(_write(tmp_path, content))


def test_missing_file_and_unknown_column(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_table(tmp_path / "nope.csv")
    p = _write(tmp_path, "a,b\n1,2\n")
    with pytest.raises(InputError, match=r"'c' are not in the file; its columns are: 'a', 'b'"):
        read_table(p, columns=["a", "c"])
    assert read_table(p, columns=["b"]).names == ("b",)


def test_table_validators() -> None:
    import numpy as np

    with pytest.raises(InputError, match="outside its dictionary"):
        Column("a", np.array([0, 2], dtype=np.int32), np.array(["x", "y"], dtype=object))
    with pytest.raises(InputError, match="int32"):
        Column("a", np.array([0, 1]), np.array(["x", "y"], dtype=object))
    with pytest.raises(InputError, match="non-blank"):
        Column(" ", np.array([0], dtype=np.int32), np.array(["x"], dtype=object))
    c = Column("a", np.array([0], dtype=np.int32), np.array(["x"], dtype=object))
    with pytest.raises(InputError, match="duplicate column"):
        EncodedTable((c, c))
    with pytest.raises(InputError, match="non-text value"):
        EncodedTable.from_columns({"a": [1, 2]})  # type: ignore[list-item]
    with pytest.raises(InputError, match="no records"):
        EncodedTable.from_columns({"a": []})


# -- hierarchies --------------------------------------------------------------------
def test_hierarchy_generalizes_and_keeps_sorted_dictionary(tmp_path: Path) -> None:
    h_path = _write(tmp_path, "17;15-19;*\n23;20-24;*\n24;20-24;*\n", "age.csv")
    p = _write(tmp_path, "age\n23\n17\n24\n")
    t = read_table(p, hierarchies={"age": (Hierarchy.read(h_path, "age"), 1)})
    assert t.to_pydict() == {"age": ["20-24", "15-19", "20-24"]}
    assert list(t.column("age").values) == ["15-19", "20-24"]
    t2 = read_table(p, hierarchies={"age": (Hierarchy.read(h_path, "age"), 2)})
    assert t2.to_pydict() == {"age": ["*", "*", "*"]}


def test_hierarchy_errors(tmp_path: Path) -> None:
    p = _write(tmp_path, "age\n23\n99\n")
    h = Hierarchy.from_rows("age", [["23", "20-24", "*"], ["24", "20-24", "*"]], "h.csv")
    with pytest.raises(HierarchyError, match=r"does not cover column 'age'.*'99' \(1 rows\)"):
        read_table(p, hierarchies={"age": (h, 1)})
    with pytest.raises(HierarchyError, match="level 3 does not exist"):
        h.generalize(read_table(p).column("age"), 3)
    with pytest.raises(HierarchyError, match="not a tree: value '20-24' at level 1 has two parents"):
        Hierarchy.from_rows("age", [["23", "20-24", "A"], ["24", "20-24", "B"]])
    with pytest.raises(HierarchyError, match="different generalizations"):
        Hierarchy.from_rows("age", [["23", "x", "*"], ["23", "y", "*"]])
    with pytest.raises(HierarchyError, match="empty"):
        Hierarchy.from_rows("age", [["23", "", "*"]])
    with pytest.raises(HierarchyError, match="has no rows"):
        Hierarchy.from_rows("age", [])
    with pytest.raises(HierarchyError, match="not UTF-8"):
        Hierarchy.read(_write(tmp_path, b"a;\xff\n", "bad.csv"), "a")
    with pytest.raises(InputError, match="not a column"):
        read_table(p, hierarchies={"zip": (h, 1)})


def test_non_uniform_hierarchy_is_padded() -> None:
    h = Hierarchy.from_rows("e", [["a", "x", "y", "*"], ["b", "*"]])
    assert h.height == 4
    assert h.mapping(1) == {"a": "x", "b": "b"}
    assert h.mapping(3) == {"a": "*", "b": "*"}


def test_input_is_fingerprinted_while_it_is_read(tmp_path: Path) -> None:
    """The manifest's sha256 comes from the one pass that reads the file (plain, gzip and
    multi-character-delimited CSV); it equals a separate hash of the file's bytes."""
    import gzip

    from versapub.io.read import file_sha256, read_table

    text = "a, b\n" + "".join(f"x{i}, y{i % 3}\n" for i in range(5000))
    plain = tmp_path / "t.csv"
    plain.write_text(text.replace(", ", ","))
    packed = tmp_path / "t.csv.gz"
    packed.write_bytes(gzip.compress(text.replace(", ", ",").encode()))
    multi = tmp_path / "m.csv"
    multi.write_text(text)
    for path, delim in ((plain, ","), (packed, ","), (multi, ", ")):
        table = read_table(path, delimiter=delim)
        assert table.n_rows == 5000
        assert table.sha256 == file_sha256(path)


@pytest.mark.parametrize(("name", "delimiter"), [("d.csv", ","), ("d.csv.gz", ","), ("d.txt", ", ")])
def test_the_parser_reads_native_streams_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, delimiter: str
) -> None:
    """Issue 26: a Python file object or callback inside Arrow's CSV reader is released on
    Arrow's I/O thread after the last read-ahead, which needs the GIL and aborted the
    interpreter at exit under load ("terminate called without an active exception"). The
    reader gets native streams and no Python callback; our hashing thread is joined."""
    import threading

    import pyarrow.csv as pacsv

    from versapub.io.read import file_sha256

    seen = []
    real = pacsv.open_csv

    def spy(source, read_options=None, parse_options=None, convert_options=None):  # type: ignore[no-untyped-def]
        seen.append((source, parse_options))
        return real(source, read_options=read_options, parse_options=parse_options, convert_options=convert_options)

    monkeypatch.setattr(pacsv, "open_csv", spy)
    text = "a" + delimiter + "b\n" + "".join(f"x{i}{delimiter}y{i % 3}\n" for i in range(500))
    p = tmp_path / name
    if name.endswith(".gz"):
        p.write_bytes(gzip.compress(text.encode()))
    else:
        p.write_text(text)
    t = read_table(p, delimiter=delimiter)
    assert t.n_rows == 500 and t.sha256 == file_sha256(p)
    ((source, parse),) = seen
    assert isinstance(source, pa.NativeFile) and parse.invalid_row_handler is None
    assert not [th for th in threading.enumerate() if th.name == "versapub-sha256"]


@pytest.mark.slow
def test_reading_commands_never_abort_at_exit_under_load(tmp_path: Path) -> None:
    """The abort was 5 in 100 runs of ``hierarchy check`` beside two busy cores; 0 in 200 since."""
    import subprocess
    import sys

    from versapub.datasets import data_path

    data, hier = data_path("adult", "adult.csv.gz"), data_path("adult", "hierarchies", "adult_hierarchy_age.csv")
    cmd = [
        sys.executable,
        "-m",
        "versapub.cli.main",
        "hierarchy",
        "check",
        str(data),
        "--delimiter",
        ";",
        "--hierarchy",
        f"age={hier}",
    ]
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        codes = [subprocess.run(cmd, capture_output=True).returncode for _ in range(100)]
    finally:
        for p in load:
            p.kill()
    assert codes == [0] * 100
