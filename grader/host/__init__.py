"""The grader's own process: one grading from a file to a report, and the exercise's proof.

- ``grading``: ``grade()``, the one function the CLI, the tests and batch call;
- ``runner``: runs the checks in a judge child (``warm`` / ``zygote``: a warm server that
  forks one per grading) and reads its events back (``live``: as they happen);
- ``decision``: credit, decided from the subset's audit; the sandbox's nets only take it away;
- ``collected``: the checks an exercise's judge collects, cached by fingerprint;
- ``validation``: ``grader validate``: reference, variants, stub and mutants graded.

The judge child (``grader.judge``) and the sandbox (``grader.sandbox``) never import from here.
"""
