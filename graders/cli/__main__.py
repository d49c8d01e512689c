"""``python -m graders.cli``: the ``vecgrade`` command without its entry point's fast exit."""
from graders.cli import app

app()
