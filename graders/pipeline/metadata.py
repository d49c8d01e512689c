"""nbgrader's cell-metadata validation, with its JSON schema compiled once rather than once per cell.

nbgrader validates every cell's ``nbgrader`` metadata with ``jsonschema.validate``,
which checks the schema itself before each cell: 30 to 40 ms per notebook, spent
again on every pass (sanitizing, then recording). ``install`` gives nbgrader's
metadata validator a ``validate`` that builds the validator once per schema: the
same schema, the same checks, the same errors.
"""
from __future__ import annotations

import json
import types

import jsonschema

from graders.pipeline.nbgrader_seam import patch

_compiled: dict[str, object] = {}  # the schema as text -> its validator
_seen: dict[int, tuple[dict, object]] = {}  # id of a recent schema dict -> (that dict, its validator)
RECENT = 16  # schema dicts remembered by identity (each validator instance reads its own copy)


def validate(instance, schema: dict) -> None:
    """``jsonschema.validate(instance, schema)``, the schema checked and compiled once."""
    known = _seen.get(id(schema))
    if known is None or known[0] is not schema:
        text = json.dumps(schema, sort_keys=True)
        if text not in _compiled:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            _compiled[text] = cls(schema)
        if len(_seen) >= RECENT:
            _seen.clear()
        known = _seen[id(schema)] = (schema, _compiled[text])
    error = jsonschema.exceptions.best_match(known[1].iter_errors(instance))  # type: ignore[attr-defined]
    if error is not None:
        raise error


def install() -> None:
    """nbgrader's metadata validator (``CheckCellMetadata``, reading notebooks) uses the compiled schema."""
    patch("nbgrader.nbgraderformat.common.jsonschema", types.SimpleNamespace(validate=validate))
