"""The default advice for a loop finding: shared by the exercise model (its ``loop_hint``) and the static check."""

LOOP_HINT = "replace it with operations on whole tensors (broadcasting, indexing, reductions)"
