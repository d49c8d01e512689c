"""The service's settings: ``c.Serve.*`` in the course's ``nbgrader_config.py``."""
from __future__ import annotations

from traitlets import Bool, Float, Integer
from traitlets.config import Configurable


class Serve(Configurable):
    """How ``vecgrade serve`` treats submissions (read from the course's nbgrader config)."""

    min_interval = Float(600.0, help="Seconds between two gradings of one student's assignment; submissions "
                                     "that arrive inside the window wait, and only the latest is graded "
                                     "when it opens").tag(config=True)
    after_due = Bool(False, help="Keep grading on submit after the assignment's due date (nbgrader's, in the "
                                 "gradebook, with the student's extension); off: later submissions are "
                                 "collected for the teacher's batch but not graded").tag(config=True)
    check_owner = Bool(True, help="Refuse an inbound folder (or a file in it) not owned by the Unix user its "
                                  "name claims; turn off only where one service account writes the exchange "
                                  "for everyone").tag(config=True)
    poll_interval = Float(0.5, help="Seconds between two scans of the exchange's inbound folder").tag(config=True)
    max_attempts = Integer(3, help="Gradings of one submission begun without finishing (the service died "
                                   "each time) before it is refused").tag(config=True)
    max_pending = Integer(3, help="Submissions of one student that may wait to be graded at once (all assignments "
                                  "together); a further one is refused with a page asking the student to submit "
                                  "again once the waiting one is graded. Bounds the staged copies the service "
                                  "keeps on disk").tag(config=True)
