"""Every ``grader ...`` command line written in README.md and docs/, read as the CLI's parser reads it.

:func:`command_lines` finds them (fenced blocks and inline code); :func:`check` parses one with click at
``--help`` level: the command (and sub-command) resolved, every option known and not a deprecated spelling,
every choice a real one, no extra argument. Nothing runs. A placeholder (``NAME``, ``DIR``, ``N``, ``...``,
``[SUBMISSION]``) is taken as a value a reader fills in: its type is not checked.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import click

REPO = Path(__file__).resolve().parent.parent
#: Where the documentation lives: the README and every page of docs/ (decisions included).
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^ {0,3}```[^\n]*\n(.*?)^ {0,3}```", re.S | re.M)
INLINE = re.compile(r"(?<!`)`([^`]+?)`(?!`)")  # may run over a line break, as Markdown's do
#: An option named alone in prose: ``--only NAME``.
OPTION = re.compile(r"^(--[a-z][a-z0-9-]*)(?:[ =]\S+)?$")
#: What ends a command in a shell line: a pipe, a list, a redirection, a subshell's end, a comment.
SHELL_ENDS = {"|", "||", "&&", ";", ">", ">>", "2>", "2>&1", ")", "&"}
#: A value a reader fills in: capitals, digits and _.:/-, at least one capital (DIR, N, HEAD_IP:6379, NAME,NAME).
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_.:/,\-]*$|^\.\.\.$|^\[.*\]$|^<.*>$|^[A-Z]+\.[a-z]+$")


@dataclass(frozen=True)
class Written:
    """One command line as written: where, and its words after ``grader``."""

    file: str
    line: int
    text: str
    argv: tuple[str, ...]


def command_lines(path: Path) -> list[Written]:
    """The ``grader`` command lines of one Markdown file: every line of a fenced block that runs grader, and
    every inline code span that starts with ``grader `` (prose naming a command)."""
    text = path.read_text(encoding="utf-8")
    name = str(path.relative_to(REPO))
    found: list[Written] = []
    for block in FENCE.finditer(text):
        first = text.count("\n", 0, block.start(1)) + 1
        pending, start = "", 0
        for offset, line in enumerate(block.group(1).split("\n")):
            start = start if pending else offset
            if line.endswith("\\"):  # continued on the next line: one command
                pending += line[:-1] + " "
                continue
            line, pending = pending + line, ""
            for argv in _grader_calls(line):
                found.append(Written(name, first + start, " ".join(line.split()), argv))
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # the blocks are read above
    for span in INLINE.finditer(prose):
        words = " ".join(span.group(1).split())
        if words.startswith("grader "):
            for argv in _grader_calls(words):
                found.append(Written(name, prose.count("\n", 0, span.start()) + 1, words, argv))
    return found


def named_options(path: Path) -> list[Written]:
    """Options named alone in inline code (``--solutions-root DIR``): ``argv`` is the option's name."""
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text(encoding="utf-8"))
    return [Written(str(path.relative_to(REPO)), prose.count("\n", 0, span.start()) + 1, span.group(1),
                    (m.group(1),))
            for span in INLINE.finditer(prose) if (m := OPTION.match(span.group(1)))]


def every_option() -> dict[str, bool]:
    """Every option of every grader command, and whether it is a current spelling (False: deprecated)."""
    from grader.cli import every_command, main

    found: dict[str, bool] = {"--help": True, "--version": True}  # click's own, on every command and the group

    def walk(cmd: click.Command) -> None:
        for param in cmd.params:
            if isinstance(param, click.Option):
                for opt in [*param.opts, *param.secondary_opts]:
                    current = not (param.hidden and param.expose_value is False)
                    found[opt] = found.get(opt, False) or current
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(main)
    for command in every_command().values():  # the group's own are imported on first use
        walk(command)
    return found


def _grader_calls(line: str) -> list[tuple[str, ...]]:
    """The argument lists of each ``grader`` call in one shell line: each simple command (between pipes,
    lists and redirections) whose program, after any ``VAR=value``, is ``grader``, ``.venv/bin/grader`` or
    ``python -m grader``. A line of prose in a block (a file tree naming ``grader batch``) is no call."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:  # an unclosed quote: prose, not a command
        return []
    commands: list[list[str]] = [[]]
    for word in words:
        if word in SHELL_ENDS:
            commands.append([])
        else:
            commands[-1].append(word)
    calls = []
    for command in commands:
        while command and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", command[0]):
            command = command[1:]
        if command and (command[0] == "grader" or command[0].endswith("/grader")):
            calls.append(tuple(command[1:]))
        elif command and re.fullmatch(r"(\S*/)?python3?(\.\d+)?", command[0]) and "-m" in command:
            at = command.index("-m")
            if command[at + 1:at + 2] == ["grader"]:
                calls.append(tuple(command[at + 2:]))
    return calls


def check(argv: tuple[str, ...]) -> str | None:
    """Why click would refuse ``grader ARGV`` at ``--help`` level, or None. Missing arguments are fine (prose
    names a command without them); what is written must exist."""
    from grader.cli import main

    cmd: click.Command = main
    ctx = click.Context(main, info_name="grader")
    args = [a for a in argv if not re.fullmatch(r"\.\.\.|\[.*\]", a)]
    while isinstance(cmd, click.Group):
        if not args or args[0].startswith("-"):
            return _parse(cmd, ctx, args)
        sub = cmd.get_command(ctx, args[0])
        if sub is None:
            return f"no command {args[0]!r} in `{ctx.command_path}`"
        ctx = click.Context(sub, info_name=args[0], parent=ctx)
        cmd, args = sub, args[1:]
    return _parse(cmd, ctx, args)


def _parse(cmd: click.Command, ctx: click.Context, args: list[str]) -> str | None:
    parser = cmd.make_parser(ctx)
    try:
        values, extra, order = parser.parse_args(args=list(args))
    except click.UsageError as e:  # an unknown option, an option without its value
        return e.format_message()
    for param in order:
        if isinstance(param, click.Option) and param.hidden and param.expose_value is False:
            return f"{param.opts[0]} is a deprecated spelling: write its new name"
    if extra:
        return f"unexpected extra argument(s) {extra!r}"
    for param in cmd.params:
        value = values.get(param.name)
        if value is None or isinstance(param.type, (click.types.StringParamType,)):
            continue
        for one in value if isinstance(value, (list, tuple)) else [value]:
            if not isinstance(one, str) or PLACEHOLDER.match(one) or param.type is click.BOOL:
                continue
            try:
                param.type.convert(one, param, ctx)
            except click.BadParameter as e:
                return f"{param.opts[0] if param.opts else param.name}: {e.format_message()}"
    return None
