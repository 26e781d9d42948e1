"""The `draguard` command line: a shell around `webhook.validate` and friends."""
