"""vecgrade: teach vectorized PyTorch with nbgrader, and grade it where the student cannot reach.

The subpackages follow the grading pipeline, each importing only those above it in this list (the layers of
``graders.docs_imports``, checked by ``tests/test_layers.py`` and drawn in the docs):

- ``model``    -- what an instructor writes and what grading produces: ``exercise`` (the definitions' data
                  model), ``inputs`` (random tensors for hidden cases), ``notebook`` (which cell is which),
                  ``verdict`` (the result contract), ``store`` (verdicts by program key),
                  ``errors`` (``VecgradeError``, the root of every error the kit raises), ``fingerprint`` (the
                  definitions' fingerprints: the folder's, and each assignment's own).
- ``sandbox``  -- the untrusted side: ``worker`` (runs student code), ``wire`` (plain-data messages),
                  ``session`` (the grader's handle on a worker), ``jail``, ``policy``, ``cgroup``,
                  ``preflight`` (a jail runs torch under the limits), ``shell`` (the feedback kernel).
- ``checks``   -- the trusted decisions: ``static`` (AST), ``compare`` (outputs), ``parts`` (correct,
                  vectorized, fast), ``submission`` (one notebook, every exercise: ``GradingRun``).
- ``student``  -- what a student's notebook and install use: ``selfcheck``, ``install`` (where the package comes
                  from), ``work`` and ``history``.
- ``pipeline`` -- nbgrader plug-ins, one step per module: ``intake``, ``execute`` (the confined kernel),
                  ``restore`` (deleted grade cells), ``verdicts`` (TrustedVerdicts), ``precomputed`` (recording),
                  ``safecopy`` (the one checked copy of a submission folder), ``nbgrader_seam`` (every patch of
                  nbgrader, in one table, on a tested nbgrader only).
- ``engine``   -- a class's grading: ``coordinator`` (``Engine``), ``startup`` (its preflight and the reference's
                  measurements), ``job``, ``executors``, ``record``, ``course``, ``paths`` (``CoursePaths``: every
                  course folder, by nbgrader's ``format_path``).
- ``course``   -- the instructor's operations on a course folder: ``build``, ``validate``, ``grade`` (a whole
                  class), ``status``, ``report``, ``export``, ``demo``.
- ``serve``    -- verdicts on submit: the service, its ledger, admission and pages.
- ``cli``      -- the ``vecgrade`` command.

``entry`` (the ``vecgrade`` entry point, safe on a student's install) and the docs' helpers sit above them all;
this module (the version, the checkout's folder) below.
"""
from pathlib import Path

__version__ = "0.1.0"

KIT_ROOT = Path(__file__).resolve().parent.parent  # the checkout: assignments/, nbgrader_config.py
