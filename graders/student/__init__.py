"""What runs on a student's machine (the course's wheel, no nbgrader needed).

- ``selfcheck`` -- what the notebook calls: visible examples, ``report``, ``grade_part`` for grade cells;
- ``history``   -- the cells the kernel ran, labelled as the grader labels notebook cells;
- ``work``      -- ATen ops and Python lines at two sizes, and a rough timing, inside the kernel;
- ``install``   -- where the package comes from, said the same way by the notebook and the command.

The ``vecgrade`` entry point (``--version`` anywhere, one line on what to install when the instructor extra is
missing) is ``graders.entry``, above every subpackage: it hands the instructor's commands to ``graders.cli``.
"""
