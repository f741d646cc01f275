"""``grader show NAME``: an exercise's prompt in the terminal, with what it is worth and what to edit.

The prompt is shown as a workspace holds it (``grader init NAME``), its commands made to run there.
The prose is rendered as Markdown, wrapped to the terminal. Code blocks never are: a
command or an example cut mid-expression cannot be copied, so each block is printed exactly as the
author wrote it, one source line per output line, whatever the width, piped or not.
"""

from __future__ import annotations

import re

import click

from grader.cli.options import exercise_root_option

#: A fenced code block's opening or closing line: ``` or ~~~, three or more, indented at most 3 spaces.
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def split_code_blocks(markdown: str) -> list[tuple[str, str]]:
    """``markdown`` as ("prose", text) and ("code", the block's lines without its fences), in order."""
    parts: list[tuple[str, str]] = []
    prose: list[str] = []
    code: list[str] | None = None
    fence = ""
    for line in markdown.splitlines():
        m = FENCE.match(line)
        if code is None and m:
            parts.append(("prose", "\n".join(prose)))
            prose, code, fence = [], [], m.group(1)
        elif code is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and not line.strip()[len(m.group(1)):]:
            parts.append(("code", "\n".join(code)))
            code = None
        elif code is not None:
            code.append(line)
        else:
            prose.append(line)
    if code is not None:  # an unclosed block runs to the end, as CommonMark reads it
        parts.append(("code", "\n".join(code)))
    parts.append(("prose", "\n".join(prose)))
    return [(kind, text) for kind, text in parts if kind == "code" or text.strip()]


@click.command("show")
@click.argument("name")
@exercise_root_option("exercises/ of the checkout around this folder, else the installed one")
def show(name, exercise_root):
    """Show exercise NAME: its facts, then its README (code blocks exactly as written, never wrapped)."""
    from rich.console import Console
    from rich.markdown import Markdown
    from rich.rule import Rule
    from rich.text import Text

    from grader.cli.where import authoring
    from grader.practice.catalog import describe
    from grader.practice.workspace import for_workspace

    from grader.cli.heartbeat import shown_progress
    from grader.progress import Work

    ex = authoring(exercise_root, verb="showing from").resolve(name)
    work = Work("collecting the exercise's checks", total=1)
    with shown_progress(Console(stderr=True, highlight=False), work):  # seconds, once per exercise version
        work.start(ex.name)
        info = describe(ex)
    console = Console(highlight=False)
    console.print(Text(info.title, style="bold"))
    for label, value in [("Exercise", info.name), ("Level", info.level),
                         ("Topics", ", ".join(info.topics) or "—"), ("File to edit", info.submission),
                         ("GPU", info.gpu), ("Checks", info.checks.summary())]:
        console.print(Text(f"{label + ':':<14}", style="bold") + Text(value))
    start = Text(f"Start with: grader init {info.name} && cd {info.name}")
    console.print(start, soft_wrap=True)
    console.print(Text("The prompt's commands run in that workspace.", style="dim"))
    console.print(Rule())
    readme = (for_workspace(ex, ex.readme.read_text(encoding="utf-8")) if ex.readme.is_file()
              else "(This exercise has no README.md.)")
    for kind, text in split_code_blocks(readme):
        if kind == "prose":
            console.print(Markdown(text))  # the author's prompt: rich renders Markdown, it does not parse [markup]
        else:  # soft_wrap: no line is broken at the terminal's width; a terminal may fold it, a copy stays whole
            console.print(Text(text, style="cyan"), soft_wrap=True, overflow="ignore", crop=False)
            console.print()
    console.print(Rule())
    console.print(start, soft_wrap=True)
