"""What runs on a student's machine (``pip install vecgrade``, no nbgrader needed).

- ``selfcheck`` -- what the notebook calls: visible examples, ``report``, ``grade_part`` for grade cells;
- ``history``   -- the cells the kernel ran, labelled as the grader labels notebook cells;
- ``work``      -- ATen ops and Python lines at two sizes, and a rough timing, inside the kernel;
- ``command``   -- the ``vecgrade`` entry point, which says what to install when the instructor extra is missing.
"""
