"""vecgrade: teach vectorized PyTorch with nbgrader, and grade it where the student cannot reach.

The package is split by job:

- ``exercise``   -- the data model of an exercise definition (``assignments/*.py``).
- ``inputs``     -- random tensors for hidden cases, contiguous or not.
- ``compare``    -- output vs expected, with messages a student can act on.
- ``static``     -- the AST checks (Python iteration, forbidden calls, tampering).
- ``worker``     -- the process that runs untrusted code; it knows no answers.
- ``session``    -- the trusted side's handle on a worker.
- ``checks``     -- the three parts: correct, vectorized, fast.
- ``grading``    -- grade one submission against one assignment.
- ``preprocessor`` -- the nbgrader autograde step that writes the verdicts.
- ``build``, ``validate``, ``demo``, ``cli`` -- the instructor's tools.
"""

__version__ = "0.1.0"
