"""Write everything a panel reads from a finished (or interrupted) batch into the output folder."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from grader.atomic import atomic_write
from grader.batch import exports
from grader.batch.items import analyse
from grader.batch.model import RowStatus
from grader.batch.published import Published
from grader.batch.runner import Batch
from grader.exercise import Exercise


def publish(batch: Batch, out: Path, exercises: dict[str, Exercise],
            published: dict[str, list[Published]] | None = None, notes: list[str] = ()) -> list[Path]:
    """summary.csv, results.jsonl, items.csv, index.html, similarity.html and the per-submission files.

    ``published`` holds each exercise's published answers (``grader.batch.published``) every submission
    is compared with; ``notes`` are lines for the panel page's problems box (published files not read).
    """
    from grader.batch.panel import render_panel
    from grader.batch.similarity import Submission, compare, pairs_by_candidate
    from grader.batch.similarity_page import render_similarity_html

    rows = batch.rows
    sources = {(f.candidate, f.exercise): f.source for f in batch.layout.found if f.source is not None}
    subs = [Submission(r.candidate, r.exercise, sources[(r.candidate, r.exercise)].decode("utf-8", "replace"), r.score)
            for r in rows if r.status is RowStatus.GRADED and (r.candidate, r.exercise) in sources]
    stubs = {name: ex.stub.read_text(encoding="utf-8") for name, ex in exercises.items()}
    similarity = compare(subs, stubs, published=published)  # under its time budget: the batch publishes anyway
    pairs = similarity.pairs
    paired = pairs_by_candidate(pairs)
    matched = similarity.published_by_row()
    for row in rows:
        if paired.get((row.candidate, row.exercise)) and "similar" not in row.flags:
            row.flags.append("similar")
        row.published = matched.get((row.candidate, row.exercise))
        kind = None if row.published is None else "published" if row.published.strong else "resembles_published"
        if kind is not None and kind not in row.flags:
            row.flags.append(kind)  # red only well above what the exercise's honest solutions reach

    exports.write_scorecards(rows, out)
    exports.write_summary_csv(rows, out / "summary.csv")
    exports.write_results_jsonl(rows, out / "results.jsonl")
    exports.write_items_csv(analyse(rows, list(batch.layout.exercises)), out / "items.csv")
    generated = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    titles = {name: exercises[name].title for name in batch.layout.exercises if name in exercises}
    with atomic_write(out / "similarity.html") as f:
        f.write(render_similarity_html(similarity))
    problems = [*batch.layout.problems, *batch.set_aside_lines(), *notes]
    with atomic_write(out / "index.html") as f:
        f.write(render_panel(rows, pairs, exercises=titles, generated_at=generated, problems=problems,
                             published=len(similarity.published), ignored=batch.layout.ignored))
    return [out / "index.html", out / "summary.csv", out / "results.jsonl", out / "items.csv", out / "similarity.html"]
