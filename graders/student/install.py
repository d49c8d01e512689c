"""Where a student's ``vecgrade`` comes from, said the same way by the notebook, the self-check and the command.

The package is not on PyPI: the course hands out its wheel (``vecgrade build --wheel``
writes it, the same file ``pip wheel --no-deps .`` makes) or students install from the
course's repository. Once it is installed, an extra adds what is missing
(``pip install "vecgrade[lab]"`` finds the installed package and adds only the extra).
"""
from __future__ import annotations

from graders import __version__

WHEEL = f"vecgrade-{__version__}-py3-none-any.whl"  # a pure-Python wheel: one file for every platform
FROM_WHEEL = f"pip install {WHEEL}"
FROM_REPOSITORY = 'pip install "git+<the course repository URL>"'
LAB = 'pip install "vecgrade[lab]"'  # JupyterLab, ipykernel and nbgrader's lab extension (Validate)
INSTRUCTOR = 'pip install "vecgrade[instructor]"'

WHERE = (f"the wheel your instructor hands out with the assignment (`{FROM_WHEEL}`), "
         f"or the course's repository (`{FROM_REPOSITORY}`)")
