"""nbgrader configuration of the vecgrade course.

Plain nbgrader, with one step added to autograding: ``TrustedVerdicts``
replaces the output of every vecgrade grade cell by a verdict decided outside
the student's kernel (see graders/pipeline/verdicts.py). Submissions are
checked before nbgrader copies them (graders/pipeline/intake.py), the kernel
runs confined with a time budget and byte-capped outputs, and feedback HTML
is sanitized.
"""
import os

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
                                    AssignLatePenalties,
                                    CheckCellMetadata,
                                    ClearOutput,
                                    DeduplicateIds,
                                    IgnorePattern,
)

from graders.course import feedback_template, formgrader
from graders.pipeline import intake, metadata
from graders.pipeline.execute import ResilientExecute
from graders.pipeline.outputs import LimitOutputBytes
from graders.pipeline.restore import RestoreGradeCells, RestoreKernelspec
from graders.pipeline.sanitize import SanitizeMarkdown
from graders.pipeline.verdicts import SaveVerdicts, TrustedVerdicts

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file
here = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = here
c.CourseDirectory.course_id = "vecgrade"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")
c.Exchange.root = os.path.join(here, "exchange")

# refuse symlinks, special files and oversized submissions in submitted/ (lstat, Intake.*) before nbgrader
# copies anything, and refuse to grade at all when the sandbox is unavailable (unless Sandbox.enabled = False
# is set on purpose)
intake.install()
# nbgrader checks each cell's metadata against its JSON schema: compiled once, not once per cell
metadata.install()
# the formgrader lists every submission, one vecgrade could not grade with its reason (graders/course/formgrader.py)
formgrader.install()

# the student's code: a stub that raises, so an untouched answer fails "correct"
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# restore deleted grade cells, so a student cannot drop a part they expect to fail
c.OverwriteCells.add_missing_cells = True
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateIds,
    RestoreKernelspec,  # nbgrader's OverwriteKernelspec, reading the release's kernelspec where a job carries it
    RestoreGradeCells,  # nbgrader's OverwriteCells, re-adding deleted grade cells without a KeyError
    CheckCellMetadata,
]

# the student's kernel (a warm IPython shell, for feedback): bounded time per cell and per notebook; a hung cell
# is interrupted, not fatal
c.ResilientExecute.timeout = 20
c.ResilientExecute.notebook_budget = 180.0
# outputs capped by bytes, while the kernel runs and again after the verdicts
c.ResilientExecute.max_output_bytes = c.LimitOutputBytes.max_output_bytes = 64 * 1024
c.ResilientExecute.max_notebook_bytes = c.LimitOutputBytes.max_notebook_bytes = 1024 * 1024

c.Autograde.autograde_preprocessors = [
    ResilientExecute,  # nbgrader's Execute in a warm, confined IPython shell; a dead kernel does not drop the notebook
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutputBytes,  # nbgrader's LimitOutput counts lines; this counts bytes
    TrustedVerdicts,  # after the kernel ran, before the scores are saved
    LimitOutputBytes,
    SaveVerdicts,  # nbgrader's SaveAutoGrades, scoring each vecgrade part from its verdict (data), not its output
    AssignLatePenalties,
    CheckCellMetadata,
]
c.TrustedVerdicts.assignments_dir = os.path.join(here, "assignments")
c.TrustedVerdicts.call_timeout = 5.0
c.TrustedVerdicts.load_timeout = 60.0
# limits of the processes that run student code: kernel and worker inside the jail, the worker alone without it;
# memory_mb (the work's memory, on top of the installed torch's measured footprint) and pids also bound each jail
# as a whole (a cgroup, as root), scratch_mb its writable tmpfs
c.Sandbox.memory_mb = 6144
c.Sandbox.pids = 256
c.Sandbox.scratch_mb = 256
c.Sandbox.cpu_s = 300
c.Sandbox.file_mb = 16
# a submission holding more entries, bytes or cells in a notebook than this is refused before nbgrader copies it
c.Intake.max_files = 100
c.Intake.max_bytes = 20 * 1024 * 1024
c.Intake.max_cells = 10_000
c.Sandbox.course_root = here  # student code gets private copies, never a folder of the course

# feedback and the formgrader's view: no <script> or event handler from a student's cells survives
c.HTMLExporter.sanitize_html = True  # outputs
c.HTMLExporter.preprocessors = [SanitizeMarkdown]  # markdown: nbgrader's templates skip clean_html there
# feedback: the summary names each exercise and part (nbgrader's says "Test cell" for each)
feedback_template.configure(c)

# vecgrade serve (verdicts on submit): at most one grading per student and assignment every 10 minutes (the
# latest submission wins), none on submit after the due date, and every inbound folder must belong to the Unix
# user it names (turn off only where one service account writes the exchange for everyone)
c.Serve.min_interval = 600.0
c.Serve.after_due = False
c.Serve.check_owner = True
