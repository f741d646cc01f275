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
from grader.batch.regrade import Outcome, regrade_batch
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
    r = invoke("batch", subs, "--output", out, "--sandbox", "local", "--jobs", "2", "--seed", "7",
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
    return invoke("regrade", out, subs, "--exercises", ROOT, "--jobs", "2", "--sandbox", "local")


def test_a_fresh_batch_matches_and_its_folder_is_left_byte_for_byte(batch):
    subs, out = batch
    before = folder_digest(out)
    r = regrade_folder(subs, out)
    assert r.exit_code == 0, r.output
    assert "ann toy: matches" in r.output and "ben toy: matches" in r.output
    assert "2 stored rows: 2 matches." in r.output
    assert folder_digest(out) == before


def edit_stored_report(out: Path, candidate: str, edit) -> dict:
    """Change one stored report in place, as someone with the folder (but not the panel's key) could."""
    db = sqlite3.connect(out / "grader.sqlite")
    (text,) = db.execute("SELECT report FROM gradings WHERE candidate=?", (candidate,)).fetchone()
    data = json.loads(text)
    edit(data)
    db.execute("UPDATE gradings SET report=? WHERE candidate=?", (json.dumps(data), candidate))
    db.commit()
    db.close()
    return data


def fail_the_check(data: dict) -> None:
    """A careful edit: the check failed, and the score lowered to agree with it."""
    check = next(c for c in data["checks"] if c["name"] == CHECK)
    check["status"], check["score"] = "failed", 0.0
    data["score"] -= check["max_score"]


def full_marks(data: dict) -> None:
    """The attack: ben's forbidden-API file given every check and no flag, consistently."""
    for c in data["checks"]:
        c["status"], c["score"], c["message"], c["forbidden"] = "passed", c["max_score"], "", []
    data["score"], data["forbidden"], data["findings"] = data["max_score"], [], []


def test_an_edited_outcome_in_the_store_is_edited_and_names_candidate_exercise_and_check(copy):
    subs, out = copy
    edit_stored_report(out, "ann", fail_the_check)
    r = regrade_folder(subs, out)
    assert r.exit_code == 5, r.output
    assert "ann toy: edited: the stored row does not match its signature" in r.output
    mismatches = [line for line in r.output.splitlines() if "mismatch:" in line]
    assert any(line.startswith("ann toy: mismatch:") and CHECK in line for line in mismatches), r.output
    assert "ben toy: matches" in r.output and "1 matches, 1 edited" in r.output


def test_a_stored_headline_that_disagrees_with_its_checks_is_named(copy):
    subs, out = copy
    edit_stored_report(out, "ben", lambda data: data.update(score=data["max_score"], forbidden=[]))
    result = regrade_batch(out, submissions=subs, exercise_root=ROOT, sandbox="local")
    ben = next(row for row in result.rows if row.candidate == "ben")
    assert ben.outcome is Outcome.EDITED and "does not match its signature" in ben.problem
    assert "score is 6 but its checks add up to 1" in ben.problem, ben.problem
    assert "forbidden is missing torch.mul but checks[0] (Scales a small tensor) records a call to it" in ben.problem


def test_an_edited_row_is_not_republished_and_regrade_says_so(copy):
    """The attack on the store: ben's 1/3 made 3/3 with no flag in grader.sqlite, consistently. The next
    batch run does not republish it (every export is rebuilt from the store): it sets the row aside and
    grades the file again; `grader regrade OUTDIR` then names the row that was edited."""
    subs, out = copy
    edit_stored_report(out, "ben", full_marks)
    r = invoke("batch", subs, "--output", out, "--sandbox", "local", "--jobs", "2", "--seed", "7", "--exercise-root", ROOT)
    assert r.exit_code == 0, r.output
    assert "store: ben/toy: the stored result does not match its signature" in " ".join(r.output.split())
    assert "Graded now: 1, from earlier runs: 1" in r.output  # ben graded again, ann reused
    rows = {json.loads(line)["candidate"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}
    assert (rows["ben"]["score"], rows["ben"]["max_score"], rows["ben"]["flags"]) == (1, 6, ["forbidden", "not_isolated"])
    assert "the stored result does not match its signature" in (out / "index.html").read_text()
    db = sqlite3.connect(out / "grader.sqlite")
    assert db.execute("SELECT candidate, seal FROM set_aside").fetchall() == [("ben", "edited")]
    db.close()
    r = regrade_folder(subs, out)
    assert r.exit_code == 5, r.output
    assert "ben toy: edited: a batch run set this stored row aside (it does not match its signature" in r.output
    assert "ben toy: matches" in r.output and "ann toy: matches" in r.output  # the row graded again stands


def test_an_unsigned_store_is_regraded_not_believed(copy):
    """A store from before signing (or from a grader without the key): nothing edited can be told, so nothing
    is believed: the next run grades every row again and says why, and regrade notes it."""
    subs, out = copy
    db = sqlite3.connect(out / "grader.sqlite")
    db.execute("UPDATE gradings SET signature=NULL")
    db.commit()
    db.close()
    result = regrade_batch(out, submissions=subs, exercise_root=ROOT, sandbox="local")
    assert [row.outcome for row in result.rows] == [Outcome.MATCHES, Outcome.MATCHES]
    assert all("the stored row is unsigned" in row.notes[0] for row in result.rows)
    r = invoke("batch", subs, "--output", out, "--sandbox", "local", "--jobs", "2", "--seed", "7", "--exercise-root", ROOT)
    assert r.exit_code == 0, r.output
    assert "Graded now: 2, from earlier runs: 0" in r.output
    assert "2 stored results not vouched for by this machine's key (unsigned" in " ".join(r.output.split())


def test_an_edited_export_disagrees_with_the_store(copy):
    subs, out = copy
    data = json.loads((out / "candidates" / "ben" / "toy.json").read_text())
    full_marks(data)
    (out / "candidates" / "ben" / "toy.json").write_text(json.dumps(data))
    r = regrade_folder(subs, out)
    assert r.exit_code == 5, r.output
    lines = [line for line in r.output.splitlines()
             if line.startswith("ben toy: mismatch: candidates/ben/toy.json disagrees with the store")]
    assert any(CHECK in line for line in lines) and any("score: 1 vs 6" in line for line in lines), r.output
    assert any("flags: forbidden vs (none)" in line for line in lines), r.output


def test_an_export_whose_score_disagrees_with_its_checks_is_named(copy):
    subs, out = copy
    data = json.loads((out / "candidates" / "ben" / "toy.json").read_text())
    data["score"] = data["max_score"]
    (out / "candidates" / "ben" / "toy.json").write_text(json.dumps(data))
    r = regrade_folder(subs, out)
    assert r.exit_code == 5, r.output
    assert ("ben toy: mismatch: candidates/ben/toy.json the report was edited: score is 6 but its checks add up "
            "to 1") in r.output


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
    assert r.exit_code == 2 and "grader regrade OUTDIR SUBMISSIONS" in r.output, r.output


def test_a_folder_that_is_no_batch_is_refused(tmp_path):
    r = invoke("regrade", tmp_path, tmp_path)
    assert r.exit_code == 2 and "grader.sqlite" in r.output, r.output


def test_an_edited_summary_csv_or_results_jsonl_disagrees_with_the_store(copy):
    """The tables a panel opens in a spreadsheet are evidence too: ben's 1/6 with a forbidden flag made 6/6."""
    import csv

    subs, out = copy
    with open(out / "summary.csv", newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    for row in rows[1:]:
        if row[0] == "ben":
            row[head.index("score")], row[head.index("flags")] = "6", ""
    with open(out / "summary.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for line in lines:
        if line["candidate"] == "ben":
            line["score"] = 6.0
    (out / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = regrade_folder(subs, out)
    assert r.exit_code == 5, r.output
    assert "ben toy: mismatch: summary.csv disagrees with the store: score: 1 vs 6" in r.output
    assert "ben toy: mismatch: summary.csv disagrees with the store: flags: forbidden not_isolated vs (none)" in r.output
    assert "ben toy: mismatch: results.jsonl disagrees with the store: score: 1 vs 6" in r.output
    assert "ann toy: matches" in r.output
