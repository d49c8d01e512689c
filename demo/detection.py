"""The demo class of ``detection``; the wrong answers are the references with one plausible slip each."""
from graders.course.personas import standard_class

SLIPS = {  # exercise: (text of the reference, what the student wrote instead)
    "box_iou": (".clamp(min=0)", ""),  # overlaps of boxes apart from each other go negative
    "match_anchors": ("best[:, 0] >= threshold", "best[:, 0] > threshold"),  # a strict threshold
    "roi_align": ("(boxes[:, 1, None] - 0.5)", "boxes[:, 1, None]"),  # no half-pixel shift on y
}


def slipped(ex) -> str:
    old, new = SLIPS[ex.name]
    source = ex.reference_source()
    if old not in source:
        raise ValueError(f"demo/detection.py: the reference of {ex.name} no longer contains {old!r}")
    return source.replace(old, new)


def roster(assignment):
    return standard_class(assignment, {ex.name: slipped(ex) for ex in assignment.exercises})
