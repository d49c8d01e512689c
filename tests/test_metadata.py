"""nbgrader's cell-metadata check with the schema compiled once: the same verdicts, the schema checked once."""
import copy

import jsonschema
import nbformat
import pytest
from nbgrader.nbgraderformat import MetadataValidator, ValidationError, common

from graders.pipeline import metadata

from tests.testkit import ROOT


@pytest.fixture
def notebook():
    return nbformat.read(ROOT / "source" / "broadcasting" / "broadcasting.ipynb", as_version=4)


def test_the_compiled_check_accepts_and_refuses_what_nbgraders_own_does(notebook, monkeypatch):
    bad = copy.deepcopy(notebook)
    next(c for c in bad.cells if c.metadata.get("nbgrader", {}).get("grade")).metadata.nbgrader["points"] = "lots"
    with pytest.raises(ValidationError) as plain:
        MetadataValidator().validate_nb(bad)  # nbgrader's own
    MetadataValidator().validate_nb(notebook)
    monkeypatch.setattr(metadata, "_seen", {})
    monkeypatch.setattr(common, "jsonschema", common.jsonschema)  # put back after the test
    metadata.install()
    assert common.jsonschema.validate is metadata.validate
    MetadataValidator().validate_nb(notebook)  # control: a good notebook passes
    with pytest.raises(ValidationError) as compiled:
        MetadataValidator().validate_nb(bad)
    assert str(compiled.value).splitlines()[0] == str(plain.value).splitlines()[0]


def test_the_schema_is_checked_once_not_once_per_cell(notebook, monkeypatch):
    compiled: dict = {}
    monkeypatch.setattr(metadata, "_compiled", compiled)
    checked = []
    real = jsonschema.Draft4Validator.check_schema
    monkeypatch.setattr(jsonschema.Draft4Validator, "check_schema", classmethod(
        lambda cls, schema, **kw: checked.append(1) or real.__func__(cls, schema, **kw)))
    for _ in range(3):
        schema = MetadataValidator().schema  # a new copy each time, as nbgrader reads it
        for cell in notebook.cells:
            if "nbgrader" in cell.metadata:
                metadata.validate(dict(cell.metadata.nbgrader), schema)
    assert len(compiled) == 1 and len(checked) == 1
