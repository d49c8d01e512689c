"""Issue 27: verdicts are data, not sentences to parse back. Only the renderer makes a grade cell's text from a
verdict; every other module reads ``metadata.vecgrade`` (graders.model.verdict). This test fails on a module that
matches a verdict's message (``"..." in v.message``, ``v.message.startswith(...)``, a regular expression over it)
or reads a grade cell's output text (``"evalue"``) outside the modules that handle the kernel's own outputs."""
import ast
from pathlib import Path

from graders import KIT_ROOT

RENDERER = {"graders/pipeline/verdicts.py", "graders/model/verdict.py"}
# the feedback kernel's own outputs (not verdicts): capped, cut, recorded as a kernel would show them
KERNEL_OUTPUTS = {"graders/pipeline/outputs.py", "graders/pipeline/execute.py", "graders/sandbox/shell.py",
                  "graders/sandbox/shell_session.py"}
TEXT_METHODS = {"startswith", "endswith", "find", "rfind", "index", "rindex", "split", "partition", "count",
                "removeprefix", "removesuffix", "splitlines", "strip"}
REGEX = {"search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def _is_message(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("message", "evalue")


def matches_verdict_text(source: str, kernel_outputs: bool = False) -> list[int]:
    """The lines of ``source`` that match a verdict's text (see the module's docstring)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq))
                                                 for op in node.ops):
            if any(_is_message(side) for side in [node.left, *node.comparators]):
                found.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in TEXT_METHODS and _is_message(node.func.value):
                found.append(node.lineno)
            elif node.func.attr in REGEX and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" \
                    and any(_is_message(a) for a in node.args):
                found.append(node.lineno)
            elif node.func.attr == "get" and not kernel_outputs and node.args \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "evalue":
                found.append(node.lineno)
        elif isinstance(node, ast.Subscript) and not kernel_outputs and isinstance(node.slice, ast.Constant) \
                and node.slice.value == "evalue":
            found.append(node.lineno)
    return found


def test_no_module_outside_the_renderer_matches_verdict_text():
    offenders = {}
    for path in sorted((KIT_ROOT / "graders").rglob("*.py")):
        name = str(path.relative_to(KIT_ROOT))
        if name in RENDERER:
            continue
        lines = matches_verdict_text(path.read_text(), kernel_outputs=name in KERNEL_OUTPUTS)
        if lines:
            offenders[name] = lines
    assert offenders == {}, f"modules that read verdict text back (read metadata.vecgrade instead): {offenders}"


def test_the_check_finds_text_matching_and_leaves_data_alone():
    """Both ways: the patterns the old code used are found; reading the data, or showing a message, is not."""
    bad = [
        "settled = all('could not grade' not in v.message for v in verdicts)",
        "if v.message.startswith('fast: passed'):\n    pass",
        "import re\nm = re.search(r'speedup (\\d+)x', verdict.message)",
        "text = output.get('evalue', '')",
        "text = output['evalue']",
        "gated = v.message == 'not graded until the answer is correct'",
    ]
    for source in bad:
        assert matches_verdict_text(source), source
    good = [
        "ok = v.status is Status.PASSED and v.reason is Reason.OK",
        "line = f'{name}: {v.message}'",
        "speed = v.figures.get('speedup')",
        "say(verdict.message)",
    ]
    for source in good:
        assert not matches_verdict_text(source), source
    assert not matches_verdict_text("x = output.get('evalue')", kernel_outputs=True)  # the kernel's own outputs


def test_the_renderer_is_where_the_text_is_made():
    """Control: the renderer itself does make text from verdicts (so the exemption above is not empty)."""
    source = (Path(KIT_ROOT) / "graders/pipeline/verdicts.py").read_text()
    assert "def verdict_output" in source and "evalue=verdict.message" in source
