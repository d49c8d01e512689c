"""``vecgrade serve``: verdicts on submit, a long-running service for one course.

It watches nbgrader's exchange inbound and, for each new submission, does what
the teacher would do by hand for that one student, through nbgrader's own API:
collect, autograde on the warm engine, generate feedback, release it. The
inbound folder is the queue; the ledger (``ledger``) says what happened to each
entry, so a restart after any crash converges. Built on ``graders.course`` and
``graders.pipeline``; only the CLI imports this package.
"""
