"""AUTHORING.md's exercise.toml reference is the models' own: every key, its type, default and meaning.

The table between the two ``exercise.toml keys`` markers is rendered here from
grader/exercise.py's pydantic models (their ``Field(description=...)``), so a key added
to a model without a word in the guide fails this test. To rewrite the table after
changing a model::

    GRADER_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_authoring_doc.py
"""

from __future__ import annotations

import enum
import os
import re
import typing
from pathlib import Path

import pytest
from pydantic_core import PydanticUndefined

from grader.exercise import ExerciseConfig

GUIDE = Path(__file__).resolve().parent.parent / "AUTHORING.md"
BEGIN = "<!-- exercise.toml keys: rendered from grader/exercise.py by tests/test_authoring_doc.py -->"
END = "<!-- end of exercise.toml keys -->"


def _type(annotation) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f'`"{a}"`' for a in args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f'`"{m.value}"`' for m in annotation)
    if origin is list:
        return f"list of {_type(args[0])}s"
    if origin is dict:
        return f"table: {_type(args[0])} -> {_type(args[1])}"
    return {str: "string", int: "integer", float: "number", bool: "true \\| false"}[annotation]


def _default(field) -> str:
    if field.default_factory is not None:
        return f"`{field.default_factory()!r}`".replace("'", '"')
    if field.default is PydanticUndefined:
        return "**required**"
    value = field.default.value if isinstance(field.default, enum.Enum) else field.default
    return f'`"{value}"`' if isinstance(value, str) else f"`{value!r}`"


def _bounds(field) -> str:
    words = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    found = [f"{words[k]} {getattr(m, k)}" for m in field.metadata for k in words if getattr(m, k, None) is not None]
    found += [f"matches `{m.pattern}`" for m in field.metadata if getattr(m, "pattern", None)]
    return f" ({', '.join(found)})" if found else ""


def rendered_table() -> str:
    """The guide's table of exercise.toml keys, one row per field of every section's model."""
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for section, field in ExerciseConfig.model_fields.items():
        model = field.annotation
        for key, sub in model.model_fields.items():
            meaning = " ".join((sub.description or "").split())
            assert meaning, f"[{section}] {key} has no description in grader/exercise.py"
            rows.append(f"| `[{section}] {key}` | {_type(sub.annotation)}{_bounds(sub)} | {_default(sub)} | "
                        f"{meaning.replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def test_every_exercise_toml_key_is_in_the_guide_as_the_models_say():
    text = GUIDE.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"AUTHORING.md has lost the markers around its table: {BEGIN}"
    before, rest = text.split(BEGIN, 1)
    current, after = rest.split(END, 1)
    want = rendered_table()
    if current.strip() != want and os.environ.get("GRADER_UPDATE_GOLDEN") == "1":
        GUIDE.write_text(f"{before}{BEGIN}\n{want}\n{END}{after}", encoding="utf-8")
        pytest.skip("AUTHORING.md's table rewritten")
    assert current.strip() == want, ("AUTHORING.md's exercise.toml table is not the models' "
                                     "(GRADER_UPDATE_GOLDEN=1 rewrites it):\n" + want)


def test_the_table_has_a_row_for_every_key_of_every_section():
    """The rendering itself misses nothing: each section's every field, including the nested kernels table."""
    keys = re.findall(r"^\| `\[(\w+)\] (\w+)`", rendered_table(), flags=re.M)
    want = [(s, k) for s, f in ExerciseConfig.model_fields.items() for k in f.annotation.model_fields]
    assert keys == want and ("forbidden", "kernels") in keys and ("limits", "result_mb") in keys


def test_the_guides_commands_and_files_exist():
    """Every `grader <command>` the guide names is a command, and every repository path it names exists."""
    from grader.cli import COMMANDS

    text = GUIDE.read_text(encoding="utf-8")
    commands = set(re.findall(r"\bgrader (\w+)", text)) - {"validate's"}
    assert commands and commands <= set(COMMANDS), commands - set(COMMANDS)
    root = GUIDE.parent
    paths = set(re.findall(r"`((?:grader|tests|scripts|bench)/[\w/]+\.(?:py|sh))`", text))
    assert paths and [p for p in sorted(paths) if not (root / p).is_file()] == []
