"""``benchmarks/peers.py`` (issue #32's table) keeps its shape: every row present, ratios
computed where both sides ran, targets judged. Never its speed: real runs are by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import peers  # noqa: E402

ROWS = (
    "LlamaIndex `ChronomemMemory` whole turn, session of 30 messages",
    "LlamaIndex `ChronomemMemory` whole turn, session of 60 messages",
    "LlamaIndex turn at 60 / turn at 30 messages",
    "LlamaIndex `aput` at 60 messages",
    "LlamaIndex `aget` at 60 messages",
    "LangChain chat history `add_messages` (2 messages) at 60",
    "LangChain chat history `.messages` at 60",
    "LangChain chat history `add_messages` (2 messages) at 60 / at 30",
    "LangChain `ChronomemMiddleware` turn (recall + store the thread), 60 messages",
    "LangChain middleware turn at 60 / at 30",
    "LangGraph `list_namespaces` at 30 items",
    "LangGraph `list_namespaces` at 60 items",
    "LangGraph `list_namespaces` at 60 / at 30 items",
    "LangGraph batched puts at 60 (SQLite)",
    "LangGraph single put",
    "LangGraph `get`",
    "LangGraph search inside one namespace of 100 items",
    "LangGraph single put, PostgreSQL 15",
    "core batched writes at 60, SQLite",
    "core batched writes at 60, PostgreSQL 15",
    "PostgreSQL hybrid search at 60 (core `Memory.search`, k=10)",
    "LangGraph batched puts at 60, PostgreSQL 16 + pgvector",
    "pgvector search at 1M facts, p50 (core `Memory.search`, k=10)",
    "CrewAI `ChronomemMemory.recall`, 20 records",
    "CrewAI `ChronomemMemory.remember` (one text), 20 records",
)


def test_quick_run_writes_the_whole_table(tmp_path: Path) -> None:
    stem = tmp_path / "peers"
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "peers.py"), "--quick", "--sizes", "30,60",
         "--rounds", "2", "--crewai-records", "20", "--out", str(stem)],
        capture_output=True, text=True, timeout=900, check=True, cwd=ROOT,
    )  # fmt: skip
    out = json.loads(stem.with_suffix(".json").read_text())
    assert all(s["error"] is None for s in out["sections"].values()), out["sections"]
    rows = out["rows"]
    paths = {r["path"] for r in rows}
    assert set(ROWS) <= paths, sorted(set(ROWS) - paths)
    for r in rows:
        if r["note"].startswith("not run"):  # a server or package missing: said, no figure
            assert r["ours"] is None and r["ratio"] is None
            continue
        assert r["ours"] is not None and r["ours"] > 0, r
        if r["peer"] is not None:
            assert r["ratio"] is not None and r["ratio"] > 0, r
        if r["target"] and r["ratio"] is not None:
            assert isinstance(r["met"], bool), r
    # both sides of a framework row ran; the peers are the frameworks' own defaults
    by = {(r["path"], r["peer_name"]): r for r in rows}
    assert by[(ROWS[1], "LlamaIndex `Memory`")]["target"] == "≤ 1.5×"
    # writes are judged against the SqliteStore that embeds on put, as we do; the
    # key-value SqliteStore is shown beside it without a target
    indexed = "`SqliteStore` (sqlite-vec index: embeds on put)"
    key_value = "`SqliteStore` (no index: a key-value put)"
    for path in (ROWS[13], ROWS[18]):
        assert by[(path, indexed)]["target"] == "≥ 1.0×"
        assert by[(path, indexed)]["peer"] > 0
        assert by[(path, key_value)]["target"] is None
    assert by[(ROWS[14], indexed)]["target"] == "≤ 1.0×"
    assert by[(ROWS[13], "`InMemoryStore`")]["target"] == "≥ 0.5×"
    assert by[(ROWS[22], None)]["note"].startswith("not run")  # --big not given
    table = stem.with_suffix(".md").read_text().splitlines()
    assert "| path | chronomem | peer | ratio | target | met? |" in table
    assert sum(1 for line in table if line.startswith("| ")) == len(rows) + 1


def test_rows_judge_rates_and_latencies_by_their_own_direction() -> None:
    slow = peers.row("p", 30.0, "peer", 10.0, "ms", target=("<=", 1.5))
    assert (slow["ratio"], slow["met"]) == (3.0, False)
    rate = peers.row("p", 600.0, "peer", 1000.0, "items/s", higher=True, target=(">=", 0.5))
    assert (rate["ratio"], rate["met"], rate["target"]) == (0.6, True, "≥ 0.5×")
    alone = peers.row("p", 5.0, None, None, "ms")
    assert (alone["ratio"], alone["met"]) == (None, None)
    table = peers.markdown([slow, peers.not_run("q", "no server")]).splitlines()
    assert table[2] == "| p | 30.0 ms | peer 10.0 ms | 3.00× | ≤ 1.5× | **no** |"
    assert table[3] == "| q | not run: no server | - | - | - | - |"


def test_alternate_takes_turns_and_reverses_the_order() -> None:
    seen: list[tuple[str, int]] = []
    medians = peers.alternate(
        {"a": lambda i: seen.append(("a", i)), "b": lambda i: seen.append(("b", i))}, rounds=2
    )
    assert seen == [("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2)]
    assert set(medians) == {"a", "b"}  # the warm-up round 0 is not measured


def test_an_unknown_section_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--only langchain`` (the sections are ``langchain-history`` and
    ``langchain-middleware``) measured nothing and wrote an empty table; now it is an
    error naming the sections, and no file is written."""
    with pytest.raises(SystemExit) as exit_:
        peers.main(["--only", "langchain,crewai", "--out", str(tmp_path / "t")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "no section langchain" in err and "langchain-middleware" in err
    assert not list(tmp_path.iterdir())
