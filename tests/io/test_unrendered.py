"""Unrendered templates (issue 8 §6): one clear finding per file saying to render it first, never a
parse error per line; rendered manifests that merely contain Go templates or `${...}` in strings are
manifests; a template document among manifests costs only itself."""

from __future__ import annotations

from pathlib import Path

from tests.cliproc import draguard
from webhook.io.unrendered import blank_templates

HELM = """\
{{- if .Values.gpu.enabled }}
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {{ include "chart.fullname" . }}-gpu
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "chart.labels" . | nindent 4 }}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {{ .Values.gpu.deviceClass | quote }}
          count: {{ .Values.gpu.count }}
{{- end }}
"""

QUOTED_HELM = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: "{{ .Values.className }}"
spec:
  selectors:
  - cel:
      expression: "device.driver == '{{ .Values.driver }}'"
"""

ENVSUBST = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: ${CLAIM_NAME}
  namespace: ${NAMESPACE}
spec:
  devices:
    requests:
    - name: nic
      exactly:
        deviceClassName: ${NIC_CLASS}
"""

RENDERED = """\
# a rendered chart: an alerting rule with Go templates in quoted strings, a pod with ${HOME} in its shell
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: gpu-alerts, namespace: monitoring}
spec:
  groups:
  - name: gpu
    rules:
    - alert: GpuDown
      annotations:
        summary: "GPU {{ $labels.gpu }} on {{ $labels.instance }} is down"
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
  - name: c
    image: ubuntu:24.04
    command: ["bash", "-c", "echo ${HOME}"]
    args:
    - |
      echo ${PATH}
"""

BAD_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: Bad_Name}
spec: {}
"""


def test_a_helm_template_is_one_finding_saying_to_render_it(tmp_path: Path) -> None:
    (tmp_path / "claim.yaml").write_text(HELM)
    (tmp_path / "class.yaml").write_text(QUOTED_HELM)
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines == [
        f"{tmp_path / 'claim.yaml'}:1: error input.template: this file is a Helm template "
        "({{- if .Values.gpu.enabled }} on line 1), not a manifest: render it first, e.g. "
        "`helm template RELEASE CHART | draguard validate -`; its document was not checked",
        f"{tmp_path / 'class.yaml'}:4: error input.template: this file is a Helm template "
        "({{ .Values.className }} on line 4), not a manifest: render it first, e.g. "
        "`helm template RELEASE CHART | draguard validate -`; its document was not checked",
    ]


def test_an_envsubst_template_points_at_envsubst(tmp_path: Path) -> None:
    (tmp_path / "claim.yaml").write_text(ENVSUBST)
    p = draguard("validate", str(tmp_path))
    [line] = p.stdout.splitlines()
    assert (
        "error input.template: this file is a template with environment variables (${CLAIM_NAME} on line 4)"
        in line
    )
    assert "`envsubst < FILE | draguard validate -`" in line


def test_rendered_manifests_with_templates_in_strings_are_manifests(tmp_path: Path) -> None:
    (tmp_path / "rendered.yaml").write_text(RENDERED)
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 0 and p.stdout == "", p.stdout
    assert blank_templates(RENDERED) == (RENDERED, None)


def test_only_the_templated_documents_are_left_out_and_lines_are_kept(tmp_path: Path) -> None:
    (tmp_path / "mixed.yaml").write_text(
        BAD_CLASS + "---\n" + HELM + "---\n" + BAD_CLASS.replace("Bad_Name", "Also_Bad")
    )
    p = draguard("validate", str(tmp_path))
    lines = p.stdout.splitlines()
    assert [ln.split(": ")[0].rsplit(":", 1)[1] + " " + ln.split(" ")[2].rstrip(":") for ln in lines] == [
        "6 input.template",  # the first marker: line 6 of the file (line 1 of the second document)
        "3 meta.name",
        "26 meta.name",  # the third document keeps its line
    ]
    assert "its document was not checked" in lines[0]
