"""What ``grader validate`` says about an exercise's mistake record (``mistakes.json``) after grading it.

With ``--record`` it writes the record of the flavour it graded (``cuda`` with ``--gpus``,
else ``cpu``) from what it just observed. Without, it compares the two and prints the
differences as warnings, never as a failure: CI validates under
load, where a mutant that times out once would fail a strict comparison for no fault of
the exercise. The test that keeps records current compares file hashes, which load cannot move.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from grader.authoring.findings import Finding, Rule
from grader.corpus import CorpusFile, corpus
from grader.exercise import Exercise
from grader.hindsight.records import RECORD_NAME, load_record
from grader.hindsight.recording import RecordRefused, build_record, drift, merge_record, mutant_signature, write_record
from grader.wire.grant import Flavor
from grader.untrusted import in_markup
from grader.host.validation import ExerciseValidation


def note_mistakes(console: Console, ex: Exercise, result: ExerciseValidation, solutions_dir: Path, *,
                  record: bool, flavor: Flavor = Flavor.CPU, said: list[Finding] = ()) -> None:
    """``said``: the authoring rules' findings, printed already: a record they found missing or stale is not
    told a second time here."""
    name = in_markup(ex.name)
    items = corpus(ex, solutions_dir, more=True)
    reference = items[0].path
    if record:
        try:
            fresh = build_record(ex, result.verdicts, result.problems, reference, flavor)
        except RecordRefused as e:
            console.print(f"[yellow]{name}: {RECORD_NAME} not written: {in_markup(e)}[/]", soft_wrap=True)
            return
        merged, dropped = merge_record(fresh, load_record(ex), ex, items)
        path = write_record(ex, merged)
        console.print(f"{name}: wrote the {flavor.value} record to {in_markup(path)}", soft_wrap=True)
        for line in dropped:
            console.print(f"[yellow]warning: {name}: {in_markup(line)}[/]", soft_wrap=True)
        return
    stored = load_record(ex)
    if any(f.rule in (Rule.RECORD_MISSING, Rule.RECORD_STALE, Rule.RECORD_FLAVOR) for f in said) and (
            stored is None or flavor not in stored.checks or not stored.current_for(ex)):
        return
    observed = [mutant_signature(CorpusFile("mutant", v.path, reference), v.report, flavor) for v in result.verdicts
                if v.kind == "mutant" and v.report.graded]
    lines = drift(stored, observed, flavor, exercise=ex.name)
    if stored is not None and not stored.current_for(ex):
        lines.insert(0, f"{RECORD_NAME} was recorded on other checks (fingerprint differs): "
                        f"gradings give no diagnosis until `grader validate {ex.name} --more --record` is run")
    for line in lines:
        console.print(f"[yellow]warning: {name}: {in_markup(line)}[/]", soft_wrap=True)

