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
    p = draguard("validate", str(tmp_path / "claim.yaml"))  # named: an error (found in a directory: below)
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines == [
        f"{tmp_path / 'claim.yaml'}:1: error input.template: this file is a Helm template "
        "({{- if .Values.gpu.enabled }} on line 1), not a manifest: render it first, e.g. "
        "`helm template RELEASE CHART | draguard validate -`; its document was not checked",
    ]


def test_a_template_that_parses_but_is_invalid_as_written_is_one_finding_quoting_its_first_error(
    tmp_path: Path,
) -> None:
    """Issue 15 §3: a document that parses is validated as written; when it has errors and a template
    marker, one finding stands for them (they are the template's), quoting the first."""
    (tmp_path / "class.yaml").write_text(QUOTED_HELM)
    p = draguard("validate", str(tmp_path / "class.yaml"))
    assert p.returncode == 1
    [line] = p.stdout.splitlines()
    assert line.startswith(
        f"{tmp_path / 'class.yaml'}:4: error input.template: this document looks like an unrendered Helm "
        "template ({{ .Values.className }} on line 4): as written it is not a valid object (1 error: "
        'metadata.name: Invalid value: "{{ .Values.className }}": a lowercase RFC 1123 subdomain'
    )
    assert line.endswith(
        "; render it first, e.g. `helm template RELEASE CHART | draguard validate -` "
        "[DeviceClass {{ .Values.className }}]"
    )


def test_an_envsubst_template_points_at_envsubst(tmp_path: Path) -> None:
    (tmp_path / "claim.yaml").write_text(ENVSUBST)
    p = draguard("validate", str(tmp_path / "claim.yaml"))
    assert p.returncode == 1
    [line] = p.stdout.splitlines()
    assert line.startswith(
        f"{tmp_path / 'claim.yaml'}:4: error input.template: this document looks like a template with "
        "environment variables (${CLAIM_NAME} on line 4): as written it is not a valid object (3 errors, "
        'the first: spec.devices.requests[0].exactly.deviceClassName: Invalid value: "${NIC_CLASS}"'
    )
    assert "`envsubst < FILE | draguard validate -`" in line


def test_valid_objects_holding_template_text_in_strings_are_valid(tmp_path: Path) -> None:
    """A ConfigMap whose data hold a Helm action or `${VAR}` (plain, where a template would put one) and a
    DeviceClass with `${VAR}` in an annotation parse as objects: valid, no finding."""
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ml}\ndata:\n"
        '  a: "{{ .Values.x }}"\n  b: ${VAR}\n'
    )
    (tmp_path / "class.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu.example.com\n"
        "  annotations:\n    example.com/by: pipeline ${CI_PIPELINE_ID}\nspec: {}\n"
    )
    assert blank_templates((tmp_path / "cm.yaml").read_text())[1] is None
    p = draguard("validate", str(tmp_path), "--summary")
    assert (p.returncode, p.stdout) == (
        0,
        "Summary: 1 objects checked, 0 errors, 0 warnings, 0 info, 1 skipped\n",
    )


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


# an Alertmanager configuration (not a Kubernetes object) whose notification templates use Go's own
# `template "name"` action in quoted strings, with an indentation mistake on its `title` line
ALERTMANAGER_BROKEN = """\
route:
  receiver: 'null'
receivers:
- name: slack
  slack_configs:
  - channel: '#alerts'
     title: '{{ template "slack.title" . }}'
    text: '{{ template "slack.text" . }}'
"""


def test_go_template_actions_in_quoted_strings_are_not_a_helm_template(tmp_path: Path) -> None:
    """Go's `template "name"` action quoted in a file that does not parse is not a Helm chart: a manifest
    gets its YAML error, not advice to run `helm template` on it; the Alertmanager configuration itself,
    with no apiVersion or kind anywhere, is another tool's file (skipped, counted), broken or valid."""
    (tmp_path / "alertmanager.yaml").write_text(ALERTMANAGER_BROKEN)
    assert blank_templates(ALERTMANAGER_BROKEN)[1] is None
    p = draguard("validate", str(tmp_path))
    assert (p.returncode, p.stdout) == (0, ""), p.stdout + p.stderr
    assert "1 document is not a Kubernetes object" in p.stderr
    (tmp_path / "alertmanager.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n" + ALERTMANAGER_BROKEN)
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 1
    [line] = p.stdout.splitlines()
    assert line.startswith(f"{tmp_path / 'alertmanager.yaml'}:9: error input.parse: YAML syntax error"), line
    (tmp_path / "alertmanager.yaml").write_text(ALERTMANAGER_BROKEN.replace("     title", "    title"))
    p = draguard("validate", str(tmp_path))
    assert (p.returncode, p.stdout) == (0, ""), p.stdout + p.stderr
    # unquoted, the action is where YAML reads it: a template still
    helm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ template "chart.fullname" . }}\n'
    assert blank_templates(helm)[1] is not None


# clusterloader2's templates (kueue's test/performance/): Go templates that name nothing of Helm's
CLUSTERLOADER = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: {{.Name}}
spec:
  clusterQueue: {{.ClusterQueue}}
"""


def test_a_go_template_that_is_not_helms_is_called_a_go_template(tmp_path: Path) -> None:
    (tmp_path / "local-queue.yaml").write_text(CLUSTERLOADER)
    p = draguard("validate", str(tmp_path / "local-queue.yaml"))
    assert p.returncode == 1
    assert p.stdout.splitlines() == [
        str(tmp_path / "local-queue.yaml")
        + ":4: error input.template: this file is a Go template ({{.Name}} "
        "on line 4), not a manifest: render it first, e.g. with the tool that fills it in (`helm template "
        "RELEASE CHART | draguard validate -` for a chart); its document was not checked",
    ]
    # Helm's names anywhere in the file make it Helm's, whatever its first marker
    helm = CLUSTERLOADER + '  labels: {{ include "chart.labels" . }}\n'
    t = blank_templates(helm)[1]
    assert t is not None and (t.kind, t.line) == ("helm", 4)


def test_a_template_found_in_a_directory_is_a_warning_and_named_an_error(tmp_path: Path) -> None:
    """A repository holds templates of other tools (kuberay's and kueue's clusterloader2 benchmarks, an
    operator's assets): found by walking a directory, each is one warning (not checked, the run stays
    green); the same file named on the command line (or staged for the pre-commit hook) is an error, and
    a policy may make the warning an error too."""
    (tmp_path / "perf").mkdir()
    (tmp_path / "perf" / "local-queue.yaml").write_text(CLUSTERLOADER)
    (tmp_path / "perf" / "class.yaml").write_text(QUOTED_HELM)
    (tmp_path / "perf" / "claim.yaml").write_text(ENVSUBST)
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 0, p.stdout
    assert [ln.split(": ", 2)[1] for ln in p.stdout.splitlines()] == ["warning input.template"] * 3
    p = draguard("validate", str(tmp_path), str(tmp_path / "perf" / "class.yaml"))
    assert p.returncode == 1
    assert " error input.template: this document looks like an unrendered Helm template" in p.stdout
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  input.template: error\n")
    p = draguard("validate", "--policy", str(policy), str(tmp_path / "perf"))
    assert p.returncode == 1 and p.stdout.count(" error input.template: ") == 3, p.stdout


# the shape of Kubernetes' own scheduler_perf templates: Go actions inside plain names, values and keys
SCHEDULER_PERF = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: test-claim-{{.Index}}
  namespace: default
spec:
  devices:
    requests:
    - name: req-0
      exactly:
        deviceClassName: test-class
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: test-class-{{ .Index }}
spec:
  extendedResourceName: example.com/gpu-{{Mod .Index 25}}
"""


def test_go_actions_inside_plain_names_and_keys_make_a_template(tmp_path: Path) -> None:
    """`name: test-claim-{{.Index}}` is a Go template's, not a name with braces in it: found in a
    directory, each such document is one warning and the run stays green; named, one error standing for
    the document's errors. A quoted string's action (a rendered alerting rule's text) and a comment's are
    not markers, so a rendered manifest is not taken for a template."""
    (tmp_path / "perf").mkdir()
    (tmp_path / "perf" / "claim.yaml").write_text(SCHEDULER_PERF)
    t = blank_templates(SCHEDULER_PERF)
    assert t == (SCHEDULER_PERF, None)  # both documents parse as objects: kept, validated as written
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 0, p.stdout
    assert [ln.split(": ", 2)[1] for ln in p.stdout.splitlines()] == ["warning input.template"] * 2
    assert "looks like an unrendered Go template ({{.Index}} on line 4)" in p.stdout
    assert "({{ .Index }} on line 16)" in p.stdout
    p = draguard("validate", str(tmp_path / "perf" / "claim.yaml"))
    assert p.returncode == 1 and p.stdout.count(" error input.template: ") == 2, p.stdout
    # the same objects with the action quoted or in a comment: validated as written, errors their own
    quoted = SCHEDULER_PERF.replace("test-claim-{{.Index}}", '"test-claim-{{.Index}}"').replace(
        "test-class-{{ .Index }}", "Test_Class # {{ .Index }}"
    )
    quoted = quoted.replace("example.com/gpu-{{Mod .Index 25}}", "'example.com/gpu-{{Mod .Index 25}}'")
    (tmp_path / "perf" / "claim.yaml").write_text(quoted)
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 1
    assert "input.template" not in p.stdout
    assert {ln.split(": ", 2)[1] for ln in p.stdout.splitlines()} >= {"error meta.name"}, p.stdout


# a documentation snippet wrapped for mkdocs' macros plugin: Jinja tags on lines of their own
JINJA_SNIPPET = """\
{% raw %}
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
{% endraw %}
"""

# Argo Workflows' own `{{workflow.x}}` inside a quoted item of a list document (no object: skipped)
QUOTED_ITEM = """\
- container:
    args:
    - "hello. Scheduled on: {{workflow.scheduledTime}}"
"""


def test_a_jinja_wrapped_snippet_is_a_template_and_a_quoted_action_in_an_item_is_not(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "snippet.yaml").write_text(JINJA_SNIPPET)
    (tmp_path / "docs" / "workflow.yaml").write_text(QUOTED_ITEM)
    assert blank_templates(QUOTED_ITEM) == (QUOTED_ITEM, None)
    p = draguard("validate", str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    [line] = p.stdout.splitlines()
    assert line.startswith(
        f"{tmp_path / 'docs' / 'snippet.yaml'}:1: warning input.template: this file is a Jinja"
    )
    assert "({% raw %} on line 1)" in line and "mkdocs" in line
    p = draguard("validate", str(tmp_path / "docs" / "snippet.yaml"))
    assert p.returncode == 1 and " error input.template: " in p.stdout
