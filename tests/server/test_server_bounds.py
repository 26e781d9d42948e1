"""A real `draguard serve` answers a review whose object is named 1,000,000 characters with a denial of
at most 64 KiB (36 MB before answers were bounded: the name was echoed in every message)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import pytest
from server_proc import EXAMPLES, Server, review_of, served

MILLION = "é" * 1_000_000
LONG = "é" * 100_000
CLIPPED = "é" * 256 + "…[+999,744 characters]"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("serve-bounds")
    yield from served(tmp, EXAMPLES, ignore=shutil.ignore_patterns("admission"))


def test_a_million_character_name_is_denied_in_at_most_64_kib(server: Server) -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": MILLION, "namespace": "default", "labels": {"example.com/" + LONG: LONG}},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
    }
    ar = review_of(claim)
    body = json.dumps(ar, ensure_ascii=False).encode()  # UTF-8 as the API server sends it: ~4.4 MB
    assert len(body) < 7 << 20  # under the default --max-body-bytes
    status, data = server.request("POST", "/validate", body)
    assert status == 200, data[:500]
    assert len(data) <= 64 << 10
    response = json.loads(data)["response"]
    assert response["uid"] == ar["request"]["uid"] and response["allowed"] is False
    assert response["status"]["code"] == 422 and response["status"]["details"]["name"] == CLIPPED
    causes = {(c["field"], c["message"]) for c in response["status"]["details"]["causes"]}
    assert ("metadata.name", f'Invalid value: "{CLIPPED}": must be no more than 253 characters') in causes
    assert "meta.name" in response["auditAnnotations"]["denied-by"].split(",")
