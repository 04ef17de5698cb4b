"""One parse of a release's files shared by every check (data.parsed): the shared relation
reads exactly as DuckDB's own reading of the file, pyarrow readers get what their own parse
gives, files that cannot be shared are left to their readers, and a check's verdict does
not depend on sharing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from versapub.data.parsed import ParsedFiles, arrow_of, sharing
from versapub.data.sql import connect, duckdb_source

TRICKY = 'a,b,count\n"",x,1\n,"y, with comma",2\n"q""uote",,3\n"é",z,4\n'


def _rows(path: Path, files: ParsedFiles | None) -> list[tuple[object, ...]]:
    with sharing(files), connect() as con:
        return con.execute(f"SELECT * FROM {duckdb_source(path)}").fetchall()


def test_shared_relation_reads_as_duckdb_reads_the_file(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text(TRICKY, encoding="utf-8")
    files = ParsedFiles(tmp_path)
    with sharing(files):
        assert duckdb_source(p).startswith("__versapub_file_")
    own = _rows(p, None)
    assert own == [("", "x", "1"), (None, "y, with comma", "2"), ('q"uote', None, "3"), ("é", "z", "4")]
    assert _rows(p, files) == own


cell = st.one_of(st.just(""), st.text(alphabet="ab,\"' é0", min_size=1, max_size=4))


@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(cell, cell), min_size=0, max_size=8), st.booleans())
def test_any_written_table_reads_the_same_shared_or_not(
    tmp_path: Path, rows: list[tuple[str, str]], nulls: bool
) -> None:
    """Files as pyarrow writes them (every string quoted as needed; ``nulls``: empty cells
    written unquoted as NULLs) read the same through the shared parse as through DuckDB."""
    d = tmp_path / ("n" if nulls else "s")
    d.mkdir(exist_ok=True)
    p = d / "t.csv"
    col = [None if nulls and not r[0] else r[0] for r in rows]
    t = pa.table({"a": pa.array(col, pa.string()), "b": pa.array([r[1] for r in rows], pa.string())})
    pacsv.write_csv(t, p, pacsv.WriteOptions(quoting_style="needed"))
    assert _rows(p, ParsedFiles(d)) == _rows(p, None)


def test_pyarrow_readers_get_their_own_semantics(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text(TRICKY, encoding="utf-8")
    with sharing(ParsedFiles(tmp_path)):
        t = arrow_of(p, ("count",))
    assert t is not None
    assert t.column("a").to_pylist() == ["", "", 'q"uote', "é"]  # empty fields are empty strings
    assert t.column("b").to_pylist() == ["x", "y, with comma", "", "z"]
    assert t.column("count").type == pa.int64() and t.column("count").to_pylist() == [1, 2, 3, 4]
    assert arrow_of(p) is None  # not sharing: the reader parses


@pytest.mark.parametrize(
    ("text", "ints"),
    [
        ("a,count\nx,1\ny,\n", ("count",)),  # an empty integer
        ("a,count\nx,1\ny,two\n", ("count",)),  # not an integer
        ("a,a\nx,1\n", ()),  # a repeated name: DuckDB renames, the reader must see it
        ("a,b\nx,1\ny\n", ()),  # a short row: the reader reports it
    ],
)
def test_what_cannot_be_shared_is_left_to_its_reader(tmp_path: Path, text: str, ints: tuple[str, ...]) -> None:
    p = tmp_path / "t.csv"
    p.write_text(text, encoding="utf-8")
    with sharing(ParsedFiles(tmp_path)):
        assert arrow_of(p, ints) is None
        if not ints:
            assert duckdb_source(p).startswith("read_csv(")


def test_files_outside_the_directory_are_not_shared(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "t.csv").write_text("a\n1\n", encoding="utf-8")
    other = tmp_path / "o.csv"
    other.write_text("a\n1\n", encoding="utf-8")
    with sharing(ParsedFiles(tmp_path / "r")):
        assert duckdb_source(other).startswith("read_csv(")
        assert duckdb_source(tmp_path / "r" / "t.csv").startswith("__versapub_file_")


def test_a_check_says_the_same_shared_or_not(tmp_path: Path) -> None:
    """The verification of a release (and of the same release with a corrupted count) reads
    the same through the shared parse as from the files."""
    import versapub
    from versapub.verify.check import manifest_of, required
    from versapub.verify.files.release_check import verify_release

    table = versapub.datasets.running_example()
    rel = versapub.publish(table, versapub.datasets.RUNNING_EXAMPLE_RULES, l=2)
    d = tmp_path / "r"
    versapub.write_release(rel, d)

    def report() -> dict[str, object]:
        rep = verify_release(d, None, None, None, None, required(None, None), manifest_of(d)).to_json()
        rep.pop("seconds", None)
        return rep

    with sharing(ParsedFiles(d)):
        shared = report()
    assert shared == report() and shared["ok"]
    st_file = next(d.glob("*_st.csv"))
    st_file.write_text(st_file.read_text(encoding="utf-8").replace(",1\n", ",0\n", 1), encoding="utf-8")
    with sharing(ParsedFiles(d)):
        broken = report()
    assert broken == report() and not broken["ok"]
