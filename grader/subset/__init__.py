"""The language subset: what a submission may name, decided from its source before anything runs.

A policy and a parser shared by the processes that need them: the host audits the file (``audit``),
the judge child stages the runtime guard's lists with the sandbox (``guard``), and ``exercise.toml``
is checked against the policy when loaded (``config``: ``[forbidden]`` and ``[subset]``). ``policy``:
the allowlist and what no exercise may allow; ``torch_objects``: torch's objects without lazy imports;
``walk`` the rules over ``scopes``, with ``names`` and ``annotations``; ``rules``: forbidden APIs'
spellings. It runs nothing of the candidate's.
"""
