"""The language subset: what a submission may name, decided from its source before anything runs.

A policy and a parser, shared by the processes that need them: the host audits the file
(``audit``: a grading's trusted decision), the judge child stages the runtime guard's lists
with the sandbox (``guard``), and an exercise's ``exercise.toml`` is checked against the
policy when it is loaded (``config``). It runs nothing of the candidate's.

- ``config``: ``[forbidden]`` and ``[subset]`` as exercise.toml writes them;
- ``policy``: what may be named (a module and member allowlist, what no exercise may allow);
  ``torch_objects``: torch's objects looked up without running a module's lazy import;
- ``audit``: the file parsed and walked (``walk`` the rules, over ``scopes``, with ``names``
  resolving what a name refers to and ``annotations`` what typing evaluates); ``rules``:
  the forbidden APIs' spellings;
- ``guard``: the lists the sandbox's runtime guard (``grader.sandbox.restricted``) reads.
"""
