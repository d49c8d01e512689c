"""What runs on a student's machine: the self-check behind the examples cell."""
