"""trec_eval's names (each giving its number; its groups and ``P.5,10,20``), the refused "Recall@k"
(docs/coming-from.md) and how a typed name becomes a column (docs/measures.md); other spellings: ``measure.ALIASES``."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from .measure import Measure, get_measure
from .treceval import IPREC_LEVELS

#: trec_eval's group ``-m official``, as a shortcut.
OFFICIAL = (
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    *(f"iprec_at_recall_{x:.2f}" for x in IPREC_LEVELS),
    *(f"P.{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
)
#: The default measures of graded qrels (issue 31.18) shown on the terminal (per_run.csv holds every one).
SHOWN_OFFICIAL = ("map", "gm_map", "Rprec", "bpref", "recip_rank", "P.5", "P.10", "P.20")
_PARAMETER = re.compile(r"([A-Za-z_]+\.)[0-9]+")


def expand_names(names: Iterable[str]) -> list[str]:
    """Measure names with trec_eval's shortcuts expanded: a group (``official``) becomes its measures, a bare number
    continues the ``name.k`` before it (``P.5,10``).  KeyError (why) for ``all_trec`` and a bare number without one.

    >>> expand_names(["P.5,10", "ndcg_cut.20", "30", "AP"])
    ['P.5', 'P.10', 'ndcg_cut.20', 'ndcg_cut.30', 'AP']
    """
    out: list[str] = []
    prefix = None
    for name in filter(None, (part.strip() for text in names for part in text.split(","))):
        if name == "all_trec":
            raise KeyError("all_trec: shrec-score has only some of trec_eval's measures (not 11pt_avg, infAP, rbp, "
                           "relstring, set_P, utility ...); ask for 'official' or name the measures")
        if name.isdigit():
            if prefix is None:
                raise KeyError(f"{name}: a bare number continues a trec_eval name with a dot (P.5,10), but nothing precedes it")
            name = prefix + name
        m = _PARAMETER.fullmatch(name)
        prefix = m.group(1) if m else None
        out.extend(OFFICIAL if name == "official" else [name])
    return out


def typed_measure(name: str) -> Measure:
    """The measure ``name`` computes, under ``name`` as typed (``-m ndcg@10``: ``ndcg_cut.10`` in a column ``ndcg@10``):
    the one place a typed name becomes a column; every other lookup by column resolves the typed name again.

    >>> m = typed_measure("ndcg@10"); m.name, m.trec_name, typed_measure("AP") is get_measure("AP")
    ('ndcg@10', 'ndcg_cut_10', True)
    """
    m = get_measure(name)
    return m if m.name == name else dataclasses.replace(m, name=name)


def column_for(name: str, columns: Sequence[str]) -> str | None:
    """The first of ``columns`` (typed names) that computes the measure ``name`` in any spelling, or None.

    >>> column_for("ndcg_cut_10", ["map", "ndcg@10"]), column_for("AP", ["map"])
    ('ndcg@10', None)
    """
    target = get_measure(name).name
    return next((c for c in columns if get_measure(c).name == target), None)


def trec_name(column: str) -> str | None:
    """trec_eval's name of a column where its values are trec_eval's, else None (a SHREC measure with a trec_eval
    twin, ``AP``, leaves a topic without relevant documents out of the mean; a column that is no measure).

    >>> [trec_name(c) for c in ("map", "precision@5", "ndcg@10", "AP", "P@5", "NN", "NDCG@10", "tau_b")]
    ['map', 'P_5', 'ndcg_cut_10', None, None, None, None, None]
    """
    try:
        m = get_measure(column)
    except KeyError:
        return None
    if m.trec_name is None or (m.kind == "binary" and get_measure(m.trec_name).name != m.name):
        return None  # a SHREC measure whose trec_eval name is its twin's (AP: map)
    return m.trec_name


#: Names read as "recall at k" that mean two things in evaluate(): R@k, Recall@k (any case).
_RECALL = re.compile(r"(?:R|(?i:recall))@([1-9][0-9]*)")


def ambiguous_recall(name: object) -> str | None:
    """The message for a recall-at-k name whose meaning depends on the field, or None.

    >>> ambiguous_recall("AP") is None, ambiguous_recall("recall.10") is None
    (True, True)
    >>> print(ambiguous_recall("Recall@1"))  # doctest: +NORMALIZE_WHITESPACE
    measures: 'Recall@1' means two things, so it is not guessed: IR recall at 1 (relevant items
    in the first 1 / K: ask for 'recall.1') or the metric-learning Recall@1 (1 if a relevant item
    is in the first 1: ask for 'success.1')
    """
    if not (isinstance(name, str) and (m := _RECALL.fullmatch(name))):
        return None
    k = m.group(1)
    return (
        f"measures: {name!r} means two things, so it is not guessed: IR recall at {k} "
        f"(relevant items in the first {k} / K: ask for 'recall.{k}') or the metric-learning "
        f"Recall@{k} (1 if a relevant item is in the first {k}: ask for 'success.{k}')"
    )
