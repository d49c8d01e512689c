"""``vecgrade report A --html FILE``: one self-contained page of class statistics, plots embedded as PNG; ``vecgrade
report --html FILE`` (no assignment): the course-wide page across assignments. Both are Jinja2 templates in
``templates/report/`` (every value escaped).

Pass rates and scores come from the gradebook (``class_marks``); speedups and
failure messages from what the grader wrote into the autograded notebooks'
grade cells (``observed``). Ungraded students are listed apart and count in no
rate or mean. Every answer that "fast" timed is on the speedup plot, passed or
failed; one stopped early as far slower is a triangle below the others.
"""
from __future__ import annotations

import base64
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


TEMPLATES = Path(__file__).parent / "templates" / "report"


def _environment():
    """Jinja2 over ``templates/report``, every value escaped (a student's folder name is text)."""
    import jinja2
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, keep_trailing_newline=True)


def when(value) -> str:
    """A due date (UTC, as nbgrader stores it) or an extension, in words; "" for none."""
    if value is None:
        return ""
    if hasattr(value, "total_seconds"):
        return f"+{value.total_seconds() / 3600:g} h"
    return f"{value:%Y-%m-%d %H:%M} UTC"


def penalty_text(row: StudentRow) -> str:
    """``-1.6`` for a penalty taken, ``0`` for none, "" without marks."""
    return "" if row.penalty is None else (f"-{row.penalty:g}" if row.penalty else "0")


def marks_rows(assignment: Assignment, rows: list[StudentRow], feedback: dict[str, str] | None = None) -> list[dict]:
    """The marks table's rows, for the template: per student the marks per exercise (a part graded by hand starred),
    nbgrader's score, the late penalty, the total (``score - penalty``, as ``nbgrader export``), the student's due
    date and extension, the status, and the href of their feedback page (``feedback``: {student: href})."""
    feedback = feedback or {}
    out = []
    for r in rows:
        rec = r.recorded if r.graded else None
        cells = [format_marks(tuple(r.marks[ex.grade_id(p)] for p in PARTS),
                              tuple(ex.grade_id(p) in r.manual for p in PARTS))
                 if r.graded else "ungraded" for ex in assignment.exercises]
        out.append({"student": r.student, "href": feedback.get(r.student, ""), "cells": cells, "score": fmt(r.score),
                    "penalty": penalty_text(r), "penalty_taken": bool(r.penalty), "total": fmt(r.total),
                    "due": when(rec.duedate if rec else None), "extension": when(rec.extension if rec else None),
                    "status": r.status})
    return out


def _failure_row(f: Failure) -> tuple[str, str, str, str]:
    part = f"{f.part} (so vectorized and fast not graded)" if f.gates else f.part
    return str(f.times), part, f.reason.value, f.message()


def _plot(fig) -> tuple[str, str]:
    """(alt text, base64 PNG) of a figure, closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return fig.get_label(), base64.b64encode(buf.getvalue()).decode()


def render_html(assignment: Assignment, rows: list[StudentRow], verdicts: Verdicts, changes: Sequence[str] = (),
                groups: str = "", feedback: dict[str, str] | None = None, course_page: str = "") -> str:
    """The page (``templates/report/assignment.html.j2``); ``changes``: how the definitions differ from what the class
    was graded on (``version_changes``); ``groups``: the answer-groups section, already HTML
    (graders.course.groups.groups_html); ``feedback``: {student: the href of their feedback page}; ``course_page``:
    the href of the course-wide page, if one is written beside it."""
    from markupsafe import Markup
    plots = [("Pass rates", *_plot(heat_map(assignment, pass_rates(assignment, rows)))),
             ("Scores", *_plot(score_histogram(assignment, rows))),
             ("Speedups", *_plot(speedup_plot(assignment, verdicts)))]
    return _environment().get_template("assignment.html.j2").render(
        name=assignment.name, changes=list(changes), graded=sum(r.graded for r in rows),
        without=sum(not r.graded for r in rows), plots=plots, course_page=course_page,
        failures=[(ex.name, [_failure_row(f) for f in verdicts.frequent(ex.name)]) for ex in assignment.exercises],
        not_graded=[(r.student, r.status) for r in rows if not r.graded],
        exercises=[ex.name for ex in assignment.exercises], marks=marks_rows(assignment, rows, feedback),
        any_manual=any(r.manual for r in rows), groups=Markup(groups))  # noqa: S704 - groups_html escapes its text


def write_html(dest: Path, assignment: Assignment, rows: list[StudentRow], verdicts: Verdicts,
               changes: Sequence[str] = (), groups: str = "", feedback: dict[str, str] | None = None,
               course_page: str = "") -> None:
    Path(dest).write_text(render_html(assignment, rows, verdicts, changes, groups, feedback, course_page))


def feedback_links(pages: dict[str, Path], dest: Path) -> dict[str, str]:
    """{student: the href of their feedback page, relative to the report ``dest``} for the pages that exist."""
    out = {}
    for student, page in pages.items():
        if page.exists():
            out[student] = Path(os.path.relpath(page.resolve(), Path(dest).resolve().parent)).as_posix()
    return out


def render_course(assignments: Sequence[tuple[str, float, list[StudentRow]]],
                  feedback: dict[tuple[str, str], str] | None = None, pages: dict[str, str] | None = None) -> str:
    """The course-wide page (``templates/report/course.html.j2``): per assignment (name, max points, its rows) the
    due date, the counts, the mean total, the penalties and manual grades; per student each assignment's total with
    its penalty and a link to the feedback page (``feedback``: {(assignment, student): href}); ``pages``:
    {assignment: the href of its report}."""
    feedback, pages = feedback or {}, pages or {}
    students = sorted({r.student for _, _, rows in assignments for r in rows})
    table = []
    summary = []
    for name, points, rows in assignments:
        graded = [r for r in rows if r.graded]
        dues = {when(r.recorded.duedate - r.recorded.extension if r.recorded.extension else r.recorded.duedate)
                for r in graded if r.recorded is not None and r.recorded.duedate is not None}
        totals = [r.total for r in graded if r.total is not None]
        summary.append({"name": name, "href": pages.get(name, ""), "due": ", ".join(sorted(dues)),
                        "points": fmt(points), "graded": len(graded), "without": len(rows) - len(graded),
                        "mean": f"{sum(totals) / len(totals):.1f}" if totals else "",
                        "penalties": sum(1 for r in graded if r.penalty), "manual": sum(1 for r in graded if r.manual)})
    by = {name: {r.student: r for r in rows} for name, _, rows in assignments}
    for student in students:
        cells, total, of = [], 0.0, 0.0
        for name, points, _ in assignments:
            r = by[name].get(student)
            of += points
            if r is None or not r.graded:
                cells.append({"text": "" if r is None else r.status.split(":")[0], "href": "", "penalty": False})
                continue
            total += r.total or 0.0
            text = fmt(r.total) + (f" (late {penalty_text(r)})" if r.penalty else "") + ("*" if r.manual else "")
            cells.append({"text": text, "href": feedback.get((name, student), ""), "penalty": bool(r.penalty)})
        table.append({"student": student, "cells": cells, "total": fmt(total), "of": fmt(of)})
    return _environment().get_template("course.html.j2").render(assignments=summary, students=table)
