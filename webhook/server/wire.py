"""The HTTP side of an admission call: the URL's `?timeout=`, the body's bounded JSON decoding, and the
bodies the server writes itself (a metav1.Status for 400/408/413, the failure-mode answer)."""

from __future__ import annotations

import json
import re
from typing import Any

from webhook.admission.wire import AdmissionResponse, AdmissionReviewResponse
from webhook.io.files import InputFileError, decode_text
from webhook.io.jsonload import TooManyObjects, load_json_documents
from webhook.io.yamlload import MAX_DEPTH, YamlError
from webhook.model.errors import DraguardError
from webhook.model.text import clip, one_line

_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
MAX_MESSAGE = 1024  # characters of a 400 message (a JSON error quotes no input, but stay short)
MAX_UID = 256  # characters of a uid echoed (the core answers 400 to a longer one: it is no UID)


class BadBody(DraguardError, ValueError):
    """A body that is not one JSON object (the server answers 400 with the message)."""


class TooManyValues(BadBody):
    """A body of more JSON objects than MAX_REVIEW_OBJECTS (the server answers 413)."""


# JSON objects one review body may hold: bounds what decoding it costs (~140 bytes an object: ~140 MiB
# at worst, in ~1 s). No review of a valid object comes near: a Pod CREATE of the API server's largest
# size (3 MiB) made of `{"name":"a"}` env entries is ~240,000 objects; the largest DRA object, a claim
# UPDATE whose 96 opaque configurations and 32 device status data of 10 KiB each are all `{}`, ~880,000.
MAX_REVIEW_OBJECTS = 1_000_000


# Nesting a review body may have: the API server decodes an object of at most MAX_DEPTH levels (Go's limit)
# and sends it at request.object, two levels down.
MAX_REVIEW_DEPTH = MAX_DEPTH + 2


def parse_go_duration(text: str) -> float | None:
    """Seconds of a Go duration (`10s`, `1m30s`, `500ms`, `1.5h`); None if it is not one or negative."""
    if not text or len(text) > 64:
        return None
    pos, total = 0, 0.0
    if text == "0":
        return 0.0
    while pos < len(text):
        m = _GO_PART.match(text, pos)
        if m is None or m.group(1) in ("", "."):
            return None
        total += float(m.group(1)) * _GO_UNITS[m.group(2)]
        pos = m.end()
    return total


def decode_review_body(body: bytes) -> Any:
    """The one JSON value of a request body (UTF-8; duplicate keys, more than one value, nesting deeper
    than MAX_REVIEW_DEPTH and over-long numbers are errors). Raises BadBody."""
    if not body.strip():
        raise BadBody("the body is empty: expected an AdmissionReview (admission.k8s.io/v1) as JSON")
    try:
        text = decode_text(body, "<request>")
    except InputFileError as e:
        raise BadBody(f"the body is not UTF-8 text: {e}") from None
    if not text.lstrip().startswith("{"):
        raise BadBody("the body is not a JSON object: expected an AdmissionReview (admission.k8s.io/v1)")
    try:
        docs = list(load_json_documents(text, max_objects=MAX_REVIEW_OBJECTS, max_depth=MAX_REVIEW_DEPTH))
    except TooManyObjects as e:
        raise TooManyValues(
            f"the body holds more than {e.limit} JSON objects: no AdmissionReview the API server sends is "
            "that large, and decoding it would hold the server's memory"
        ) from None
    except (RecursionError, MemoryError) as e:  # a bound the I/O layer missed: still a clear 400
        raise BadBody(f"the body cannot be decoded ({type(e).__name__})") from None
    if len(docs) != 1:
        first_error = next((d for d in docs if isinstance(d, YamlError)), None)
        if first_error is None:
            raise BadBody(f"the body holds {len(docs)} JSON values: expected one AdmissionReview")
        docs = [first_error]
    doc = docs[0]
    if isinstance(doc, YamlError):
        raise BadBody(_short(f"the body is not valid JSON: line {doc.line}: {doc.message}"))
    duplicates = [i for i in doc.issues if i.rule == "input.duplicate-key"]
    if duplicates:
        paths = ", ".join(i.path for i in duplicates[:5])
        raise BadBody(
            _short(f"the body repeats a key ({paths}): an API server never sends one, which value counts?")
        )
    return doc.data


def _short(message: str) -> str:
    message = one_line(message)
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    404: "NotFound",
    405: "MethodNotAllowed",
    408: "Timeout",
    413: "RequestEntityTooLarge",
    431: "BadRequest",
    500: "InternalError",
    501: "BadRequest",
    503: "ServiceUnavailable",
}


def status_body(code: int, message: str) -> bytes:
    """A metav1.Status, as the API server logs a failed webhook call's body."""
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": _short(message),
        "reason": _REASONS.get(code, "BadRequest"),
        "code": code,
    }
    return json.dumps(status).encode()


def request_uid(ar: Any) -> str | None:
    request = ar.get("request") if isinstance(ar, dict) else None
    uid = request.get("uid") if isinstance(request, dict) else None
    return uid if isinstance(uid, str) else None


def failure_answer(ar: Any, failure_mode: str, reason: str) -> AdmissionReviewResponse:
    """The answer when the admission core itself failed: allow with a warning (`open`) or deny with a
    500-class status (`closed`); `internal-error` marks it for metrics and the audit log."""
    uid = clip(one_line(request_uid(ar) or ""), MAX_UID)
    text = f"draguard could not check this request ({reason}): please report it"
    closed = failure_mode == "closed"
    response: AdmissionResponse = {
        "uid": uid,
        "auditAnnotations": {"internal-error": _short(reason)},
        "allowed": not closed,
    }
    if closed:
        response["status"] = {"code": 500, "reason": "InternalError", "message": text, "status": "Failure"}
    else:
        response["warnings"] = [text[:256]]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
