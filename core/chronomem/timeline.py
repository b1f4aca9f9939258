"""A subject's bitemporal timeline: every version ever recorded, as data, as text
for a terminal, and as a picture (needs ``chronomem[plot]``: matplotlib).

The picture puts valid time (when the value held in the world) on the x axis and
transaction time (when the store believed it) on the y axis. Each version is one
rectangle: from ``valid_from`` to ``valid_to`` across, from ``recorded_at`` to
``superseded_at`` up; an open end runs to the edge of the picture. Rectangles
are coloured by value, so "we believed Paris until March, then learned it had
been Berlin since January" reads as a Paris block whose top is cut at March and a
Berlin block above it reaching back to January. A retracted version is hatched
with a red outline, an ended value has a thick bar at its end, a scheduled value
(starting after now) a dashed outline."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from . import reads
from .identity import fold, key_hash, require_text
from .model import CloseReason, Fact
from .schema import versions

if TYPE_CHECKING:
    from .engine import Engine
    from .scope import Scope


@dataclass(frozen=True)
class Timeline:
    """Every version of a subject's facts (one predicate, or all), oldest belief first."""

    subject: str
    predicate: str | None
    versions: list[Fact]
    now: datetime

    # -- classification ------------------------------------------------------------------
    @staticmethod
    def retracted(f: Fact) -> bool:
        return f.closed_reason == CloseReason.RETRACTED

    def scheduled(self, f: Fact) -> bool:
        return f.valid_from > self.now and not self.retracted(f)

    @staticmethod
    def ended(f: Fact) -> bool:
        return f.valid_to is not None

    def marks(self, f: Fact) -> list[str]:
        out = []
        if self.retracted(f):
            out.append("retracted")
        if self.ended(f):
            out.append("ended")
        if self.scheduled(f):
            out.append("scheduled")
        if f.superseded_at is not None and not self.retracted(f):
            out.append(f"replaced ({f.closed_reason})")
        return out

    def values(self) -> list[str]:
        """The distinct values in first-recorded order (the colour legend's order)."""
        return list(dict.fromkeys(f.object for f in self.versions))

    # -- text ----------------------------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        """One row per version, as plain data (the CLI's table and ``--json``)."""
        return [
            {
                "predicate": f.predicate,
                "value": f.object,
                "valid_from": f.valid_from.isoformat(),
                "valid_to": f.valid_to.isoformat() if f.valid_to else None,
                "recorded_at": f.recorded_at.isoformat(),
                "superseded_at": f.superseded_at.isoformat() if f.superseded_at else None,
                "marks": self.marks(f),
                "fact_id": f.id,
                "version_id": f.version_id,
            }
            for f in self.versions
        ]

    def text(self, width: int = 40, escape: Any = str) -> str:
        """A terminal rendering: per version, a bar over the valid-time span of the
        whole timeline, with its belief interval. ``escape`` makes stored values safe
        to print (the CLI passes its escaper)."""
        if not self.versions:
            return "(no versions)"
        lo, hi = self._valid_span()
        span = (hi - lo).total_seconds() or 1.0

        def col(t: datetime) -> int:
            return round((t - lo).total_seconds() / span * width)

        lines = [
            f"{escape(self.subject)}{' ' + escape(self.predicate) if self.predicate else ''}: "
            f"valid time {lo.date().isoformat()} … {hi.date().isoformat()}"
        ]
        label_w = min(24, max(len(escape(f.object)) for f in self.versions))
        for f in self.versions:
            a = col(f.valid_from)
            b = col(f.valid_to) if f.valid_to else width
            ch = "x" if self.retracted(f) else ":" if self.scheduled(f) else "#"
            bar = " " * a + ch * max(1, b - a) + ("|" if f.valid_to else ">")
            known = (
                f"{f.recorded_at:%Y-%m-%d %H:%M} → "
                f"{f'{f.superseded_at:%Y-%m-%d %H:%M}' if f.superseded_at else 'now'}"
            )
            name = escape(f.object)[:label_w].ljust(label_w)
            pred = f"{escape(f.predicate)}  " if self.predicate is None else ""
            marks = ", ".join(m for m in self.marks(f))
            lines.append(
                f"{pred}{name} {bar.ljust(width + 2)} known {known}{'  ' + marks if marks else ''}"
            )
        return "\n".join(lines)

    # -- picture -------------------------------------------------------------------------
    def _valid_span(self) -> tuple[datetime, datetime]:
        times = [f.valid_from for f in self.versions]
        times += [f.valid_to for f in self.versions if f.valid_to is not None]
        times += [self.now]
        lo, hi = min(times), max(times)
        pad = max((hi - lo) / 10, timedelta(days=1))
        return lo - pad, hi + pad

    def _tx_span(self) -> tuple[datetime, datetime]:
        times = [f.recorded_at for f in self.versions]
        times += [f.superseded_at for f in self.versions if f.superseded_at is not None]
        times += [self.now]
        lo, hi = min(times), max(times)
        pad = max((hi - lo) / 10, timedelta(hours=1))
        return lo - pad, hi + pad

    def plot(self, *, ax: Any = None, figsize: tuple[float, float] = (9.0, 5.0)) -> Any:
        """Draw the timeline; returns the matplotlib ``Figure`` (one panel per
        predicate when the timeline holds several, unless ``ax`` is given). Each
        version's rectangle carries ``gid`` = its version id (tests and tools find
        it by that)."""
        try:
            import matplotlib

            if ax is None:
                matplotlib.use("Agg", force=False)
            import matplotlib.dates as mdates
            from matplotlib.figure import Figure
            from matplotlib.lines import Line2D
            from matplotlib.patches import Patch, Rectangle
        except ImportError:  # pragma: no cover - exercised only without the extra
            raise ImportError(
                "the timeline picture needs matplotlib: pip install 'chronomem[plot]'"
            ) from None
        preds = list(dict.fromkeys(f.predicate for f in self.versions))
        if ax is None and len(preds) > 1:
            # one panel per predicate: values of different predicates never overlap
            fig = Figure(figsize=(figsize[0], 1.0 + 3.0 * len(preds)), dpi=100)
            for i, pred in enumerate(preds, 1):
                part = Timeline(self.subject, pred,
                                [f for f in self.versions if f.predicate == pred], self.now)  # fmt: skip
                panel = fig.add_subplot(len(preds), 1, i)
                part.plot(ax=panel)
                panel.set_ylabel("transaction time →")
                panel.set_xlabel("valid time →" if i == len(preds) else "")
            fig.tight_layout()
            return fig
        if ax is None:
            fig = Figure(figsize=figsize, dpi=100)
            ax = fig.add_subplot(1, 1, 1)
        else:
            fig = ax.figure
        title = f"{self.subject} · {self.predicate}" if self.predicate else self.subject
        if not self.versions:
            ax.set_title(f"{title}: no versions")
            return fig
        x0, x1 = self._valid_span()
        y0, y1 = self._tx_span()
        palette = matplotlib.colormaps["tab10"]
        colour = {v: palette(i % 10) for i, v in enumerate(self.values())}
        num = mdates.date2num
        for f in self.versions:
            left, right = num(f.valid_from), num(f.valid_to or x1)
            bottom, top = num(f.recorded_at), num(f.superseded_at or y1)
            retracted, scheduled = self.retracted(f), self.scheduled(f)
            rect = Rectangle(
                (left, bottom),
                right - left,
                top - bottom,
                facecolor=colour[f.object],
                alpha=0.35 if retracted else 0.75,
                edgecolor="red" if retracted else "black",
                linewidth=1.6 if retracted else 0.8,
                linestyle="--" if scheduled else "-",
                hatch="xx" if retracted else None,
                gid=f.version_id,
                label=None,
            )
            ax.add_patch(rect)
            if f.valid_to is not None:  # ended: a thick bar where the value stops
                ax.plot([right, right], [bottom, top], color="black", linewidth=3.0)
            label = f.object if len(f.object) <= 24 else f.object[:23] + "…"
            if retracted:
                label += " (retracted)"
            elif scheduled:
                label += " (scheduled)"
            ax.text(
                left + (min(right, num(x1)) - left) / 2,
                bottom + (min(top, num(y1)) - bottom) / 2,
                label,
                ha="center",
                va="center",
                fontsize=8,
                clip_on=True,
            )
        ax.axvline(num(self.now), color="grey", linestyle=":", linewidth=1)
        ax.axhline(num(self.now), color="grey", linestyle=":", linewidth=1)
        ax.set_xlim(num(x0), num(x1))
        ax.set_ylim(num(y0), num(y1))
        for axis in (ax.xaxis, ax.yaxis):
            locator = mdates.AutoDateLocator()
            axis.set_major_locator(locator)
            axis.set_major_formatter(mdates.ConciseDateFormatter(locator, show_offset=False))
        ax.set_xlabel("valid time (when it was true in the world) →")
        ax.set_ylabel("transaction time (when memory believed it) →")
        ax.set_title(title)
        handles: list[Any] = [Patch(facecolor=colour[v], label=v[:30]) for v in self.values()]
        if any(self.ended(f) for f in self.versions):
            handles.append(Line2D([], [], color="black", linewidth=3.0, label="ends here"))
        if any(self.retracted(f) for f in self.versions):
            handles.append(Patch(facecolor="white", edgecolor="red", hatch="xx", label="retracted"))
        if any(self.scheduled(f) for f in self.versions):
            handles.append(Patch(facecolor="white", edgecolor="black", linestyle="--",
                                 label="scheduled"))  # fmt: skip
        handles.append(Line2D([], [], color="grey", linestyle=":", label="now"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        fig.tight_layout()
        return fig

    def save(self, path: str, **kwargs: Any) -> None:
        """Write the picture to ``path`` (PNG, SVG, PDF: by its extension)."""
        self.plot(**kwargs).savefig(path)


def build(
    engine: Engine, scope: Scope, subject: str, predicate: str | None = None, *, exact: bool = False
) -> Timeline:
    """Every version ever recorded of ``subject`` (optionally one predicate) in
    ``scope`` and its ancestors, ordered by predicate, belief, validity.
    ``exact=True`` matches the subject and predicate as given (no folding)."""
    require_text(subject, "subject")
    now = engine.now()
    key = subject if exact else fold(subject)
    with engine.backend.read() as conn:
        q = select(versions).where(
            reads.scope_visible(versions, scope),
            versions.c.subject_hash == key_hash(key),
            versions.c.subject_key == key,
        )
        if predicate is not None:
            name = (
                predicate if exact else engine.registry.resolve(conn, scope.tenant, predicate).name
            )
            q = q.where(versions.c.predicate == name)
        rows = conn.execute(q).mappings().all()
    now_us = engine.now_us()
    found = [
        reads.to_fact(r, now_us, retracted_row=r["closed_reason"] == CloseReason.RETRACTED)
        for r in rows
    ]
    found.sort(key=lambda f: (f.predicate, f.recorded_at, f.valid_from, f.version_id))
    return Timeline(subject, predicate, found, now)
