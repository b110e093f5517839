"""The pipeline's tables without pandas (docs/architecture.md, "Tables without pandas"): ordered 1-D numpy columns
of one length, text as object arrays; :meth:`Table.to_csv` writes what pandas' ``to_csv`` writes."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence, Sized
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def column(values: Any, length: int | None = None) -> np.ndarray:
    """``values`` as a 1-D column: a scalar repeated ``length`` times; numbers with None make floats with NaN (as
    pandas makes them), text an object array."""
    if isinstance(values, np.ndarray):
        arr = values
    elif isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        if length is None:
            raise ValueError("a scalar column needs a length")
        return object_column([values] * length)
    else:
        items = list(values)
        numbers = [v for v in items if v is not None]
        numeric = numbers and all(isinstance(v, (bool, int, float, np.number, np.bool_)) for v in numbers)
        if numeric and len(numbers) == len(items):
            arr = np.asarray(items)
        elif numeric and not any(isinstance(v, (bool, np.bool_)) for v in numbers):  # pandas keeps True/None as objects
            arr = np.array([np.nan if v is None else v for v in items], dtype=np.float64)
        else:
            arr = object_column(items)
    if arr.dtype.kind in "US":
        arr = object_column(arr.tolist())
    if arr.ndim != 1:
        raise ValueError(f"expected a one-dimensional column, got shape {arr.shape}")
    return arr


def object_column(items: Sequence[Any]) -> np.ndarray:
    """Items as a 1-D object array, one cell each (not ``np.asarray``'s 2-D tuples or fixed-width strings)."""
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items)
    return arr


class Table:
    """Ordered columns of one length, never changed in place (a method returns a new table sharing the others)."""

    __slots__ = ("_cols", "_n")

    def __init__(self, columns: Mapping[str, Any], length: int | None = None) -> None:
        sized = (len(v) for v in columns.values() if isinstance(v, Sized) and not isinstance(v, (str, bytes)))
        n = next(sized, None) if length is None else length
        self._cols = {str(k): column(v, n) for k, v in columns.items()}
        lengths = {len(c) for c in self._cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"expected columns of one length, got lengths {sorted(lengths)}")
        self._n = lengths.pop() if lengths else (n or 0)

    @property
    def columns(self) -> list[str]:
        return list(self._cols)

    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: object) -> bool:
        return name in self._cols

    def __getitem__(self, name: str) -> np.ndarray:
        return self._cols[name]

    def __repr__(self) -> str:
        return f"Table({self._n} rows: {', '.join(self._cols)})"

    def rename(self, names: Mapping[str, str]) -> Table:
        return Table({names.get(k, k): v for k, v in self._cols.items()}, self._n)

    def take(self, rows: np.ndarray) -> Table:
        """The rows at the positions ``rows`` (an index array or a boolean mask)."""
        rows = np.asarray(rows)
        n = int(rows.sum()) if rows.dtype == bool else len(rows)
        return Table({k: v[rows] for k, v in self._cols.items()}, n)

    def assign(self, name: str, values: Any, *, at: int | None = None) -> Table:
        """A table with the column ``name`` set to ``values`` (placed at ``at``, or last)."""
        items = [(k, v) for k, v in self._cols.items() if k != name]
        items.insert(len(items) if at is None else at, (name, column(values, self._n)))
        return Table(dict(items), self._n)

    @classmethod
    def concat(cls, tables: Sequence[Table], columns: Sequence[str] = ()) -> Table:
        """The rows of ``tables`` one after another; an empty table of ``columns`` when there is none."""
        if not tables:
            return cls({c: np.empty(0, dtype=object) for c in columns}, 0)
        names = tables[0].columns
        return cls({c: np.concatenate([t[c] for t in tables]) for c in names}, sum(len(t) for t in tables))

    def records(self) -> list[tuple[Any, ...]]:
        """The rows as tuples of Python values (float, int, bool, str, None)."""
        return list(zip(*(v.tolist() for v in self._cols.values())))

    def to_pandas(self) -> pd.DataFrame:
        """The DataFrame with these columns (a new one at every call)."""
        import pandas as pd

        return pd.DataFrame(dict(self._cols), columns=self.columns)

    @classmethod
    def from_pandas(cls, frame: pd.DataFrame) -> Table:
        """A table of ``frame``'s columns (its index is left out)."""
        cols = {}
        for name, values in frame.items():
            if isinstance(values.dtype, np.dtype) and values.dtype.kind in "fiub":
                cols[str(name)] = values.to_numpy()
            else:
                cols[str(name)] = object_column([None if missing(v) else v for v in values.to_numpy(dtype=object)])
        return cls(cols, len(frame))

    def to_csv(self) -> str:
        """CSV text as ``DataFrame.to_csv(index=False, na_rep="", lineterminator="\\n")`` writes it."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows(zip(*(_csv_cells(v) for v in self._cols.values())))
        return out.getvalue()


def missing(value: Any) -> bool:
    """None or NaN: a blank cell."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _csv_cells(values: np.ndarray) -> list[Any]:
    """One column's cells as the csv writer gets them from pandas."""
    if values.dtype.kind == "f":
        text = values.astype(str)
        text[np.isnan(values)] = ""
        return text.tolist()
    if values.dtype == object:
        return ["" if missing(v) else v for v in values.tolist()]
    return values.tolist()


def as_table(value: Table | pd.DataFrame) -> Table:
    """``value`` as a :class:`Table` (a DataFrame's columns; its index is left out)."""
    return value if isinstance(value, Table) else Table.from_pandas(value)
