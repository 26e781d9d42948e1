"""LIST and WATCH over the `kubernetes` client's REST layer, as raw JSON: objects stay plain dicts with the
API's field names (the client's models would drop unknown fields and rename the rest); and one write, the
merge patch of a DraguardPolicy's status (`merge_patch`).

    api = KubeClient(load_api_client(kubeconfig=None))     # in-cluster config, else $KUBECONFIG
    page = api.list_page("/apis/resource.k8s.io/v1/resourceslices", limit=500, cont="")
    with api.watch(path, resource_version=page["metadata"]["resourceVersion"], timeout_seconds=300) as w:
        for event in w:                                    # {"type": ..., "object": {...}}
            ...

Requests go through `ApiClient.param_serialize` / `call_api` (authentication as the client does it: the
in-cluster token file is re-read when it rotates), always unpreloaded (the body is read and parsed here).
Every request has a connect and a read timeout: a watch whose connection died is noticed when nothing
(no event, no bookmark) arrived for `read_timeout` seconds. urllib3's own retries are off: the reflector
decides when to retry. Errors: `ApiError` for an answer that is not 2xx (its Status parsed), `Expired`
for 410, `Unreachable` for connection, TLS and timeout failures and streams that break.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from webhook.io.deepjson import loads
from webhook.io.sharedjson import SharedParts
from webhook.io.yamlload import MAX_DEPTH
from webhook.model.errors import DraguardError

if TYPE_CHECKING:
    from urllib3 import BaseHTTPResponse

CONNECT_TIMEOUT = 10.0
LIST_READ_TIMEOUT = 60.0  # one page
WRITE_READ_TIMEOUT = 10.0  # one write (a DraguardPolicy's status)
POOL_SIZE = 16  # connections per worker: 7 watches, their lists, and the translate writer
PairsHook = Callable[[list[tuple[str, Any]]], dict[str, Any]]
BODY_DEPTH = MAX_DEPTH + 2  # a list page or a watch event holds objects of up to MAX_DEPTH levels, 2 down


class RestAnswer(Protocol):
    """What KubeClient reads of `kubernetes.client.rest.RESTResponse`: the urllib3 response, unread."""

    response: BaseHTTPResponse


class RestApi(Protocol):
    """What KubeClient uses of a `kubernetes.client.ApiClient` (`load_api_client`'s)."""

    def param_serialize(
        self,
        method: str,
        resource_path: str,
        *,
        query_params: list[tuple[str, str]],
        header_params: dict[str, str],
        body: dict[str, Any] | None,
        auth_settings: list[str],
    ) -> tuple[str, str, dict[str, str], str | None, list[str]]: ...

    def call_api(
        self,
        method: str,
        url: str,
        header_params: dict[str, str],
        body: str | None,
        post_params: list[str],
        *,
        _request_timeout: tuple[float, float],
    ) -> RestAnswer: ...

    def close(self) -> None: ...


class ApiError(DraguardError):
    """A non-2xx answer: `status`, the Status' `reason` and message, `retry_after` (seconds) if sent."""

    def __init__(self, status: int, reason: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after


class Expired(ApiError):
    """410 Gone (reason Expired): the resourceVersion or continue token is older than the server keeps."""


class Unreachable(DraguardError):
    """No answer: connection refused or reset, TLS failure, a timeout, a stream that broke off."""


def load_api_client(kubeconfig: str | None = None, in_cluster: dict[str, str] | None = None) -> RestApi:
    """A `kubernetes.client.ApiClient`: from `kubeconfig` when given; else the in-cluster service
    account (`in_cluster` overrides its token/CA file paths, for tests); outside a cluster, $KUBECONFIG.
    Raises `ConfigError` naming what is missing."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    try:
        if kubeconfig:
            if not os.path.isfile(kubeconfig):
                raise ConfigError(f"--kubeconfig {kubeconfig}: no such file")
            config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            paths = in_cluster or {}
            loader = config.incluster_config.InClusterConfigLoader(
                token_filename=paths.get("token", config.incluster_config.SERVICE_TOKEN_FILENAME),
                cert_filename=paths.get("ca", config.incluster_config.SERVICE_CERT_FILENAME),
            )
            loader.load_and_set(configuration)
        elif os.environ.get("KUBECONFIG"):
            config.load_kube_config(client_configuration=configuration)
        else:
            raise ConfigError(
                "--state cluster: not running in a cluster (no KUBERNETES_SERVICE_HOST) and no "
                "$KUBECONFIG; pass --kubeconfig PATH"
            )
    except ConfigException as e:
        raise ConfigError(f"cluster configuration: {e}") from None
    configuration.retries = False  # the reflector retries, with its own backoff
    configuration.connection_pool_maxsize = POOL_SIZE
    api: RestApi = client.ApiClient(configuration)
    return api


class ConfigError(DraguardError):
    """No usable cluster configuration (a usage error of `serve --state cluster`)."""


def _error(status: int, body: bytes, headers: Mapping[str, str] | None) -> ApiError:
    reason, message = "", body[:300].decode("utf-8", "replace").strip()
    try:
        data = json.loads(body)
        if isinstance(data, dict) and data.get("kind") == "Status":
            reason, message = str(data.get("reason") or ""), str(data.get("message") or "")
    except ValueError:
        pass
    retry_after = None
    raw = headers.get("Retry-After") if headers is not None else None
    if raw:
        try:
            retry_after = float(raw)
        except ValueError:
            retry_after = None
    cls = Expired if status == 410 else ApiError
    return cls(status, reason, message, retry_after)


def status_error(status: dict[str, Any]) -> ApiError:
    """The error a watch ERROR event's Status stands for."""
    code = status.get("code")
    code = code if isinstance(code, int) else 500
    cls = Expired if code == 410 else ApiError
    return cls(code, str(status.get("reason") or ""), str(status.get("message") or ""))


class KubeClient:
    """Raw LIST and WATCH of one API server (one per process; thread-safe as urllib3's pool is)."""

    def __init__(
        self, api_client: RestApi, connect_timeout: float = CONNECT_TIMEOUT, shared: SharedParts | None = None
    ) -> None:
        self.api = api_client
        self.connect_timeout = connect_timeout
        # lists and watch events decoded with equal small objects shared (webhook.io.sharedjson): for the
        # state's client only, whose objects nobody changes
        self._hook = shared.hook if shared is not None else None

    def close(self) -> None:
        self.api.close()

    def _get(self, path: str, query: list[tuple[str, str]], read_timeout: float) -> BaseHTTPResponse:
        """The unread urllib3 response of a GET; ApiError for a non-2xx answer, Unreachable when none."""
        return self._request("GET", path, query, read_timeout)

    def _request(
        self,
        verb: str,
        path: str,
        query: list[tuple[str, str]],
        read_timeout: float,
        payload: dict[str, Any] | None = None,
        content_type: str = "",
    ) -> BaseHTTPResponse:
        import urllib3

        header_params = {"Accept": "application/json"}
        if content_type:
            header_params["Content-Type"] = content_type
        method, url, headers, body, post = self.api.param_serialize(
            verb,
            path,
            query_params=query,
            header_params=header_params,
            body=payload,
            auth_settings=["BearerToken"],
        )
        try:
            r = self.api.call_api(
                method, url, headers, body, post, _request_timeout=(self.connect_timeout, read_timeout)
            )
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise Unreachable(f"{verb} {path}: {e}") from None
        except Exception as e:  # the client wraps TLS failures in ApiException(status=0)
            if getattr(e, "status", None) == 0:
                raise Unreachable(f"{verb} {path}: {getattr(e, 'reason', e)}") from None
            raise
        resp = r.response
        if not 200 <= resp.status <= 299:
            try:
                data = resp.read()
            except (urllib3.exceptions.HTTPError, OSError):
                data = b""
            finally:
                resp.release_conn()
            raise _error(resp.status, data, resp.headers)
        return resp

    def list_page(
        self,
        path: str,
        limit: int,
        cont: str = "",
        resource_version: str = "",
        read_timeout: float = LIST_READ_TIMEOUT,
    ) -> dict[str, Any]:
        """One page of a LIST (a consistent read unless `resource_version` is given)."""
        import urllib3

        query = [("limit", str(limit))] if limit else []
        if cont:
            query.append(("continue", cont))
        elif resource_version:
            query.append(("resourceVersion", resource_version))
        resp = self._get(path, query, read_timeout)
        try:
            data = resp.read()
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise Unreachable(f"GET {path}: reading the list failed: {e}") from None
        finally:
            resp.release_conn()
        try:
            page = loads(data, BODY_DEPTH, self._hook)
        except ValueError as e:
            raise Unreachable(f"GET {path}: the list is not JSON: {e}") from None
        if not isinstance(page, dict) or not isinstance(page.get("items", []), list):
            raise Unreachable(f"GET {path}: the answer is not a list")
        return page

    def merge_patch(
        self, path: str, patch: dict[str, Any], field_manager: str, read_timeout: float = WRITE_READ_TIMEOUT
    ) -> None:
        """A JSON merge patch (RFC 7386) of one object or subresource (`.../NAME/status`); ApiError for
        an answer that is not 2xx (409 Conflict when the patch's resourceVersion is no longer current)."""
        import urllib3

        query = [("fieldManager", field_manager)] if field_manager else []
        resp = self._request("PATCH", path, query, read_timeout, patch, "application/merge-patch+json")
        try:
            resp.read()
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise Unreachable(f"PATCH {path}: reading the answer failed: {e}") from None
        finally:
            resp.release_conn()

    def apply(
        self,
        path: str,
        obj: dict[str, Any],
        field_manager: str,
        force: bool = True,
        read_timeout: float = WRITE_READ_TIMEOUT,
    ) -> None:
        """Server-side apply of one object at `path` (its collection/NAME): created, or updated to hold
        what `obj` sets for `field_manager` (JSON is YAML: sent as application/apply-patch+yaml)."""
        query = [("fieldManager", field_manager)] + ([("force", "true")] if force else [])
        self._send("PATCH", path, query, read_timeout, obj, "application/apply-patch+yaml")

    def delete(self, path: str, read_timeout: float = WRITE_READ_TIMEOUT) -> None:
        """Delete one object; ApiError 404 when it is gone already."""
        self._send("DELETE", path, [], read_timeout)

    def _send(
        self,
        verb: str,
        path: str,
        query: list[tuple[str, str]],
        read_timeout: float,
        payload: dict[str, Any] | None = None,
        content_type: str = "",
    ) -> None:
        import urllib3

        resp = self._request(verb, path, query, read_timeout, payload, content_type)
        try:
            resp.read()
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise Unreachable(f"{verb} {path}: reading the answer failed: {e}") from None
        finally:
            resp.release_conn()

    def watch(
        self,
        path: str,
        resource_version: str,
        timeout_seconds: int,
        read_timeout: float,
        bookmarks: bool = True,
    ) -> WatchStream:
        """A WATCH from `resource_version` that the server ends after `timeout_seconds`."""
        query = [("watch", "true"), ("resourceVersion", resource_version)]
        if bookmarks:
            query.append(("allowWatchBookmarks", "true"))
        query.append(("timeoutSeconds", str(timeout_seconds)))
        return WatchStream(path, self._get(path, query, read_timeout), self._hook)


class WatchStream:
    """The events of one watch response, one JSON object per line; `close()` from any thread ends it."""

    def __init__(self, path: str, resp: BaseHTTPResponse, hook: PairsHook | None = None) -> None:
        self.path = path
        self._resp = resp
        self._hook = hook
        self._closed = threading.Event()

    def __enter__(self) -> WatchStream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self._resp.shutdown()  # unblocks a read in another thread (urllib3 >= 2.3)
        except Exception:
            pass  # already released to the pool: the stream was read to its end
        try:
            self._resp.close()  # a stream left before its end: its connection is not reused
            self._resp.release_conn()
        except Exception:
            pass

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Events until the server ends the stream cleanly; Unreachable when it breaks off or stays
        silent for the read timeout."""
        import urllib3

        buf = b""
        try:
            for chunk in self._resp.stream(64 << 10, decode_content=True):
                buf += chunk
                if b"\n" not in buf:
                    continue
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield _event(self.path, line, self._hook)
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as e:
            if self._closed.is_set():
                return
            raise Unreachable(f"watch {self.path}: {type(e).__name__}: {e}") from None
        if buf.strip() and not self._closed.is_set():
            yield _event(self.path, buf, self._hook)


def _event(path: str, line: bytes, hook: PairsHook | None = None) -> dict[str, Any]:
    try:
        event = loads(line, BODY_DEPTH, hook)
    except ValueError as e:
        raise Unreachable(f"watch {path}: an event is not JSON: {e}") from None
    if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
        raise Unreachable(f"watch {path}: an event without an object")
    return event
