"""The timeline (``Memory.timeline``): versions on both clocks, the text rendering,
and the picture — rendered from the README's example, saved as docs/timeline.png."""

from __future__ import annotations

import re
import struct
from datetime import timedelta
from pathlib import Path

import pytest

from chronomem import Memory
from chronomem.exchange import import_facts
from tests.conftest import ManualClock, utc

pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "timeline.png"


def readme_facts() -> list[str]:
    """The ``alice.jsonl`` lines of the README's CLI session (one source of truth)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"cat > alice\.jsonl <<'EOF'\n(.*?)\nEOF\n", text, re.S)
    assert block, "the README's CLI session writes alice.jsonl"
    return block.group(1).splitlines()


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", head[16:24])
    return w, h


def _rects(fig) -> dict[str, object]:  # type: ignore[no-untyped-def]
    from matplotlib.patches import Rectangle

    return {
        p.get_gid(): p
        for ax in fig.axes
        for p in ax.patches
        if isinstance(p, Rectangle) and p.get_gid()
    }


def test_readme_timeline_picture_has_a_rectangle_per_version() -> None:
    import matplotlib.dates as mdates

    clock = ManualClock(utc(2026, 4, 1))
    with Memory(clock=clock) as m:
        assert import_facts(m, readme_facts()) == {"history": 4, "remembered": 0}
        tl = m.timeline("alice", "lives_in")
        # Paris believed (unbounded) until 10 March; then Paris ending 15 January, and Berlin
        assert [(f.object, f.valid_to, f.recorded_at, f.superseded_at) for f in tl.versions] == [
            ("Paris", None, utc(2026, 1, 5), utc(2026, 3, 10)),
            ("Paris", utc(2026, 1, 15), utc(2026, 3, 10), None),
            ("Berlin", None, utc(2026, 3, 10), None),
        ]
        fig = tl.plot()
        rects = _rects(fig)
        assert set(rects) == {f.version_id for f in tl.versions}
        for f in tl.versions:  # each rectangle spans the version's two intervals
            r = rects[f.version_id]
            assert r.get_x() == pytest.approx(mdates.date2num(f.valid_from))  # type: ignore[attr-defined]
            assert r.get_y() == pytest.approx(mdates.date2num(f.recorded_at))  # type: ignore[attr-defined]
            if f.superseded_at is not None:
                top = r.get_y() + r.get_height()  # type: ignore[attr-defined]
                assert top == pytest.approx(mdates.date2num(f.superseded_at))
            if f.valid_to is not None:
                right = r.get_x() + r.get_width()  # type: ignore[attr-defined]
                assert right == pytest.approx(mdates.date2num(f.valid_to))
        colours = {f.object: rects[f.version_id].get_facecolor() for f in tl.versions}  # type: ignore[attr-defined]
        assert colours["Paris"] != colours["Berlin"]
        assert rects[tl.versions[0].version_id].get_facecolor() == colours["Paris"]  # type: ignore[attr-defined]
        PICTURE.parent.mkdir(exist_ok=True)
        fig.savefig(PICTURE)
    assert _png_size(PICTURE) == (900, 500)  # figsize 9x5 inches at 100 dpi


def test_retracted_ended_and_scheduled_are_marked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    clock = ManualClock(utc(2026, 1, 1), tick=timedelta(seconds=1))
    with Memory(clock=clock) as m:
        wrong = m.remember("bob", "lives_in", "Oslo", valid_from=utc(2025, 1, 1))
        clock.advance(days=2)
        m.retract(wrong.fact_ids[0])
        m.remember("bob", "lives_in", "Rome", valid_from=utc(2025, 1, 1))
        m.end("bob", "lives_in", at=utc(2025, 12, 1))
        m.remember("bob", "lives_in", "Lima", valid_from=utc(2027, 1, 1))
        tl = m.timeline("bob")
        marks = {(f.object, f.superseded_at is None): tl.marks(f) for f in tl.versions}
        assert "retracted" in marks[("Oslo", False)]
        assert "ended" in marks[("Rome", True)]
        assert marks[("Lima", True)] == ["scheduled"]
        rects = _rects(tl.plot())
        assert set(rects) == {f.version_id for f in tl.versions}
        m.remember("bob", "works_at", "Acme")
        both = m.timeline("bob")
        fig = both.plot()  # two predicates: two panels, each with its own versions
        assert [ax.get_title() for ax in fig.axes] == ["bob · lives_in", "bob · works_at"]
        assert set(_rects(fig)) == {f.version_id for f in both.versions}
        assert len(fig.axes[1].patches) == 1
        oslo = next(f for f in tl.versions if f.object == "Oslo" and f.closed_reason == "retracted")
        lima = next(f for f in tl.versions if f.object == "Lima")
        assert rects[oslo.version_id].get_hatch() == "xx"  # type: ignore[attr-defined]
        assert rects[lima.version_id].get_linestyle() in ("--", "dashed")  # type: ignore[attr-defined]
        text = tl.text()
        assert text.count("\n") == len(tl.versions)  # a title line, then one line per version
        assert "retracted" in text and "scheduled" in text and "ended" in text
        svg = tmp_path / "bob.svg"
        tl.save(str(svg))
        assert svg.read_text(encoding="utf-8").lstrip().startswith("<?xml")
        assert m.timeline("nobody").versions == []
        assert m.timeline("nobody").text() == "(no versions)"
