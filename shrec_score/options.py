"""Every option of a scoring validated once, before any input is read, into the frozen :class:`Options` the CLI
and the library share; a refused value is an :class:`OptionError` naming the allowed ones (docs/usage.md)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .choices import AVERAGES, GRADES, MATRIX_ORDERS, MIN_RESAMPLES, MISSING, RUN_FORMATS, TIES
from .errors import OptionError
from .measures import Settings, get_measure
from .measures.measure import did_you_mean, expand_names


def one_of(name: str, value: Any, allowed: Sequence[str], *, optional: bool = False) -> None:
    """OptionError naming ``name`` and the allowed values unless ``value`` is one of ``allowed`` (or None, ``optional``)."""
    if value not in allowed and not (value is None and optional):
        lower = isinstance(value, str) and value.lower() in allowed
        hint = f" (did you mean {value.lower()!r}? values are case-sensitive)" if lower else ""
        raise OptionError(f"{name}: expected one of {', '.join(allowed)}, got {value!r}{hint}")


def _whole(name: str, value: Any, *, minimum: int, optional: bool = False) -> Any:
    if (isinstance(value, bool) or not isinstance(value, int) or value < minimum) and not (value is None and optional):
        raise OptionError(f"{name}: expected a whole number >= {minimum}, got {value!r}")
    return value


def measure_name(name: Any, option: str = "measures") -> str:
    """The registry's name of a measure (aliases resolved); OptionError when unknown."""
    if not isinstance(name, str):
        raise OptionError(f"{option}: expected a measure name, got {name!r}")
    try:
        return get_measure(name).name
    except KeyError:
        where = "" if option == "measures" else f"{option}: "
        raise OptionError(f"{where}unknown measure {name!r}{did_you_mean(name)}; see 'shrec-score measures'") from None


@dataclass(frozen=True)
class Options:
    """The settings of one scoring (see :func:`shrec_score.score` for each), validated by :meth:`build`."""

    queries: Any = None
    grades: str = "binary"
    collection: Any = None
    collection_size: int | None = None
    measures: tuple[str, ...] | None = None
    sort: str | None = None
    rank_by: str | None = None
    run_format: str = "auto"
    matrix_order: str | None = None
    cutoffs: tuple[int, ...] = (5, 10)
    average: str = "micro"
    significance: bool = False
    seed: int = 0
    n_resamples: int = 10_000
    settings: Settings = field(default_factory=Settings)
    lenient: bool = False
    split: str | None = None  # of a ShapeNet Core55 ground truth
    ties: str | None = None  # overrides ``settings.ties`` when given
    strip_zeros: bool = False
    id_map: Any = None

    @classmethod
    def of(cls, options: Options | None, settings: dict[str, Any]) -> Options:
        """``options``, or the keywords ``settings`` built into Options; OptionError when both are given."""
        if options is not None and settings:
            got = ", ".join(sorted(settings))
            raise OptionError(f"give the options either as options= or as keywords, not both (got {got})")
        if options is not None and not isinstance(options, Options):
            raise OptionError(f"options: expected an Options (Options.build(...)) or keywords, got {type(options).__name__}")
        return options if options is not None else cls.build(**settings)

    @classmethod
    def build(cls, **given: Any) -> Options:
        """Validate ``given`` (the keywords of :func:`shrec_score.score`) into Options.

        >>> Options.build(grades="sister").grades
        'sister'
        >>> Options.build(average="Macro")
        Traceback (most recent call last):
        ...
        shrec_score.errors.OptionError: average: expected one of micro, macro, got 'Macro' (did you mean 'macro'? values are case-sensitive)
        """
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(given) - known)
        if unknown:
            raise OptionError(f"unknown option {unknown[0]!r}; expected one of {', '.join(sorted(known))}")
        opts = cls(**{k: v for k, v in given.items() if v is not None})
        one_of("grades", opts.grades, GRADES)
        one_of("average", opts.average, AVERAGES)
        one_of("run_format", opts.run_format, RUN_FORMATS)
        one_of("matrix_order", opts.matrix_order, MATRIX_ORDERS, optional=True)
        _whole("collection_size", opts.collection_size, minimum=1, optional=True)
        _whole("seed", opts.seed, minimum=0)
        _whole("n_resamples", opts.n_resamples, minimum=MIN_RESAMPLES)
        if not isinstance(opts.settings, Settings):
            raise OptionError(f"settings: expected a shrec_score.measures.Settings, got {type(opts.settings).__name__}")
        _whole("settings.rel_level", opts.settings.rel_level, minimum=1)
        _whole("settings.depth", opts.settings.depth, minimum=1, optional=True)
        one_of("settings.missing", opts.settings.missing, MISSING)
        _whole("settings.min_class_size", opts.settings.min_class_size, minimum=1)
        one_of("ties", opts.ties, TIES, optional=True)
        one_of("settings.ties", opts.settings.ties, TIES)
        settings = replace(opts.settings, ties=opts.ties or opts.settings.ties)
        flags = {"settings.judged_only": opts.settings.judged_only, **{k: getattr(opts, k) for k in ("significance", "lenient", "strip_zeros")}}
        for key, value in flags.items():
            if not isinstance(value, bool):
                raise OptionError(f"{key}: expected True or False, got {value!r}")
        if opts.id_map is not None and not isinstance(opts.id_map, (str, os.PathLike)):
            raise OptionError(f"id_map: expected the path of a two-column file (run id, relevance id), got {opts.id_map!r}")
        if opts.split is not None and (not isinstance(opts.split, str) or not opts.split.strip()):
            raise OptionError(f"split: expected the name of a split of the ShapeNet ground truth, got {opts.split!r}")
        cutoffs = tuple(_whole("cutoffs", k, minimum=1) for k in _sequence("cutoffs", opts.cutoffs))
        measures = None
        if opts.measures is not None:
            names = _sequence("measures", opts.measures)
            if all(isinstance(m, str) for m in names):  # trec_eval's groups and P.5,10,20
                try:
                    names = tuple(expand_names(names))
                except KeyError as exc:
                    raise OptionError(f"measures: {exc.args[0]}") from None
            if not names:
                raise OptionError("measures: expected at least one measure name, got an empty list")
            for m in names:
                measure_name(m)  # known, or OptionError
            measures = tuple(dict.fromkeys(names))  # as typed: the columns' names
        sort = None if opts.sort is None else measure_name(opts.sort, "sort")
        rank_by = None if opts.rank_by is None else measure_name(opts.rank_by, "rank_by")
        if settings.ties == "expected":
            check_expected([*(measures or ()), *(x for x in (sort, rank_by) if x is not None)], settings)
        return replace(opts, cutoffs=cutoffs, measures=measures, sort=sort, rank_by=rank_by, settings=settings)


def check_expected(names: Sequence[str], settings: Settings) -> None:
    """OptionError unless every measure in ``names`` has an exact expectation over tied orders and no depth is set."""
    for name in names:
        if not get_measure(name).ties_exact:
            why = f"{name} has no exact expected value over tied orders (see 'shrec-score measures')"
            raise OptionError(f"ties: {why}; use ties rule, optimistic or pessimistic, or leave it out")
    if settings.depth is not None:
        raise OptionError("ties: expected with depth (trec_eval -M) is not supported: the cut can split a tie group")


def _sequence(name: str, value: Any) -> tuple[Any, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise OptionError(f"{name}: expected a list, got {value!r}")
    return tuple(value)
