"""One exception root for everything the grader reports to a user.

Like click's ``ClickException``, each class carries the exit status the CLI uses,
so "you asked for something wrong" (usage), "we could not grade, rerun" (infra)
and "graded, whatever the score" (exit 0) never blur together.
"""

from __future__ import annotations

EXIT_GRADED = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_INFRA = 3
EXIT_INVALID = 4  # `grader validate`: an exercise's checks do not prove what they must
EXIT_MISMATCH = 5  # `grader regrade` / `bundle verify`: the evidence does not match what was recorded
EXIT_UNCONFIRMED = 6  # `bundle verify`: nothing found edited, but no signature of this key vouches for it
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports any tool it stopped
EXIT_CLOSED_PIPE = 141  # the reader of the output went away (`| head`): 128 + SIGPIPE, likewise


class GraderError(Exception):
    """Root of every error the grader explains to a user."""

    exit_code = EXIT_INTERNAL
    #: What the user can do about it; printed under the message.
    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class UsageError(GraderError):
    """The user asked for something that cannot be done as asked (bad path, bad option)."""

    exit_code = EXIT_USAGE


class ExerciseError(UsageError):
    """An exercise folder or its exercise.toml is malformed; names the file and the key."""


class InfraError(GraderError):
    """The grading machinery failed (no engine, no image, judge died): not graded, rerun."""

    exit_code = EXIT_INFRA
    hint = "Nothing was scored. Fix the problem above and run the same command again."


def describe_invalid(heading: str, err, *, show_input: bool = True, limit: int | None = None) -> str:
    """A pydantic ``ValidationError`` as ``heading`` then one ``[key] message`` line per error.

    The key names the field the way hypothesis names a bad argument; ``show_input``
    adds the offending value (fine for a config file, too long for a whole report).
    """
    lines = [heading]
    for e in err.errors()[:limit]:
        key = ".".join(str(p) for p in e["loc"]) or "(document)"
        got = f" (got {e['input']!r})" if show_input and e["type"] != "missing" else ""
        lines.append(f"  [{key}] {e['msg']}{got}")
    return "\n".join(lines)
