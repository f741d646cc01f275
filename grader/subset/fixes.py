"""How to write it instead: the fix every violation of the subset carries, in one table.

A violation says what left the subset (``grader.subset.walk``, ``policy``) and, in its own
field, how to write it inside: the most specific substitute for the module or member named
(``time`` -> "this exercise gives no clock..."), else the builtin's, else the kind's.
``tests/test_fixes.py`` holds every kind of violation to having one.
"""

from __future__ import annotations

from grader.reports.model import ViolationCode

WHAT_YOUR_FILE_MAY_USE = "use what the prompt's \"What your file may use\" lists"

#: A module or member (the most specific prefix wins) -> what to write instead.
SUBSTITUTES = {
    "os": "files, processes and the environment are not part of this exercise: remove it",
    "os.path": "paths are not part of this exercise: remove it",
    "sys": "the interpreter is not part of this exercise: `math.inf` for sys.maxsize, `print` for sys.stdout",
    "time": "this exercise gives no clock: remove it (an exercise that needs time passes it in)",
    "threading": "threads are not part of this exercise: run the work in order",
    "multiprocessing": "processes are not part of this exercise: run the work in order",
    "concurrent": "threads and processes are not part of this exercise: run the work in order",
    "asyncio": "an event loop is not part of this exercise: run the work in order",
    "subprocess": "no other program runs in the sandbox: remove it",
    "pickle": "for tensors and plain data, `torch.save` and `torch.load(f, weights_only=True)`",
    "marshal": "for tensors and plain data, `torch.save` and `torch.load(f, weights_only=True)`",
    "shelve": "for tensors and plain data, `torch.save` and `torch.load(f, weights_only=True)`",
    "logging": "`print` (shown with visible checks) or `warnings.warn`",
    "importlib": "import what you need at the top of the file",
    "inspect": "`inspect.signature` and `inspect.Parameter` are allowed; nothing else of inspect",
    "pathlib": "paths are not part of this exercise: remove it",
    "tempfile": "files are not part of this exercise: keep data in memory (`io.BytesIO`)",
    "shutil": "files are not part of this exercise: remove it",
    "uuid": "a counter or `random` seeded by the caller",
    "secrets": "`random` or `torch.Generator`, seeded by the caller",
    "socket": "the sandbox has no network: remove it",
    "ctypes": "memory is not part of this exercise: remove it",
    "gc": "remove it: the interpreter frees what you drop",
    "numpy.load": "`torch.load(f, weights_only=True)`",
    "numpy.save": "`torch.save`",
    "torch.jit": "remove it: your code runs as written, without compiling",
    "torch.compile": "remove it: your code runs as written, without compiling",
    "torch.compiler": "remove it: your code runs as written, without compiling",
    "torch.fx": "write the computation directly",
    "torch.ops": "call the public function (`torch.nn.functional...`, `torch...`)",
    "torch._C": "call the public function (`torch.nn.functional...`, `torch...`)",
    "torch.library": "call the public function (`torch.nn.functional...`, `torch...`)",
    "torch.overrides": "write the computation directly",
    "torch.hub": "the sandbox has no network: build the model in your file",
    "torch.serialization": "`torch.save` and `torch.load(f, weights_only=True)`",
    "torch.distributed": "this exercise runs in one process: remove it",
    "torch.multiprocessing": "processes are not part of this exercise: run the work in order",
    "torch.profiler": "remove it: timing is not part of the grade",
    "torch.utils.cpp_extension": "write the computation in Python with torch",
}

#: A builtin outside the subset -> what to write instead.
BUILTINS = {
    "exec": "write the code itself", "eval": "write the expression itself", "compile": "write the code itself",
    "__import__": "import at the top of the file", "breakpoint": "remove it", "help": "remove it",
    "globals": "pass what you need as arguments", "locals": "pass what you need as arguments",
    "vars": "read the attributes by name", "open": "this exercise reads and writes no files: keep data in memory",
    "__build_class__": "write a class statement",
}

#: Each kind of violation -> its fix when nothing more specific applies.
BY_CODE = {
    ViolationCode.IMPORT: WHAT_YOUR_FILE_MAY_USE,
    ViolationCode.MEMBER: WHAT_YOUR_FILE_MAY_USE,
    ViolationCode.PRIVATE: "use the public API",
    ViolationCode.BUILTIN: "write it without the builtin",
    ViolationCode.DUNDER: "use the attribute by its public name (`__init__`, `__class__`, `__name__`, the operators "
                          "are allowed)",
    ViolationCode.FRAME: "frames, code and tracebacks are not part of the subset: remove it",
    ViolationCode.MODULE_VALUE: "import the name you use (`from torch import nn`) and write `module.name`",
    ViolationCode.ATTRIBUTE_BUILTIN: "call it directly, `getattr(obj, name, ...)`",
    ViolationCode.MODULE_WRITE: "subclass or wrap it in your file instead of replacing it",
    ViolationCode.UNSAFE_LOAD: "write `torch.load(f, weights_only=True)`, without `pickle_module`",
    ViolationCode.ANNOTATION: "annotate with a type (a class, an import, a `TypeVar`), or leave the annotation out",
    ViolationCode.DATA_NAMESPACE: "write a class statement",
    ViolationCode.GUARD: "see what the sandbox refused, below",
}


def fix_for(code: ViolationCode, path: str | None = None, builtin: str | None = None) -> str:
    """The fix for a violation of ``code`` about ``path`` (a module or member) or ``builtin``."""
    if path is not None:
        parts = path.split(".")
        for n in range(len(parts), 0, -1):
            found = SUBSTITUTES.get(".".join(parts[:n]))
            if found is not None:
                return found
    if builtin is not None and builtin in BUILTINS:
        return BUILTINS[builtin]
    return BY_CODE[code]
