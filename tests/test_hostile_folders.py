"""A submissions folder is untrusted: links, FIFOs, devices, huge files and odd names never stop or fool a batch.

Each test is an attack from issue 13 item 5. No Docker: discovery is called directly,
and whole batches run with the scripted stand-in engine of tests/test_batch_runner.py,
then publish into a real output folder. A test that would hang on a regression
(a FIFO, a quadratic similarity pass) runs its work in a thread with a generous
deadline, so it fails instead of hanging the suite.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.layout import discover
from grader.batch.model import RowStatus
from grader.batch.publish import publish
from grader.batch.runner import run_batch
from grader.batch.similarity import Submission, similar_pairs
from grader.batch.store import FILENAME, Store
from grader.cli import main
from grader.errors import UsageError
from grader.exercise import load_exercise, resolve_submission
from grader.host.grading import MAX_SUBMISSION_BYTES, read_submission
from tests.conftest import REPO, TOY
from tests.test_batch_runner import FakeEngine

ANSWER = REPO / "solutions" / "attention" / "attention.py"  # the reference: 22/22 if a link to it were read
KNOWN = {"attention": "attention.py", "toy": "toy.py"}
GOOD = "def scale(x, k):\n    return x * k\n"


def finishes(work, timeout: float = 120.0):
    """``work()``'s result (or its exception), or a failure if it has not returned within ``timeout``."""
    out: dict = {}

    def run():
        try:
            out["result"] = work()
        except BaseException as e:  # re-raised in the test's thread
            out["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"did not finish within {timeout:g} s"
    if "error" in out:
        raise out["error"]
    return out["result"]


def rows(layout) -> dict:
    return {(f.candidate, f.exercise): f for f in layout.found}


def put(root: Path, rel: str, text: str = GOOD) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_link_to_the_reference_solution_is_unreadable_not_graded(tmp_path):
    (tmp_path / "eve" / "attention").mkdir(parents=True)
    os.symlink(ANSWER, tmp_path / "eve" / "attention" / "attention.py")  # what `unzip`/`tar x` recreate
    found = rows(discover(tmp_path, known=KNOWN))["eve", "attention"]
    assert found.problem is RowStatus.UNREADABLE and found.source is None
    assert "symbolic link" in found.reason


def test_linked_candidate_and_exercise_folders_are_not_followed(tmp_path):
    put(tmp_path, "ann/attention/attention.py")
    os.symlink(tmp_path / "ann", tmp_path / "bob")  # bob's folder is ann's
    (tmp_path / "cid").mkdir()
    os.symlink(ANSWER.parent, tmp_path / "cid" / "attention")  # cid's exercise folder is solutions/attention/
    found = rows(discover(tmp_path, known=KNOWN))
    assert found["ann", "attention"].problem is None
    for who in ("bob", "cid"):
        assert found[who, "attention"].problem is RowStatus.UNREADABLE and found[who, "attention"].source is None
        assert "symbolic link" in found[who, "attention"].reason


def test_a_folder_swapped_for_a_link_after_listing_is_still_not_followed(tmp_path):
    """The read walks the folders itself, refusing a link at every step, not just the last one."""
    from grader.userfile import Unreadable, read_user_file

    put(tmp_path, "solutions/attention.py", "SECRET = 1\n")
    os.symlink(tmp_path / "solutions", tmp_path / "subs_eve")  # as if eve/attention/ became a link
    with pytest.raises(Unreadable, match="through a symbolic link"):
        read_user_file(tmp_path / "subs_eve" / "attention.py", limit=100, under=tmp_path)


def test_a_fifo_is_unreadable_and_discovery_returns(tmp_path):
    (tmp_path / "eve" / "attention").mkdir(parents=True)
    fifo = tmp_path / "eve" / "attention" / "attention.py"
    os.mkfifo(fifo)
    put(tmp_path, "ann/attention/attention.py")
    try:
        found = rows(finishes(lambda: discover(tmp_path, known=KNOWN), timeout=60))
    finally:  # on a regression a reader is blocked on the FIFO: give it an end of file
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert found["eve", "attention"].problem is RowStatus.UNREADABLE and "FIFO" in found["eve", "attention"].reason
    assert found["ann", "attention"].problem is None  # the batch goes on


def test_dev_zero_is_unreadable_through_a_link_or_as_a_device_node(tmp_path):
    (tmp_path / "eve" / "attention").mkdir(parents=True)
    os.symlink("/dev/zero", tmp_path / "eve" / "attention" / "attention.py")
    (tmp_path / "dan" / "attention").mkdir(parents=True)
    try:
        os.mknod(tmp_path / "dan" / "attention" / "attention.py", stat.S_IFCHR | 0o644, os.makedev(1, 5))
    except (PermissionError, AttributeError):
        pytest.skip("creating a device node needs root")
    found = rows(finishes(lambda: discover(tmp_path, known=KNOWN), timeout=60))
    eve = found["eve", "attention"]
    assert eve.problem is RowStatus.UNREADABLE and "symbolic link" in eve.reason
    assert found["dan", "attention"].problem is RowStatus.UNREADABLE
    assert "character device" in found["dan", "attention"].reason


def test_an_oversize_file_is_unreadable_with_its_size(tmp_path):
    size = MAX_SUBMISSION_BYTES + 1
    put(tmp_path, "eve/attention/attention.py", "#" * size)
    found = rows(discover(tmp_path, known=KNOWN))["eve", "attention"]
    assert found.problem is RowStatus.UNREADABLE and found.source is None
    assert f"is {size} bytes; the limit is {MAX_SUBMISSION_BYTES}" in found.reason


@pytest.fixture
def toy():
    return {"toy": load_exercise(TOY)}


def batch_and_publish(subs: Path, out: Path, exercises) -> tuple:
    """A whole batch, graded by the stand-in engine, published while its store is open (as `grader batch` does)."""
    out.mkdir(exist_ok=True)
    store = Store(out)
    try:
        result = run_batch(subs, store, FakeEngine(), exercises=exercises, sandbox="local")
        publish(result, out, exercises)
    finally:
        store.close()
    return result, out


@pytest.mark.parametrize("name", [FILENAME + "-wal", FILENAME + "-shm", FILENAME, "index.html", "summary.csv",
                                  "candidates"])
def test_a_candidate_named_like_an_output_file_still_publishes(tmp_path, toy, name):
    put(tmp_path / "subs", f"{name}/toy/toy.py")
    put(tmp_path / "subs", "ann/toy/toy.py")
    result, out = batch_and_publish(tmp_path / "subs", tmp_path / "out", toy)
    assert {r.candidate: r.status for r in result.rows} == {name: RowStatus.GRADED, "ann": RowStatus.GRADED}
    assert (out / "candidates" / name / "toy.html").is_file() and (out / "index.html").is_file()
    assert (out / FILENAME).is_file() and (out / "summary.csv").read_text().count("\n") == 3


def test_odd_names_are_layout_problems_and_the_batch_publishes(tmp_path, toy):
    subs = tmp_path / "subs"
    put(subs, "ann/toy/toy.py")
    odd = {"new\nline": "control", "bell\x07": "control", "back\\slash": "separator", "x" * 101: "101 characters",
           "rlo\u202etxt": "invisible"}
    for name in odd:
        put(subs, f"{name}/toy/toy.py")
    os.makedirs(os.fsencode(subs) + b"/not-utf8-\xff/toy")  # bytes no UTF-8 decoder accepts: SQLite cannot store them
    (Path(os.fsdecode(os.fsencode(subs) + b"/not-utf8-\xff/toy")) / "toy.py").write_text(GOOD)
    put(subs, "ann/toy/strange\x1b[2J/x.py")  # an odd exercise folder name
    result, out = batch_and_publish(subs, tmp_path / "out", toy)
    assert [r.candidate for r in result.rows] == ["ann"] and result.rows[0].status is RowStatus.GRADED
    problems = "\n".join(result.layout.problems)
    for why in [*odd.values(), "not valid UTF-8"]:
        assert why in problems
    assert "\x1b" not in problems and "\x07" not in problems and "\u202e" not in problems  # shown escaped
    assert (out / "index.html").is_file() and (out / "similarity.html").is_file()


def test_an_odd_file_name_is_an_unreadable_row(tmp_path, toy):
    put(tmp_path / "subs", "ann/toy/bad\rname.py")
    result, _ = batch_and_publish(tmp_path / "subs", tmp_path / "out", toy)
    (row,) = result.rows
    assert row.status is RowStatus.UNREADABLE and "\\x0d" in row.reason and "\r" not in row.reason


def test_similarity_of_two_identical_1_mb_files_finishes():
    """Outcome, not time: the quadratic pass never finished this; the deadline only turns a hang into a failure."""
    unit = "def f{n}(x, y):\n    z = x * {n} + y\n    return [z for _ in range(3)] if z else None\n\n"
    source, n = [], 0
    while sum(map(len, source)) < MAX_SUBMISSION_BYTES - 200:
        source.append(unit.format(n=n))
        n += 1
    text = "".join(source)
    subs = [Submission("ann", "toy", text, 1.0), Submission("bob", "toy", text, 1.0)]
    (pair,) = finishes(lambda: similar_pairs(subs, {}), timeout=300)
    assert (pair.a.candidate, pair.b.candidate, pair.similarity) == ("ann", "bob", 1.0)


# grader submit reads through the same function.
def test_submit_refuses_a_link_a_fifo_and_a_device(tmp_path):
    ex = load_exercise(TOY)
    link = tmp_path / "toy.py"
    os.symlink(REPO / "tests" / "fixtures" / "toy_solutions" / "toy" / "toy.py", link)
    with pytest.raises(UsageError, match="symbolic link"):
        resolve_submission(ex, link)
    with pytest.raises(UsageError, match="symbolic link"):
        resolve_submission(ex, tmp_path)  # a folder whose toy.py is a link
    with pytest.raises(UsageError, match="symbolic link"):
        read_submission(link)
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="FIFO"):
        finishes(lambda: read_submission(fifo), timeout=60)
    with pytest.raises(UsageError, match="character device"):
        finishes(lambda: read_submission(Path("/dev/zero")), timeout=60)


def test_the_submit_command_refuses_a_linked_file_before_grading(tmp_path):
    link = tmp_path / "mine.py"
    os.symlink(REPO / "tests" / "fixtures" / "toy_solutions" / "toy" / "toy.py", link)
    r = CliRunner().invoke(main, ["submit", str(TOY), str(link), "--exercise-root", str(TOY.parent), "--sandbox",
                                  "local", "--no-history"])
    assert r.exit_code == 2 and "symbolic link" in " ".join(r.output.split()), r.output
