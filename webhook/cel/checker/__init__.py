"""The checked AST and what is decided on it before evaluation: types and declarations (`types`, `decls`),
the type checker (`checker.check`), the AST validators, the program-instantiation checks (`constfold`) and
the cost estimator (`cost`, `costmodel`). Stands on `webhook.cel.common` (never on the libraries' code)."""
