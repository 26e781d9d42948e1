"""The exception tree. Expected outcomes (violations, infeasible claims, undecided answers) are values,
not exceptions; what draguard raises on purpose derives from `DraguardError` (where a standard class is
part of the contract, it is kept as a second base: `except ValueError` still catches `BadBody`).

DraguardError
├── UsageError                 bad flags, profile, feature gate or policy file (exit 2)
│   ├── CertError              server/certs.py: certificates that cannot be made or served
│   └── TestFileError          offline/testfile.py: a policy test file that cannot run (`draguard test`)
├── OutOfBudget                model/budget.py: a step or time budget ran out (the answer is undecided)
│   └── DeadlinePassed         the request's or the run's deadline passed
├── TooLarge                   model/bignum.py: a quantity beyond what the API server stores (+ArithmeticError)
├── UnreadableInput            io/files.py: a path that does not exist or cannot be read
│   └── InputFileError         a file found but not read (too large, not UTF-8)
├── TooManyObjects             io/jsonload.py: more JSON values than the bound
├── Constant, TooDeep          io/deepjson.py: a JSON constant Python has and JSON lacks, nesting past the bound (+ValueError)
├── EngineError                engine/requests.py: an upstream allocation error, with its kind (invalid | waits)
├── CelError, EvaluationStopped, CelRuntimeError, EvaluationError, PlanError, MacroError,
│   UnescapeError, NetipError  cel/: the CEL engine's errors (values of evaluation, compile and plan stages)
├── ApiError                   state/live/client.py: the API server answered with an error
│   └── Expired                410 Gone: the watch's resourceVersion is too old (relist)
├── Unreachable, ConfigError   state/live/client.py: no connection; no usable kubeconfig or in-cluster config
├── BadReview, MalformedRequest  admission/request.py: no AdmissionReview (400); a malformed field (denied)
├── PatchError                 admission/patch.py: a JSON Patch that does not apply (+ValueError)
├── BadDriverSchema            config/driverschemas.py: a driver config schema draguard cannot use (+ValueError)
├── FeasibilityCrash           admission/feasibility.py: draguard failed while deciding (the failure mode answers)
├── TemplateWriteError         admission/templates_writer.py: a ResourceClaimTemplate could not be written
├── BadBody                    server/wire.py: a request body that is no single JSON object (+ValueError)
│   └── TooManyValues          more JSON values than the body may hold (413)
└── UnauditedRequired          schema/generate.py: a required field the audit does not cover (+RuntimeError)

Private classes (`_Stop`, `_Abort`, `Fallback`, ...) are control flow inside one module and never leave it.
"""

from __future__ import annotations


class DraguardError(Exception):
    """Base class for errors draguard raises deliberately."""


class UsageError(DraguardError):
    """Invalid flags, profiles, feature gates or policy files: the user must change the invocation."""
