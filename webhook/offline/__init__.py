"""The offline runs above the pipeline: `validate`'s whole run (`run`: the files, then the open-world
feasibility check through the simulation) and the repository context of `validate --context` and the
pre-commit hook (`repocontext`). The CLI calls them; the webhook never does."""
