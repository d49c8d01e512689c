"""Course operations: the course directory, build, validate, grade a class, the demo."""
