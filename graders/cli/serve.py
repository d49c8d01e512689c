"""``vecgrade serve``: verdicts on submit (``graders.serve``, imported lazily: only when the command runs)."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from graders.cli.base import COURSE, app, fail, find_assignment, open_course, say
from graders.model.exits import ExitCode


@app.command()
def serve(assignments: Optional[list[str]] = typer.Argument(None, help="Assignments to serve (default: all)."),
          course: Path = COURSE,
          jobs: int = typer.Option(os.cpu_count() or 1, "--jobs", "-j", min=1,
                                   help="Submissions graded at once on this machine (default: number of cores)."),
          scheduler: Optional[str] = typer.Option(None, help="Grade on this Dask cluster (tcp://HOST:PORT).")):
    """Verdicts on submit: collect, grade and release feedback for each new submission in nbgrader's exchange.

    Runs in the foreground until SIGTERM or Ctrl-C; one line per submission on stdout."""
    import logging

    from graders.serve.service import AlreadyServing, Service, serving
    c = open_course(course)
    for name in assignments or []:
        find_assignment(c, name)
    service = Service(c, assignments or None, jobs=jobs, scheduler=scheduler)
    if not (service.exchange / "inbound").is_dir():
        service.close()
        fail(f"no inbound folder at {service.exchange / 'inbound'}: release an assignment first "
             "(nbgrader release_assignment), or set c.Exchange.root")
    handler = logging.StreamHandler(sys.stdout)  # the service's own lines; nbgrader's warnings go to stderr
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log = logging.getLogger("vecgrade.serve")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    from graders.engine.startup import JailUnusable
    try:
        with serving(c):
            service.run()
    except (AlreadyServing, JailUnusable) as exc:
        service.close()
        fail(str(exc))
    except KeyboardInterrupt:  # a second SIGTERM or Ctrl-C while the service was closing: stopped all the same
        say("vecgrade serve: stopped")
        raise typer.Exit(ExitCode.OK) from None
