"""The README's table of exercises is the catalogue a panel reads first: it lists every exercise, and each
row says what that exercise's ``exercise.toml`` says (an exercise added without a row, or a level changed in
one place only, would mislead the reader who picks exercises from it)."""

from pathlib import Path

from grader.exercise import load_exercise
from grader.host.validation import all_exercise_names

README = Path(__file__).resolve().parents[1] / "README.md"
LEVELS = ("mid", "senior", "principal")


def table_rows() -> list[list[str]]:
    """The cells of each row of the table under '## Exercises' (header and rule left out)."""
    section = README.read_text().split("\n## Exercises\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


def test_every_exercise_has_one_row_and_every_row_an_exercise():
    names = [row[0].strip("`") for row in table_rows()]
    assert sorted(names) == all_exercise_names(), "README's table and exercises/ disagree"


def test_each_row_says_what_its_exercise_toml_says():
    for name, title, level, submission, gpu in table_rows():
        config = load_exercise(name.strip("`")).config.exercise
        assert title.startswith(config.title), f"{name}: title {title!r}, exercise.toml says {config.title!r}"
        assert (level, submission, gpu) == (config.level, config.submission, config.gpu.value), name


def test_rows_go_by_level_then_name():
    keys = [(LEVELS.index(row[2]), row[0]) for row in table_rows()]
    assert keys == sorted(keys), "README's table: mid, then senior, then principal, each by name"
