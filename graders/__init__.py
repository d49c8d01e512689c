"""vecgrade: teach vectorized PyTorch with nbgrader, and grade it where the student cannot reach.

The subpackages follow the grading pipeline:

- ``model``    -- what an instructor writes: ``exercise`` (the definitions' data model), ``inputs``
                  (random tensors for hidden cases), ``notebook`` (which cell is which).
- ``course``   -- the instructor's operations on a course folder: ``directory`` (the folder and
                  nbgrader's API on it), ``build``, ``validate``, ``grade`` (a whole class), ``demo``.
- ``pipeline`` -- nbgrader plug-ins, one step per module: ``execute`` and ``kernel`` (the confined
                  student kernel), ``restore`` (deleted grade cells), ``verdicts`` (TrustedVerdicts).
- ``checks``   -- the trusted decisions: ``static`` (AST), ``compare`` (outputs), ``parts``
                  (correct, vectorized, fast), ``submission`` (one notebook, every exercise).
- ``sandbox``  -- the untrusted side: ``worker`` (runs student code), ``wire`` (plain-data
                  messages), ``session`` (the grader's handle on a worker), ``jail`` and ``policy``.
- ``student``  -- what a student's notebook imports: ``selfcheck``.
- ``cli``      -- the ``vecgrade`` command.
"""
from pathlib import Path

__version__ = "0.1.0"

KIT_ROOT = Path(__file__).resolve().parent.parent  # the checkout: assignments/, nbgrader_config.py
