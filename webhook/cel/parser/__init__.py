"""CEL source to a macro-expanded AST: the lexer, cel-go's grammar and limits, literals, escapes and macros
(`parser.parse`). Stands on `webhook.cel.common` only."""
