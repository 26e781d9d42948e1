"""Validation of one object and of whole inputs: the pipeline the CLI, the webhook and the tests share.

    structural schema → v1 defaulting → version-skew stripping → object rules → (all objects) inventory rules

One module per stage, each calling only those before it:

- `objects`: one object as the API server would store it, and its object rules (`checked_object`);
- `documents`: parsed documents → results (which are DRA objects, what each is checked as), a file's
  documents within the run's deadline (`check_documents`, `check_file_text`);
- `report`: the files' results → one report, with the inventory (cross-object) rules (`assemble`);
- `files`: whole inputs — files in parallel, stdin, request bodies (`check_files`, `check_body`).

Beside them: `versioned` (beta DRA objects), `templates` (workloads' Pod templates), `clusterinput`
(`--cluster` state), `ignores` (`draguard.io/ignore`). Everything is pure apart from reading files in
`files`. The names below are the package's API; import them from here.
"""

from webhook.validate.documents import (
    CHECKED,
    DRA_API_PREFIX,
    RESOURCE_V1,
    FileResult,
    Keep,
    Keeper,
    Loaded,
    check_document,
    check_documents,
    check_file_text,
    not_checked_result,
    unread_result,
)
from webhook.validate.files import (
    Checked,
    InputOptions,
    KeepMode,
    RunOptions,
    chart_message,
    chart_result,
    check_body,
    check_files,
    check_inputs,
    file_result,
    input_error_result,
    kustomization_result,
    skipped_result,
    usable_workers,
)
from webhook.validate.objects import (
    STATUS_RESET_ON_CREATE,
    checked_object,
    object_violations,
    prepare,
    run_object_rules,
)
from webhook.validate.report import Assembler, assemble, run_inventory_rules

__all__ = [
    "CHECKED",
    "DRA_API_PREFIX",
    "RESOURCE_V1",
    "STATUS_RESET_ON_CREATE",
    "Assembler",
    "Checked",
    "FileResult",
    "InputOptions",
    "Keep",
    "KeepMode",
    "Keeper",
    "Loaded",
    "RunOptions",
    "assemble",
    "chart_message",
    "chart_result",
    "kustomization_result",
    "check_body",
    "check_document",
    "check_documents",
    "check_file_text",
    "check_files",
    "check_inputs",
    "checked_object",
    "file_result",
    "input_error_result",
    "not_checked_result",
    "object_violations",
    "prepare",
    "run_inventory_rules",
    "run_object_rules",
    "skipped_result",
    "unread_result",
    "usable_workers",
]
