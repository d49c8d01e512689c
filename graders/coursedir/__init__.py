"""The course folder, as nbgrader lays it out: ``Course`` (its root, its config, nbgrader's API on it, the
definitions' catalogue) and ``CoursePaths`` (every step's folder by nbgrader's ``CourseDirectory.format_path``).

It sits below the pipeline and the engine, which grade in it, and below ``course``, ``serve`` and ``cli``, which
read it: like nbgrader's own ``coursedir.py``, it knows where things are, not how they are graded.
"""
