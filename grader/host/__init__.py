"""The grader's own process: one grading from a file to a report, and the exercise's proof.

``grading``: ``grade()``, the one function the CLI, the tests and batch call; ``runner``: the checks in
a judge child (``warm`` / ``zygote``: a warm server forking one per grading; ``live``: events as they
happen); ``decision``: credit, from the subset's audit, which the sandbox's nets only take away;
``collected``: the checks a judge collects, cached by fingerprint; ``validation``: ``grader validate``.
The judge child (``grader.judge``) and the sandbox (``grader.sandbox``) never import from here.
"""
