"""nbgrader plug-ins, one step per module: confined Execute and kernel, restored grade cells, trusted verdicts."""
