"""What the CEL stages share: the AST (`ast`), issues and their rendering (`errors`), the runtime values
(`values`). Imports nothing else of `webhook.cel`."""
