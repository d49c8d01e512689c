"""The grading engine: one class's submissions in, one result per submission out.

``Engine`` (``coordinator``) grades submissions (``Engine.results(students) -> Iterator[SubmissionResult]``);
``vecgrade grade`` (graders.course.grade) and ``vecgrade serve`` (graders.serve.service) are its two drivers.
nbgrader is an adapter at both ends: intake (its sanitize steps and the refusals, once per submission, in the
coordinator) and recording (nbgrader's autograde with the expensive steps replaced by the graded notebook,
``graders.pipeline.precomputed``).

- ``coordinator`` -- ``Engine``: jobs prepared as they are dispatched, one verdict store, one writer.
- ``job``         -- one submission's expensive steps as a pure function (``execute_and_judge``), run anywhere.
- ``executors``   -- where jobs run: this process, a local pool, a Dask cluster.
- ``record``      -- recording one submission through nbgrader's autograde; ``SubmissionResult``.
- ``course``      -- the course folder and nbgrader's API on it (``Course``).
- ``gradebooks``  -- one SQLAlchemy engine per gradebook while an ``Engine`` lives.
- ``dask_worker`` -- the preload that makes a Dask worker ready before its first task.
"""
