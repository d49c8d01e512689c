"""The grading engine: one class's submissions in, one result per submission out.

A grading job is data (``request``): one ``GradingRequest`` in, one ``GradingOutcome`` out, through one function
(``job.grade``) that every driver's executor runs. ``Engine`` (``coordinator``) makes requests from paths, reads
outcomes and records the graded ones through nbgrader (``record``); ``vecgrade grade`` (graders.course.grade) and
``vecgrade serve`` (graders.serve.service) are its two drivers, and plain ``nbgrader autograde`` runs the same
verdict step (graders.pipeline.verdicts.TrustedVerdicts) in nbgrader's own pipeline.

- ``request``     -- ``GradingRequest``, ``GradingOutcome``, ``SubmissionStatus``: a job as JSON-round-trippable data.
- ``job``         -- ``grade(request) -> outcome``: everything that reads a student's content, in the student's job.
- ``coordinator`` -- ``Engine``: paths, keys and outcomes; one verdict store; one writer.
- ``executors``   -- where jobs run, one module per kind, by the address's scheme (``local``, Dask's ``tcp``).
- ``record``      -- recording one graded submission through nbgrader's autograde; ``SubmissionResult``.
- ``startup``     -- the preflight and the reference's measurements, before the first submission.
- ``gradebooks``  -- one SQLAlchemy engine per gradebook while an ``Engine`` lives.
- ``dask_worker`` -- the preload that makes a Dask worker ready before its first task.
"""
