"""``python -m graders.cli``: the ``vecgrade`` command without its entry point's fast exit."""
from graders.student.command import lighter_imports

lighter_imports()
from graders.cli import app  # noqa: E402 - after lighter_imports, as the entry point imports it

app()
