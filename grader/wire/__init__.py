"""What crosses a process boundary: the one module family every side imports.

``protocol``: the framed judge-worker protocol (JSON plus safetensors, never pickle); the worker
imports it and nothing else of the grader, so this ``__init__`` imports nothing and is staged empty.
``spec``: a check as the judge collected it; ``selfreport``: the worker's hello and the judge's
summary of the sandbox; ``error_record``: the candidate's exception as the worker reports it.
Everything that arrives from another process is validated here, on reading, once.
"""
