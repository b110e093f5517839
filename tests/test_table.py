"""shrec_score.table and the numpy aggregation: the same bytes and numbers as pandas.

The CSV files are written without pandas (issue 20, start-up); these tests
hold them to what ``DataFrame.to_csv(index=False, na_rep="",
lineterminator="\\n")`` writes for the same columns, and the numpy
aggregation (per-run, per-class and macro means, the leaderboard's order,
the per-query ranking) to a plain pandas groupby computation written here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shrec_score
from shrec_score.aggregate import (
    group_sums,
    leaderboard_table,
    macro_table,
    per_class_table,
    per_run_table,
    ranking_table,
)
from shrec_score.measures import column_higher_is_better
from shrec_score.table import Table

PSB = "sample_runs/psb-like"


def pandas_csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, na_rep="", lineterminator="\n")


# -- to_csv against pandas ------------------------------------------------------------

SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e-300, 5e-324, 1e22, 1e16, 1e15, 123456789012345680.0, 0.1, 1 / 3, 2.5e-5, -1e-5]
FLOATS = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True))
HOSTILE = st.sampled_from(["", " ", "a,b", 'say "hi"', "line\nbreak", "cr\rhere", "\r\n", ",", '"', "é€😀", "tab\there", "=1+1", "-", "nan", "None", "\x00x"])
TEXT = st.one_of(HOSTILE, st.text(max_size=8), st.none())


@st.composite
def tables(draw):
    """Columns as pandas gets them from the pipeline: floats, ints, bools, text (None: missing)."""
    n = draw(st.integers(0, 6))
    kinds = draw(st.lists(st.sampled_from(["float", "int", "bool", "text"]), min_size=1, max_size=5))
    cols = {}
    for i, kind in enumerate(kinds):
        name = draw(st.one_of(st.sampled_from(["run", "AP", "P@5", "a,b", 'q"', "x y"]), st.text(min_size=1, max_size=4))) + f"_{i}"
        if kind == "float":
            cols[name] = draw(st.lists(FLOATS, min_size=n, max_size=n))
        elif kind == "int":
            cols[name] = draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n))
        elif kind == "bool":
            cols[name] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        else:
            cols[name] = draw(st.lists(TEXT, min_size=n, max_size=n))
    return cols, kinds, n


def _frame(cols: dict, kinds: list[str], n: int) -> pd.DataFrame:
    """The DataFrame pandas builds from the same Python lists (independent of Table)."""
    dtypes = {"float": np.float64, "int": np.int64, "bool": bool, "text": object}
    return pd.DataFrame({k: pd.Series(v, dtype=dtypes[kind]) for (k, v), kind in zip(cols.items(), kinds)}, columns=list(cols))


def _table(cols: dict, kinds: list[str], n: int) -> Table:
    dtypes = {"float": np.float64, "int": np.int64, "bool": bool}
    return Table({k: (np.asarray(v, dtype=dtypes[kind]) if kind in dtypes else v) for (k, v), kind in zip(cols.items(), kinds)}, n)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_to_csv_writes_what_pandas_writes(drawn):
    cols, kinds, n = drawn
    assert _table(cols, kinds, n).to_csv() == pandas_csv(_frame(cols, kinds, n))


@settings(max_examples=80, deadline=None)
@given(tables())
def test_to_pandas_and_back_keep_the_csv(drawn):
    table = _table(*drawn)
    frame = table.to_pandas()
    assert list(frame.columns) == table.columns and len(frame) == len(table)
    assert pandas_csv(frame) == table.to_csv()
    assert Table.from_pandas(frame).to_csv() == table.to_csv()


def test_csv_cells_by_hand():
    """The rules of the module docstring, written out."""
    t = Table({"run": ["a,b", 'q"x', "l\nm", None], "n": np.array([1, -2, 3, 0]), "ok": np.array([True, False, True, False]),
               "v": np.array([0.1, np.nan, 1e22, -0.0])})
    assert t.to_csv() == 'run,n,ok,v\n"a,b",1,True,0.1\n"q""x",-2,False,\n"l\nm",3,True,1e+22\n,0,False,-0.0\n'
    assert Table({"v": np.array([np.nan])}).to_csv() == 'v\n""\n'  # one empty cell: quoted, as the csv module (and pandas) write it
    assert Table({"a": np.zeros(0), "b": []}).to_csv() == "a,b\n"


def test_table_columns_and_rows():
    t = Table({"run": "r", "q": ["x", "y", "z"], "v": np.array([3.0, 1.0, 2.0])})
    assert t["run"].tolist() == ["r", "r", "r"] and len(t) == 3
    assert t.take(np.array([1, 2])).records() == [("r", "y", 1.0), ("r", "z", 2.0)]
    assert t.assign("rank", np.array([1, 2, 3]), at=0).columns == ["rank", "run", "q", "v"]
    assert t.rename({"v": "AP"}).columns == ["run", "q", "AP"]
    assert Table.concat([t, t]).records()[3] == ("r", "x", 3.0)
    with pytest.raises(ValueError):
        Table({"a": [1, 2], "b": [1]})


@pytest.mark.parametrize("items", [[0.5, None], [1, None, 3], [None, None], ["a", None], [True, None], [1, 2], [True, False], [2.5]])
def test_list_columns_take_the_dtype_pandas_gives_them(items):
    """Numbers with None: float with NaN; bools with None and text: objects (as pandas infers them)."""
    got = Table({"x": items}).to_pandas()["x"]
    want = pd.DataFrame({"x": items})["x"]
    assert got.dtype == want.dtype
    pd.testing.assert_series_equal(got, want)


# -- the aggregation against a plain pandas computation ---------------------------------


def ref_summarise(groups, measures: list[str]) -> pd.DataFrame:
    """Each group's means; the sum for trec_eval's count num_rel_ret, the geometric mean for gm_map."""
    out = groups[measures].mean()
    for m in measures:
        if m == "num_rel_ret":
            out[m] = groups[m].sum(min_count=1)
        elif m == "gm_map":
            out[m] = np.exp(out[m])
    return out


def ref_per_run(df: pd.DataFrame, measures: list[str], runs: list[str]) -> pd.DataFrame:
    """Per-run means as pandas computes them (sums for trec_eval's counts,
    the geometric mean for gm_map), queries = rows with a defined value."""
    out = ref_summarise(df.groupby("run", sort=False), measures)
    queries = df[measures].notna().any(axis=1).groupby(df["run"], sort=False).sum()
    out = out.reindex(runs)
    out.insert(0, "queries", queries.reindex(runs).fillna(0).astype(int))
    return out.reset_index().rename(columns={"index": "run"})[["run", "queries", *measures]]


def ref_per_class(df: pd.DataFrame, measures: list[str], runs: list[str]) -> pd.DataFrame:
    keys = [df["run"], df["class"]]
    out = ref_summarise(df.groupby(keys, sort=False), measures).reset_index()
    out.insert(2, "queries", df[measures].notna().any(axis=1).groupby(keys, sort=False).sum().to_numpy().astype(int))
    class_pos = {c: i for i, c in enumerate(dict.fromkeys(df["class"]))}
    out["_key"] = [runs.index(r) * 1000 + class_pos[c] for r, c in zip(out["run"], out["class"])]
    return out.sort_values("_key", kind="mergesort").drop(columns="_key").reset_index(drop=True)[["run", "class", "queries", *measures]]


MEASURES = ["AP", "num_rel_ret", "gm_map", "FP_relevant", "NN"]

#: The means are summed in the tool's own order (pairwise ``np.sum`` over a
#: group's queries in input order, ``aggregate.group_sums``), pandas' groupby in
#: its own: the same numbers to 1e-12, not always the same last bit.
CLOSE = {"check_exact": False, "rtol": 1e-12, "atol": 0.0}


@st.composite
def per_query_frames(draw):
    """A per_query frame built as the engine builds it: one frame per run
    (same queries, same classes), concatenated."""
    n_q = draw(st.integers(1, 25))
    runs = draw(st.lists(st.sampled_from(["b", "a", "c,d", "r1", "Z"]), min_size=1, max_size=4, unique=True))
    contiguous = draw(st.booleans())
    n_c = draw(st.integers(1, 4))
    classes = [f"c{(i * n_c) // n_q if contiguous else i % n_c}" for i in range(n_q)]
    with_nan = draw(st.booleans())
    value = st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 1 / 3, 0.1, 1e16, 1e-300] + ([math.nan] * 3 if with_nan else [])))
    frames = []
    for r in runs:
        data: dict[str, object] = {"run": r, "query": [f"q{i}" for i in range(n_q)], "class": classes}
        for m in MEASURES:
            data[m] = np.asarray(draw(st.lists(value, min_size=n_q, max_size=n_q)), dtype=np.float64)
        frames.append(pd.DataFrame(data))
    return pd.concat(frames, ignore_index=True), runs


@pytest.mark.filterwarnings("ignore:overflow encountered in exp")  # gm_map of 1e16: exp overflows to inf, in pandas too
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(per_query_frames())
def test_per_run_and_per_class_means_equal_pandas_groupby(drawn):
    df, runs = drawn
    table = Table.from_pandas(df)
    pd.testing.assert_frame_equal(per_run_table(table, MEASURES, runs).to_pandas(), ref_per_run(df, MEASURES, runs), **CLOSE)
    per_class = per_class_table(table, MEASURES, runs).to_pandas()
    pd.testing.assert_frame_equal(per_class, ref_per_class(df, MEASURES, runs), **CLOSE)
    macro = macro_table(Table.from_pandas(per_class), MEASURES, runs)
    for i, run in enumerate(runs):  # the mean of the classes' values (classes with a scored query); a sum sums, gm_map's geometric mean
        sub = per_class[(per_class["run"] == run) & (per_class["queries"] > 0)]
        assert macro["queries"][i] == sub["queries"].sum()
        for m in MEASURES:
            col = sub[m].dropna()
            if m == "num_rel_ret":
                want = col.sum() if len(col) else math.nan
            elif m == "gm_map":
                with np.errstate(divide="ignore"):
                    want = float(np.exp(np.log(col).mean())) if len(col) else math.nan
            else:
                want = col.mean()
            assert macro[m][i] == pytest.approx(want, rel=1e-12) or (math.isnan(want) and math.isnan(macro[m][i])), m


@pytest.mark.filterwarnings("ignore:overflow encountered in exp")
@settings(max_examples=80, deadline=None)
@given(per_query_frames(), st.sampled_from(MEASURES))
def test_leaderboard_and_ranking_orders_equal_pandas_sorts(drawn, sort):
    df, runs = drawn
    table = Table.from_pandas(df)
    per_run = ref_per_run(df, MEASURES, runs)
    if len(per_run) > 1:
        per_run.loc[1, sort] = per_run.loc[0, sort]  # a tie, broken by run name
    ascending = column_higher_is_better(sort) is False
    want = per_run.sort_values("run", kind="mergesort").sort_values(sort, ascending=ascending, kind="mergesort", na_position="last")
    got = leaderboard_table(Table.from_pandas(per_run), sort)
    assert got["run"].tolist() == want["run"].tolist()
    assert got["rank"].tolist() == list(range(1, len(runs) + 1)) and got.columns == ["rank", *per_run.columns]
    frame = df[["query", "run", sort]].rename(columns={sort: "value"}).assign(_q=lambda f: f["query"].map({q: i for i, q in enumerate(dict.fromkeys(f["query"]))}))
    frame = frame.sort_values("run", kind="mergesort").sort_values("value", ascending=ascending, kind="mergesort", na_position="last").sort_values("_q", kind="mergesort")
    ranking = ranking_table(table, sort)
    assert ranking["query"].tolist() == frame["query"].tolist() and ranking["run"].tolist() == frame["run"].tolist()
    assert ranking["rank"].tolist() == (frame.groupby("_q").cumcount() + 1).tolist()


def test_group_sums_by_hand():
    """Each group's defined values in input order, summed by np.sum: left to
    right up to eight values, pairwise beyond (numpy's blocks of eight)."""
    sums, counts = group_sums(np.array([[0.6], [7.0], [0.3], [0.4], [np.nan]]), np.array([0, 1, 0, 0, 1]), 2)
    assert sums[:, 0].tolist() == [(0.6 + 0.3) + 0.4, 7.0] and counts[:, 0].tolist() == [3, 1]
    assert (0.6 + 0.3) + 0.4 == 1.2999999999999998  # not 1.3: added in order, not compensated
    # rows of no group (-1) are left out; a group without rows sums to 0 with count 0
    sums, counts = group_sums(np.array([[1.0, np.nan], [2.0, 5.0], [4.0, np.nan]]), np.array([-1, 0, 0]), 2)
    assert sums.tolist() == [[6.0, 5.0], [0.0, 0.0]] and counts.tolist() == [[2, 1], [0, 0]]
    # 17 values: numpy adds 8 accumulators over the first 16, then the 17th; the same bits on every call
    vals = np.array([0.1 * (i + 1) for i in range(17)])[:, None]
    acc = [vals[k, 0] + vals[k + 8, 0] for k in range(8)]  # accumulator k holds rows k and k + 8
    want = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + vals[16, 0]
    assert group_sums(vals, np.zeros(17, dtype=np.int64), 1)[0][0, 0] == want


# -- the library API: DataFrames as before -----------------------------------------------


def test_report_attributes_are_dataframes_and_the_csv_is_theirs():
    report = shrec_score.score([f"{PSB}/runs"], f"{PSB}/classes.cla")
    assert isinstance(report.tables["per_query"], Table)  # held as tables: nothing converted
    csv_before = report.csv_files()
    pq = report.per_query
    assert isinstance(pq, pd.DataFrame)
    assert pq.dtypes.astype(str).tolist() == ["str", "str", "str", *["float64"] * 6]
    assert report.leaderboard.dtypes.astype(str).tolist() == ["int64", "str", "int64", *["float64"] * 6]
    assert report.per_class.dtypes.astype(str).tolist()[:3] == ["str", "str", "int64"]
    assert report.ranking.dtypes.astype(str).tolist() == ["str", "int64", "str", "float64"]
    for name, frame in [("per_query.csv", pq), ("per_run.csv", report.per_run), ("pr_curve.csv", report.pr_curve), ("per_class.csv", report.per_class), ("per_query_ranking.csv", report.ranking)]:
        assert csv_before[name] == pandas_csv(frame), name
    # each access is a copy: changing it changes nothing in the report
    board = report.leaderboard
    board.loc[0, "NN"] = 0.5
    assert report.leaderboard.loc[0, "NN"] != 0.5 and report.csv_files() == csv_before


def test_two_scorings_share_no_table():
    a = shrec_score.score([f"{PSB}/runs"], f"{PSB}/classes.cla", measures=["NN", "AP"])
    b = shrec_score.score([f"{PSB}/runs"], f"{PSB}/classes.cla", measures=["NN", "AP"])
    a.tables["per_query"]["AP"][:] = 0.0
    assert b.per_query["AP"].max() > 0 and b.to_csv(per_query=True) != a.to_csv(per_query=True)


@pytest.mark.parametrize("config", ["psb", "shrec2006", "shrec2017-shapenet"])
def test_renderings_of_tables_equal_renderings_of_the_same_dataframes(config):
    """A report built from tables and the same report built from DataFrames
    (as a caller may build one) render the same text in every format and write
    the same files."""
    from shrec_score.config import load_config
    from shrec_score.render import FORMATS
    from shrec_score.report import TABLES, Report

    cfg = load_config(f"configs/{config}.yaml")
    opts = {k: cfg[k] for k in ("queries", "grades", "measures", "sort", "rank_by", "split", "run_format", "matrix_order") if k in cfg}
    light_report = shrec_score.score(cfg["runs"], cfg["relevance"], **opts)
    plain = {k: getattr(light_report, k) for k in ("measures", "shown", "sort", "signature", "warnings", "rank_by", "csv_columns")}
    frames = Report(**{name: getattr(light_report, name) for name in TABLES}, **plain, summaries=light_report.summaries)
    for name, render in FORMATS.items():
        for per_query in (False, True):
            assert render(light_report, per_query=per_query) == render(frames, per_query=per_query), (name, per_query)
    assert light_report.csv_files() == frames.csv_files()
    import io

    from rich.console import Console

    for per_query in (False, True):  # the rich tables: the leaderboard, the per-query ranking or the wide table
        texts = []
        for report in (light_report, frames):
            out = io.StringIO()
            report.to_rich(Console(file=out, width=200, color_system=None), per_query=per_query)
            texts.append(out.getvalue())
        assert texts[0] == texts[1] and len(texts[0].splitlines()) > 6


def test_wide_cells_equal_the_pandas_pivot():
    """The terminal's per-query table (``--format table --per-query``), built
    without pandas, holds the cells of ``Report.per_query_wide()`` (a pivot)."""
    from shrec_score.render import _fmt, _wide

    report = shrec_score.score([f"{PSB}/runs"], f"{PSB}/classes.cla", sort="AP")
    head, cells, keys = _wide(report)
    wide = report.per_query_wide()
    assert head == list(wide.columns) == ["query", "class", *report.leaderboard["run"]] and keys == 2
    assert cells == [[str(v) for v in rec[:2]] + [_fmt(v) for v in rec[2:]] for rec in wide.itertuples(index=False)]
    # the wide frame against pandas' own pivot, on a per-query table with a
    # run's value missing for one query and the queries in no sorted order
    pq = report.per_query
    pq = pq.drop(index=pq.index[(pq["run"] == pq["run"].iloc[0]) & (pq["query"] == pq["query"].iloc[3])]).iloc[::-1].reset_index(drop=True)
    report.tables["per_query"] = Table.from_pandas(pq)
    runs = [str(r) for r in report.leaderboard["run"]]
    keys = pq.drop_duplicates("query")[["query", "class"]].reset_index(drop=True)
    pivot = pq.pivot(index="query", columns="run", values="AP").reindex(keys["query"])[runs].reset_index(drop=True)
    want = pd.concat([keys, pivot], axis=1)
    got = report.per_query_wide("AP")
    pd.testing.assert_frame_equal(got, want, check_dtype=False, check_column_type=False)
    assert got[runs].isna().sum().sum() == 1
