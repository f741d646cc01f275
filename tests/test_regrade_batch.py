"""`grader regrade OUTDIR`: a whole batch folder regraded under its recorded conditions, row by row.

One small batch (local sandbox, toy exercise, two candidates) is run per module;
each test that edits something works on its own copy. The evidence is the
folder's SQLite store; the exported ``<candidate>/<exercise>.json`` is checked
against it too.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.store import Key, Store
from grader.cli import main
from grader.evidence.regrade_batch import Outcome, regrade_batch
from tests.conftest import REPO, TOY

SOLUTIONS = REPO / "tests" / "fixtures" / "toy_solutions" / "toy"
ROOT = TOY.parent
CHECK = "Scales a small tensor"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def folder_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """(submissions, out): ann's correct solution and ben's forbidden-API mutant, graded once."""
    root = tmp_path_factory.mktemp("batch")
    subs, out = root / "subs", root / "out"
    for name, src in {"ann": SOLUTIONS / "toy.py", "ben": SOLUTIONS / "mutants" / "uses_mul.py"}.items():
        (subs / name / "toy").mkdir(parents=True)
        shutil.copy(src, subs / name / "toy" / "toy.py")
    r = invoke("batch", subs, "--out", out, "--sandbox", "local", "--jobs", "2", "--seed", "7",
               "--exercise-root", ROOT)
    assert r.exit_code == 0, r.output
    return subs, out


@pytest.fixture
def copy(batch, tmp_path):
    subs, out = batch
    shutil.copytree(subs, tmp_path / "subs")
    shutil.copytree(out, tmp_path / "out")
    return tmp_path / "subs", tmp_path / "out"


def regrade_folder(subs, out):
    return invoke("regrade", out, "--submissions", subs, "--exercises", ROOT, "--jobs", "2", "--sandbox", "local")


def test_a_fresh_batch_matches_and_its_folder_is_left_byte_for_byte(batch):
    subs, out = batch
    before = folder_digest(out)
    r = regrade_folder(subs, out)
    assert r.exit_code == 0, r.output
    assert "ann toy: matches" in r.output and "ben toy: matches" in r.output
    assert "2 stored rows: 2 matches." in r.output
    assert folder_digest(out) == before


def test_an_edited_outcome_in_the_store_names_candidate_exercise_and_check(copy):
    subs, out = copy
    db = sqlite3.connect(out / "grader.sqlite")
    (text,) = db.execute("SELECT report FROM gradings WHERE candidate='ann'").fetchone()
    data = json.loads(text)
    check = next(c for c in data["checks"] if c["name"] == CHECK)
    check["status"], check["score"] = "failed", 0.0
    db.execute("UPDATE gradings SET report=? WHERE candidate='ann'", (json.dumps(data),))
    db.commit()
    db.close()
    r = regrade_folder(subs, out)
    assert r.exit_code == 5, r.output
    mismatches = [line for line in r.output.splitlines() if "mismatch:" in line]
    assert any(line.startswith("ann toy: mismatch:") and CHECK in line for line in mismatches), r.output
    assert "ben toy: matches" in r.output


def test_an_edited_export_disagrees_with_the_store(copy):
    subs, out = copy
    data = json.loads((out / "candidates" / "ben" / "toy.json").read_text())
    check = next(c for c in data["checks"] if c["name"] == CHECK)
    check["status"], check["score"] = "passed", check["max_score"]
    (out / "candidates" / "ben" / "toy.json").write_text(json.dumps(data))
    r = regrade_folder(subs, out)
    assert r.exit_code == 5, r.output
    assert any(line.startswith("ben toy: mismatch: candidates/ben/toy.json disagrees with the store") and CHECK in line
               for line in r.output.splitlines()), r.output


def test_a_submission_edited_after_the_batch_is_changed_not_graded(copy):
    subs, out = copy
    with open(subs / "ann" / "toy" / "toy.py", "a") as f:
        f.write("# edited after the batch\n")
    result = regrade_batch(out, submissions=subs, exercise_root=ROOT, sandbox="local")
    ann = next(row for row in result.rows if row.candidate == "ann")
    assert ann.outcome is Outcome.CHANGED and "changed since the batch" in ann.problem
    r = regrade_folder(subs, out)
    assert r.exit_code == 5 and "ann toy: changed:" in r.output, r.output


def test_a_missing_submission_and_a_stored_not_graded_row(copy):
    subs, out = copy
    (subs / "ben" / "toy" / "toy.py").unlink()
    store = Store(out)
    store.save_not_graded(Key("cal", "toy", "0" * 64, "v"), "cal/toy/toy.py", "the engine went away", 3)
    store.close()
    result = regrade_batch(out, submissions=subs, exercise_root=ROOT, sandbox="local")
    outcomes = {row.candidate: row.outcome for row in result.rows}
    assert outcomes == {"ann": Outcome.MATCHES, "ben": Outcome.MISSING, "cal": Outcome.SKIPPED}
    assert not result.all_match


def test_without_submissions_the_folder_is_asked_for(batch):
    _, out = batch
    r = invoke("regrade", out, "--exercises", ROOT)
    assert r.exit_code == 2 and "--submissions" in r.output, r.output


def test_a_folder_that_is_no_batch_is_refused(tmp_path):
    r = invoke("regrade", tmp_path, "--submissions", tmp_path)
    assert r.exit_code == 2 and "grader.sqlite" in r.output, r.output
