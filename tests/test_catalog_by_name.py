"""A folder can never replace an exercise (issue 25.4): the attack as filed, graded for real.

On the main branch before this change, a returned workspace (``grader pack``'s zip, unzipped) that carried
its own ``exercise.toml``, ``probes.py`` and ``checks/conftest.py`` was graded against them when the panel
ran ``grader submit attention`` beside it: 22/22 for a file that returns zeros, and the conftest ran in
the judge, on the host. Now the exercise comes from the catalog by name, its fingerprint is checked
again by the judge before any conftest loads, and a batch node's copy is checked the same way.
"""

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.jobs import Job, grade_job
from grader.batch.store import Key
from grader.catalogs import NotInCatalog, installed
from grader.cli import main
from grader.exercise import load_exercise
from grader.host.grading import grade
from grader.practice.pack import pack_exercise
from grader.practice.target import resolve_target

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTION = (TOY / "solution.py").read_bytes()

ZEROS = '''
import torch
from torch import nn


def scaled_dot_product_attention(q, k, v, mask=None):
    weights = torch.zeros(*q.shape[:-1], k.shape[-2], dtype=q.dtype)
    return weights @ v, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        self.n_heads = n_heads

    def forward(self, query, key, value, mask=None):
        b, length, d = query.shape
        return torch.zeros(b, length, d), torch.zeros(b, self.n_heads, length, key.shape[1])
'''


def conftest_writing(marker: Path) -> str:
    """A conftest that leaves a file behind if it is ever imported: the proof that it ran in the judge."""
    return f"from pathlib import Path\nPath({str(marker)!r}).write_text('the candidate conftest ran')\n"


@pytest.fixture
def returned(tmp_path) -> tuple[Path, Path]:
    """The candidate's returned workspace, unzipped into ``returned/``, and the file its conftest would write."""
    pack_exercise(load_exercise("attention"), tmp_path / "attention.zip")
    with zipfile.ZipFile(tmp_path / "attention.zip") as zf:
        zf.extractall(tmp_path / "returned")
    ws = tmp_path / "returned" / "attention"
    marker = tmp_path / "CONFTEST-RAN"
    (ws / "attention.py").write_text(ZEROS)
    shutil.copy(installed().exercises / "attention" / "exercise.toml", ws / "exercise.toml")
    (ws / "probes.py").write_text("def anything(*args, **kwargs):\n    return 0\n")
    (ws / "checks").mkdir()
    (ws / "checks" / "conftest.py").write_text(conftest_writing(marker))
    (ws / "checks" / "test_all.py").write_text(
        "import pytest\n\n\n@pytest.mark.points(22)\ndef test_everything():\n    \"\"\"Everything\"\"\"\n")
    return ws, marker


def test_a_returned_workspace_with_its_own_exercise_is_graded_against_the_catalogs(returned, tmp_path,
                                                                                  monkeypatch):
    ws, marker = returned
    monkeypatch.chdir(ws.parent)  # the folder it was unzipped into
    r = CliRunner().invoke(main, ["submit", "attention", "--sandbox", "local", "--no-history", "--audience", "panel",
                                  "--json", tmp_path / "r.json"], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "r.json").read_text())
    catalog = installed().load("attention")
    assert report["environment"]["exercise_fingerprint"] == catalog.fingerprint
    assert report["environment"]["submission_path"] == str(ws / "attention.py")  # the candidate's file, theirs
    assert report["max_score"] == 22 and report["score"] < 22  # zeros fail the catalog's checks
    assert "Everything" not in {c["name"] for c in report["checks"]}
    assert not marker.exists(), "the candidate's conftest ran in the judge"


@pytest.mark.parametrize("argv", [[], ["attention.py"]])
def test_inside_the_returned_workspace_the_marker_names_the_catalogs_exercise(returned, argv):
    ws, _ = returned
    target = resolve_target(*(argv + [None, None])[:2], cwd=ws, catalog=installed())
    assert target.exercise.root == installed().exercises / "attention"
    assert target.submission == ws / "attention.py"


def test_the_returned_folder_named_as_an_exercise_is_refused_naming_exercise_root(returned):
    ws, marker = returned
    with pytest.raises(NotInCatalog) as refused:
        resolve_target(str(ws), str(ws / "attention.py"), cwd=ws.parent, catalog=installed())
    assert "--exercise-root" in refused.value.hint
    assert not marker.exists()


def test_an_exercise_whose_files_change_after_loading_is_refused_before_its_conftest_loads(tmp_path):
    """The judge re-reads the exercise's files in its own process: it compares their fingerprint first."""
    folder = shutil.copytree(TOY, tmp_path / "catalog" / "toy")
    ex = load_exercise(folder)
    assert ex.fingerprint  # taken now, as a command takes it when it loads the exercise
    marker = tmp_path / "CONFTEST-RAN"
    (folder / "checks" / "conftest.py").write_text(conftest_writing(marker))
    report = grade(ex, TOY / "solution.py", sandbox="local")
    assert not report.graded and "changed after it was loaded" in report.not_graded_reason
    assert not marker.exists()


def test_a_batch_node_whose_copy_of_the_exercise_differs_refuses_the_job(tmp_path):
    """A Ray node finds the exercise at the same path; its copy is compared with the driver's fingerprint."""
    folder = shutil.copytree(TOY, tmp_path / "node" / "toy")
    marker = tmp_path / "CONFTEST-RAN"
    driver = load_exercise(TOY).fingerprint
    (folder / "checks" / "conftest.py").write_text(conftest_writing(marker))  # the node's copy drifted
    job = Job(Key("ann", "toy", "0" * 64, "v"), str(folder), "toy.py", SOLUTION, sandbox="local",
              fingerprint=driver)
    report = grade_job(job)
    assert not report.graded and "differs from the catalog's" in report.not_graded_reason
    assert not marker.exists()


def test_a_batch_grades_a_returned_folder_against_the_catalog_and_never_loads_its_files(tmp_path):
    """The same folder in a panel's SUBMISSIONS: only <candidate>/<exercise>/<file>.py is read."""
    folder = tmp_path / "submissions" / "ann" / "toy"
    shutil.copytree(TOY, folder)  # exercise.toml, probes.py, checks/: the candidate's own exercise
    marker = tmp_path / "CONFTEST-RAN"
    (folder / "checks" / "conftest.py").write_text(conftest_writing(marker))
    (folder / "checks" / "test_toy.py").write_text(
        "import pytest\n\n\n@pytest.mark.points(99)\ndef test_everything():\n    \"\"\"Everything\"\"\"\n")
    (folder / "toy.py").write_text("def scale(x, factor):\n    return x * 0\n")
    (folder / "solution.py").unlink()  # toy.py, the name the exercise expects, is the one read anyway
    r = CliRunner().invoke(main, ["batch", str(tmp_path / "submissions"), "--output", str(tmp_path / "out"),
                                  "--sandbox", "local", "--jobs", "1", "--exercise-root", str(TOY.parent),
                                  "--only", "toy"], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    [row] = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert row["max_score"] == 6 and row["score"] < 6  # the catalog's toy, not the folder's 99-point check
    assert not marker.exists()
