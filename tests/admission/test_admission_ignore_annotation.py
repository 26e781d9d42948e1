"""At admission, `draguard.io/ignore` annotations change nothing (issue 15 §3, webhook.validate.ignores): the webhook
answers as the API server would, and an annotation on the object under review must not waive its
errors. The same object offline has them silenced."""

from __future__ import annotations

from typing import Any

from admission_fixtures import causes, respond, served, snapshot

from webhook.config.context import Context
from webhook.model.report import Report
from webhook.validate import check_file_text
from webhook.validate.ignores import suppress


def _class(ann: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "Bad_Name", "annotations": ann},
        "spec": {},
    }


def test_an_object_cannot_annotate_its_own_errors_away_at_admission() -> None:
    plain = respond(served(_class({})), snapshot())
    for ann in (
        {"draguard.io/ignore": "meta.name"},
        {"draguard.io/ignore-all": "trust me"},
        {"draguard.io/ignore": "no.such-rule"},
    ):
        response = respond(served(_class(ann)), snapshot())
        assert response["allowed"] is False, ann
        assert causes(response) == causes(plain)
        assert response.get("warnings") == plain.get("warnings")  # no word about the annotation either


def test_offline_the_same_annotation_silences_the_error() -> None:
    text = (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: Bad_Name\n"
        "  annotations: {draguard.io/ignore: meta.name}\nspec: {}\n"
    )
    report = Report(check_file_text(text, "c.yaml", Context()).objects)
    suppress(report)
    assert report.errors == 0 and [v.rule for o in report.objects for v in o.suppressed] == ["meta.name"]
