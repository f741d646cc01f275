"""The authoring rules: what an exercise folder must hold, checked from its files, in a second.

An author gets the rules the repository holds its own exercises to, wherever the folder is:
``grader validate`` runs them (``--exercise-root DIR --solutions-root DIR`` outside the repository) and
the repository's tests call the same functions. Each rule is a small function over a
:class:`~grader.authoring.folder.Folder` returning :class:`~grader.authoring.findings.Finding` (rule id,
file, line, a message naming the problem and the fix), one module per concern: ``prompt``, ``layout``,
``counts``, ``subset``, ``checks``, ``nan_safe``, ``contract``, ``records``, ``interview``, ``instruments``,
``replies``. Gradings (reference full marks, stub zero, mutants caught) are ``grader.host.validation``'s.
"""

from grader.authoring.findings import Concern, Finding, Rule, Severity
from grader.authoring.folder import Folder
from grader.authoring.run import RULES, check_exercise, errors

__all__ = ["Concern", "Finding", "Folder", "Rule", "RULES", "Severity", "check_exercise", "errors"]
