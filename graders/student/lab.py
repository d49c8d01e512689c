"""``vecgrade student-lab``: a student's JupyterLab shows the student's nbgrader tools only.

nbgrader's lab extension (installed by the ``lab`` extra) brings every tool into every JupyterLab
it is installed in, the teacher's included: the Formgrader, the Create Assignment panel and the
Course List. This step disables those plugins in the environment it runs in, through JupyterLab's
own page config (what ``jupyter labextension disable --level=sys_prefix`` and ``lock`` write, in
``<sys.prefix>/etc/jupyter/labconfig/page_config.json``; with ``--user``, the user's Jupyter config
folder), and locks them so the plugin manager does not offer them back. The student's plugins
(the Nbgrader menu, the Assignment List that fetches and submits, the Validate button) stay.

It changes nothing outside that one file: a teacher's environment, where it is not run, keeps
every tool. Running it again changes nothing more.
"""
from __future__ import annotations

import importlib.util
import logging
import sys
from enum import Enum

from graders.model.exits import ExitCode
from graders.student.install import LAB

COMMAND = "vecgrade student-lab"

# nbgrader 0.9.6's plugin ids (its lab extension's package, @jupyter/nbgrader); tests/test_student_lab.py
# finds every one in the installed extension, so a renamed plugin fails a test instead of staying visible.
TEACHER_PLUGINS = (
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
)
STUDENT_PLUGINS = (
    "@jupyter/nbgrader:menu",  # lists only the commands whose plugins run: the Assignment List, for a student
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:validate-assignment",
)


class Level(str, Enum):
    """Where the page config is written: JupyterLab's own level names."""

    ENVIRONMENT = "sys_prefix"  # the environment vecgrade is installed in (a venv, the JupyterHub image)
    USER = "user"  # the user's Jupyter config folder (JUPYTER_CONFIG_DIR), for every environment of theirs


def hide_teacher_tools(level: Level = Level.ENVIRONMENT) -> None:
    """Disable and lock ``TEACHER_PLUGINS`` at ``level``; raises ``OSError`` when the file cannot be written."""
    from jupyterlab.commands import AppOptions, disable_extension, lock_extension

    options = AppOptions(logger=logging.getLogger("vecgrade.student-lab"))
    for plugin in TEACHER_PLUGINS:
        disable_extension(plugin, app_options=options, level=level.value)
        lock_extension(plugin, app_options=options, level=level.value)


def disabled_plugins() -> set[str]:
    """The plugins JupyterLab's page config disables here, every level together (what JupyterLab reads)."""
    from jupyterlab_server.config import get_static_page_config

    disabled = get_static_page_config(level="all").get("disabledExtensions", {})
    return {name for name, off in disabled.items() if off}


SUMMARY = "Make this environment's JupyterLab show nbgrader's student tools only (run it in the students' environment)."
HELP = f"""Usage: {COMMAND} [--user]

{SUMMARY}

Disables and locks nbgrader's teacher tools in JupyterLab's page config of this environment:
{chr(10).join('  ' + p for p in TEACHER_PLUGINS)}
The student's tools (the Assignment List, Validate) stay. Running it again changes nothing more.

Options:
  --user      write the user's Jupyter config folder instead (every environment of theirs)
  -h, --help  show this message and exit
"""


def main(args: list[str]) -> int:
    """The command's body: ``args`` is what follows ``student-lab``; returns the exit code."""
    if args in (["--help"], ["-h"]):
        print(HELP, end="")
        return ExitCode.OK
    if args not in ([], ["--user"]):
        print(f"error: {COMMAND} takes no argument but --user (got {' '.join(args)})", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    if importlib.util.find_spec("jupyterlab") is None:
        print(f"error: JupyterLab is not installed here; install it with: {LAB}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    level = Level.USER if args else Level.ENVIRONMENT
    try:
        hide_teacher_tools(level)
    except OSError as exc:
        print(f"error: cannot write JupyterLab's page config ({exc}); "
              f"{'try it without --user' if args else 'try it with --user'}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(f"JupyterLab here shows nbgrader's student tools only: disabled {', '.join(TEACHER_PLUGINS)}. "
          "Reload JupyterLab's page to see it.")
    return ExitCode.OK
