"""Evaluation: the planner turns a checked AST into closures (`planner`, `closures`), `program` runs them
against the device input (`activation`); `reads` finds what of the device a selector reads (for sharing
results). Stands on the libraries and `webhook.cel.common`."""
