"""``vecgrade report A --html FILE``: one self-contained page of class statistics, plots embedded as PNG.

Pass rates and scores come from the gradebook (``class_marks``); speedups and
failure messages from what the grader wrote into the autograded notebooks'
grade cells (``observed``). Ungraded students are listed apart and count in no
rate or mean. Every answer that "fast" timed is on the speedup plot, passed or
failed; one stopped early as far slower is a triangle below the others.
"""
from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from graders.course.marks import format_marks  # noqa: E402
from graders.course.observed import Failure, Verdicts  # noqa: E402
from graders.course.results import StudentRow, fmt, max_points  # noqa: E402
from graders.model.exercise import PARTS, Assignment  # noqa: E402


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    return f'<img alt="{html.escape(fig.get_label())}" src="data:image/png;base64,{data}">'


def pass_rates(assignment: Assignment, rows: list[StudentRow]) -> np.ndarray:
    """exercise x part: the fraction of graded students with the part's full points."""
    graded = [r for r in rows if r.graded]
    maxes = max_points(assignment)
    rates = np.full((len(assignment.exercises), len(PARTS)), np.nan)
    for i, ex in enumerate(assignment.exercises):
        for j, part in enumerate(PARTS):
            gid = ex.grade_id(part)
            if graded:
                rates[i, j] = sum((r.marks[gid] or 0) >= maxes[gid] for r in graded) / len(graded)
    return rates


def heat_map(assignment: Assignment, rates: np.ndarray):
    fig, ax = plt.subplots(figsize=(5, 0.5 * len(assignment.exercises) + 1.2), num="pass rate heat map")
    im = ax.imshow(rates, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(PARTS)), PARTS)
    ax.set_yticks(range(len(assignment.exercises)), [ex.name for ex in assignment.exercises])
    for (i, j), v in np.ndenumerate(rates):
        ax.text(j, i, "-" if np.isnan(v) else f"{v:.0%}", ha="center", va="center")
    fig.colorbar(im, ax=ax, label="pass rate")
    ax.set_title("pass rate per exercise and part")
    return fig


def score_histogram(assignment: Assignment, rows: list[StudentRow]):
    totals = [r.total for r in rows if r.total is not None]  # a row has a total exactly when it is graded
    top = sum(max_points(assignment).values())
    fig, ax = plt.subplots(figsize=(6, 3), num="score distribution")
    # matplotlib's stubs type bins as a Sequence[float]; hist takes an ndarray of edges as well
    ax.hist(totals, bins=np.arange(0, top + 2) - 0.5, color="tab:blue", edgecolor="white")  # type: ignore[arg-type]
    ax.set_xlabel(f"total points (of {top:g})")
    ax.set_ylabel("students")
    ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_title(f"score distribution ({len(totals)} graded)")
    return fig


def speedup_plot(assignment: Assignment, verdicts: Verdicts):
    fig, ax = plt.subplots(figsize=(1.4 * len(assignment.exercises) + 2, 3.5), num="measured speedups")
    rng = np.random.default_rng(0)
    measured = [s.speedup for speeds in verdicts.speeds.values() for s in speeds if s.speedup is not None]
    floor = min(measured + [ex.speedup for ex in assignment.exercises]) / 4  # where "stopped early" is drawn
    labels: set[str] = set()

    def label(text: str) -> str | None:
        """The legend entry, the first time a kind is drawn only."""
        if text in labels:
            return None
        labels.add(text)
        return text

    for i, ex in enumerate(assignment.exercises):
        speeds = verdicts.speeds.get(ex.name, [])
        for passed, colour, name in ((True, "tab:green", "passed fast"), (False, "tab:red", "failed fast")):
            values = [s.speedup for s in speeds if s.speedup is not None and s.passed == passed]
            if values:
                ax.scatter(i + rng.uniform(-0.15, 0.15, len(values)), values, s=18, alpha=0.7, c=colour,
                           label=label(name))
        stopped = sum(s.speedup is None for s in speeds)
        if stopped:
            ax.scatter(i + rng.uniform(-0.15, 0.15, stopped), [floor] * stopped, marker="v", s=24, alpha=0.7,
                       c="tab:red", label=label("stopped early: far slower"))
            ax.annotate(f"{stopped}", (i + 0.2, floor), fontsize=8, va="center")
        # matplotlib's stubs type label as str; None (no legend entry) is accepted, like any Artist label
        ax.hlines(ex.speedup, i - 0.35, i + 0.35, colors="black", linestyles="dashed",
                  label=label("threshold"))  # type: ignore[arg-type]
    ax.set_yscale("log")
    ax.set_xticks(range(len(assignment.exercises)), [ex.name for ex in assignment.exercises], rotation=20)
    ax.set_ylabel("speedup over the loop version")
    ax.set_title("every timed answer (dots), stopped early (triangles), threshold (dashes)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    return fig


def _table(head: list[str], body: list[list[str]]) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in body)
    return f"<table><tr>{cells}</tr>{rows}</table>"


def _when(value) -> str:
    """A due date (UTC, as nbgrader stores it) or an extension, in words; "" for none."""
    if value is None:
        return ""
    if hasattr(value, "total_seconds"):
        hours = value.total_seconds() / 3600
        return f"+{hours:g} h"
    return f"{value:%Y-%m-%d %H:%M} UTC"


MARKS_HEAD = ("score", "late penalty", "total", "due", "extension", "status")


def marks_table(assignment: Assignment, rows: list[StudentRow], feedback: dict[str, str] | None = None) -> str:
    """Per student: the marks per exercise (a part graded by hand starred), nbgrader's score, its late penalty, the
    total (``score - penalty``, as ``nbgrader export``), the student's due date and extension, the status; the name
    links to the student's feedback page where ``feedback`` has one ({student: href})."""
    feedback = feedback or {}
    head = ["student"] + [ex.name for ex in assignment.exercises] + list(MARKS_HEAD)
    out = ["<table><tr>", *(f"<th>{html.escape(h)}</th>" for h in head), "</tr>"]
    for r in rows:
        name = html.escape(r.student)
        if r.student in feedback:
            name = f'<a class="feedback" href="{html.escape(feedback[r.student])}">{name}</a>'
        cells = [html.escape(format_marks(tuple(r.marks[ex.grade_id(p)] for p in PARTS),
                                          tuple(ex.grade_id(p) in r.manual for p in PARTS)))
                 if r.graded else "ungraded" for ex in assignment.exercises]
        rec = r.recorded if r.graded else None
        penalty = "" if r.penalty is None else (f"-{r.penalty:g}" if r.penalty else "0")
        tail = [fmt(r.score), penalty, fmt(r.total), _when(rec.duedate if rec else None),
                _when(rec.extension if rec else None), r.status]
        klass = ' class="late"' if r.penalty else ""
        out.append(f"<tr{klass}><td>{name}</td>" + "".join(f"<td>{c}</td>" for c in cells)
                   + "".join(f"<td>{html.escape(c)}</td>" for c in tail) + "</tr>")
    out.append("</table>")
    if any(r.manual for r in rows):
        out.append("<p>* graded by hand in the formgrader: nbgrader's score is the manual score, plus any extra "
                   "credit.</p>")
    return "".join(out)


STYLE = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
img{max-width:100%;display:block;margin:1em 0}h2{border-bottom:1px solid #ddd}
.changed{background:#fff3cd;border:1px solid #e0c36c;padding:.5em 1em}tr.late td{background:#fdf1f1}"""


def _failure_row(f: Failure) -> list[str]:
    part = f"{f.part} (so vectorized and fast not graded)" if f.gates else f.part
    return [str(f.times), part, f.reason.value, f.message()]


def failures_section(assignment: Assignment, verdicts: Verdicts) -> str:
    """Per exercise, the five most frequent failures, grouped by part and reason code, with the class's figures."""
    intro = ("<p>Failures of one part for one reason count as one; a range shows the figures the class's verdicts "
             "carry, and an example message is shown as the grader wrote it. A failed <em>correct</em> leaves "
             "<em>vectorized</em> and <em>fast</em> not graded: they are counted with it.</p>")
    return intro + "".join(
        f"<h3>{html.escape(ex.name)}</h3>"
        + (_table(["times", "part", "reason", "what"], [_failure_row(f) for f in verdicts.frequent(ex.name)])
           if verdicts.frequent(ex.name) else "<p>no failures</p>")
        for ex in assignment.exercises)


def render_html(assignment: Assignment, rows: list[StudentRow], verdicts: Verdicts, changes: Sequence[str] = (),
                groups: str = "", feedback: dict[str, str] | None = None) -> str:
    """The page; ``changes``: how the definitions differ from what the class was graded on (``version_changes``);
    ``groups``: the answer-groups section (graders.course.groups.groups_html); ``feedback``: {student: the href of
    their feedback page}."""
    not_graded = [r for r in rows if not r.graded]
    changed = (f'<p class="changed"><strong>{html.escape(assignment.name)} changed after the class was graded'
               f"</strong> (the marks are from the older version): {html.escape('; '.join(changes))}</p>"
               if changes else "")
    parts = [
        f"<h1>{html.escape(assignment.name)}: class report</h1>", changed,
        f"<p>{sum(r.graded for r in rows)} graded, {len(not_graded)} without marks. "
        "Rates, scores and speedups count graded submissions only.</p>",
        "<h2>Pass rates</h2>", _png(heat_map(assignment, pass_rates(assignment, rows))),
        "<h2>Scores</h2>", _png(score_histogram(assignment, rows)),
        "<h2>Speedups</h2>", _png(speedup_plot(assignment, verdicts)),
        "<h2>Most frequent failures</h2>", failures_section(assignment, verdicts),
        '<h2 id="ungraded">Ungraded</h2>',
        _table(["student", "status"], [[r.student, r.status] for r in not_graded]) if not_graded
        else "<p>every submission was graded</p>",
        "<h2 id=\"marks\">Marks (correct / vectorized / fast)</h2>", marks_table(assignment, rows, feedback),
        groups,
    ]
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(assignment.name)} report</title>"
            f"<style>{STYLE}</style></head><body>{''.join(parts)}</body></html>\n")


def write_html(dest: Path, assignment: Assignment, rows: list[StudentRow], verdicts: Verdicts,
               changes: Sequence[str] = (), groups: str = "", feedback: dict[str, str] | None = None) -> None:
    Path(dest).write_text(render_html(assignment, rows, verdicts, changes, groups, feedback))


def feedback_links(pages: dict[str, Path], dest: Path) -> dict[str, str]:
    """{student: the href of their feedback page, relative to the report ``dest``} for the pages that exist."""
    out = {}
    for student, page in pages.items():
        if page.exists():
            out[student] = Path(os.path.relpath(page.resolve(), Path(dest).resolve().parent)).as_posix()
    return out
