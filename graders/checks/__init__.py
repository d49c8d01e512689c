"""The trusted side's decisions: static (AST) checks, output comparison, the three parts, one submission."""
