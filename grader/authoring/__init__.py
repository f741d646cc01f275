"""The authoring rules: what an exercise folder must hold, checked from its files, in a second.

Whoever writes an exercise gets the rules the repository holds its own exercises to,
wherever the folder is: ``grader validate`` runs them on every exercise it validates
(``--exercise-root DIR --solutions-root DIR`` for a folder outside the repository), and
the repository's tests call the same functions. Each rule is a small function over an
exercise folder and its solutions (:class:`~grader.authoring.folder.Folder`) returning
typed findings (:class:`~grader.authoring.findings.Finding`: the rule's id, the file, the
line where there is one, and a message naming the problem and the fix), one module per
concern:

- ``prompt``: README.md's shape (title, level, the contract first and showing the API,
  Decisions/Example/Trying it, the language subset stated);
- ``layout``: one public example, a reference, each variant and mutant saying what it is
  and parsing (a patch applying);
- ``counts``: at least two variants; six to eight mutants in ``mutants/``;
- ``subset``: the stub, examples and corpus under the judge's own source audit;
- ``checks``: the checks parse and never fail with ``assert``;
- ``nan_safe``: the checks compare measured numbers only through the NaN-safe helpers;
- ``contract``: ``contract.toml`` names the check holding each rule of the prompt;
- ``records``: ``mistakes.json`` measured on today's files (a warning for validate);
- ``interview``: ``interview.toml``'s questions, spoken and tied to checks and mutants that exist;
- ``instruments``: probes keep what they measure out of the candidate's reach, and a mutant forges it;
- ``replies``: ``checks/replies.py`` declares the shape of every probe's reply.

What needs a grading (reference and variants full marks, the stub zero, every mutant
caught) is ``grader validate``'s own job (``grader.host.validation``), not this package's.
"""

from grader.authoring.findings import Concern, Finding, Rule, Severity
from grader.authoring.folder import Folder
from grader.authoring.run import RULES, check_exercise, errors

__all__ = ["Concern", "Finding", "Folder", "Rule", "RULES", "Severity", "check_exercise", "errors"]
