"""Server-side apply of the ResourceClaimTemplates that `--extended-resources translate` refers Pods to.

    writer.apply(template, timeout_seconds)    # returns, or raises TemplateWriteError

`ApiTemplateWriter` PATCHes the template through the kubernetes client: content type
`application/apply-patch+yaml` (the body is JSON, which is YAML), `fieldManager` = `--field-manager`,
`force=true` (draguard owns these objects: an edit by someone else is taken back). Applying the same
template again changes nothing, so concurrent Pods (and webhook replicas) may apply it together. Its
`ApiClient` (the live state's configuration: `webhook.state.live.client.load_api_client`) is made on
first use in each process (gunicorn workers are forked; a connection pool is not shared across a fork).
The review core takes any object with this `apply` (tests inject their own).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import Any, Protocol

from webhook.model.errors import DraguardError
from webhook.model.text import one_line

APPLY_PATCH = "application/apply-patch+yaml"
DEFAULT_FIELD_MANAGER = "draguard"
MAX_DETAIL = 300


class TemplateWriteError(DraguardError):
    """The template could not be applied: `status` is the API server's HTTP status (None: no answer)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TemplateWriter(Protocol):
    def apply(self, template: dict[str, Any], timeout: float) -> None:
        """Create or update `template` (a whole ResourceClaimTemplate) within `timeout` seconds."""


def default_client() -> Any:
    """The live state's `ApiClient` (in-cluster config, else $KUBECONFIG; `--kubeconfig` through the
    factory `draguard serve` passes)."""
    from webhook.state.live.client import load_api_client

    return load_api_client()


def _status_detail(body: Any) -> str:
    """The `message` of a metav1.Status body, else the body's start."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body:
        return ""
    try:
        status = json.loads(body)
    except ValueError:
        return one_line(body)[:MAX_DETAIL]
    message = status.get("message") if isinstance(status, dict) else None
    return one_line(str(message if message else body))[:MAX_DETAIL]


class ApiTemplateWriter:
    """The real writer: server-side apply through the kubernetes client (see the module docstring)."""

    def __init__(
        self, client_factory: Callable[[], Any] = default_client, field_manager: str = DEFAULT_FIELD_MANAGER
    ) -> None:
        self._factory = client_factory
        self.field_manager = field_manager
        self._lock = threading.Lock()
        self._client: Any = None
        self._pid = 0

    def _api(self) -> Any:
        from kubernetes import client

        with self._lock:
            if self._client is None or self._pid != os.getpid():
                try:
                    self._client = self._factory()
                except Exception as e:  # noqa: BLE001 - a configuration that does not load (ConfigError)
                    raise TemplateWriteError(f"no API client: {one_line(str(e))[:MAX_DETAIL]}") from None
                self._pid = os.getpid()
            return client.ResourceV1Api(self._client)

    def apply(self, template: dict[str, Any], timeout: float) -> None:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        meta = template["metadata"]
        what = f"ResourceClaimTemplate {meta['namespace']}/{meta['name']}"
        if timeout <= 0:
            raise TemplateWriteError(f"applying {what}: no time left in the request's deadline")
        try:
            response = self._api().patch_namespaced_resource_claim_template(
                meta["name"],
                meta["namespace"],
                template,
                field_manager=self.field_manager,
                force=True,
                _content_type=APPLY_PATCH,
                _preload_content=False,
                _request_timeout=timeout,
            )
            response.read()
            response.release_conn()
        except ApiException as e:
            detail = _status_detail(e.body) or one_line(str(e.reason or ""))
            raise TemplateWriteError(f"applying {what}: HTTP {e.status}: {detail}", e.status) from None
        except (HTTPError, OSError, ValueError) as e:
            raise TemplateWriteError(f"applying {what}: {one_line(str(e))[:MAX_DETAIL]}") from None
