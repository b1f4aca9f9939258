"""Random batches of ``cm_versions`` rows for the tests that store one batch two ways
(``test_sqlite_staged_columns``, ``test_pg_same_columns``): a column's values, and
the rows built from the columns drawn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st


def column(values: st.SearchStrategy[Any], n: int) -> st.SearchStrategy[list[Any]]:
    """``n`` values: one repeated (a column alike in every row) or each drawn."""
    return values.map(lambda v: [v] * n) | st.lists(values, min_size=n, max_size=n)


def version_rows(
    drawn: dict[str, list[Any]], n: int, row_id: Callable[[int], str] = str
) -> list[dict[str, Any]]:
    """``n`` version rows with the columns ``drawn`` (``valid_to`` drawn as a length
    after ``valid_from``) and fixed, distinct ids, slots and fact ids."""
    return [
        {
            "tenant": "default",
            "id": row_id(i),
            "fact_id": f"f{i}",
            "user_id": drawn["user_id"][i],
            "agent_id": "",
            "session_id": "",
            "slot": f"s{i}",
            "subject": drawn["subject"][i],
            "subject_key": drawn["subject"][i].lower(),
            "subject_hash": "h",
            "predicate": drawn["predicate"][i],
            "object": drawn["object"][i],
            "object_key": drawn["object"][i],
            "valid_from": drawn["valid_from"][i],
            "valid_to": (
                None
                if drawn["valid_to"][i] is None
                else drawn["valid_from"][i] + drawn["valid_to"][i]
            ),
            "recorded_at": drawn["recorded_at"][i],
            "superseded_at": drawn["superseded_at"][i],
            "superseded_by": None,
            "closed_reason": None,
            "extractor": drawn["extractor"][i],
            "metadata": drawn["metadata"][i],
            "index_text": drawn["index_text"][i],
            "content_hash": "c",
        }
        for i in range(n)
    ]
