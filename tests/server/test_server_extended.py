"""`draguard serve --extended-resources` / `--field-manager`: usage errors before anything starts, the
admission configs the server builds from them (the mutating one with the real template writer), and
the translation counter on /metrics."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import REGISTRY

from tests.cliproc import draguard
from webhook.admission import ReviewInfo
from webhook.admission.templates_writer import ApiTemplateWriter
from webhook.server import app
from webhook.server.options import ServeOptions
from webhook.server.wiring import make_config, serve_profile

ROOT = Path(__file__).resolve().parents[2]


def test_usage_errors_name_the_fix(tmp_path: Path) -> None:
    base = ("serve", "--state", str(ROOT / "examples"), "--certs", str(tmp_path / "none"), "--port", "0")
    for args, message in [
        (
            ("--k8s-version", "1.35", "--extended-resources", "native"),
            "--extended-resources native: the DRAExtendedResource feature gate is off in Kubernetes 1.35",
        ),
        (("--extended-resources", "translate"), "add --state cluster"),
        (("--field-manager", "x" * 129), "--field-manager: 1 to 128 printable characters"),
        (("--extended-resources", "always"), "invalid choice: 'always'"),
    ]:
        p = draguard(*base, *args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert message in p.stderr, (args, p.stderr)


def _options(**kw: object) -> ServeOptions:
    return ServeOptions(state="cluster", certs="certs", **kw)  # type: ignore[arg-type]


def test_the_configs_follow_the_flags() -> None:
    options = _options()
    assert make_config(options, "validate", serve_profile(options), None).extended_resources == "native"
    options = _options(k8s_version="1.35")
    assert make_config(options, "mutate", serve_profile(options), None).extended_resources == "off"
    options = _options(k8s_version="1.35", extended_resources="translate", field_manager="platform-draguard")
    mutate = make_config(options, "mutate", serve_profile(options), None)
    validate = make_config(options, "validate", serve_profile(options), None)
    assert mutate.extended_resources == validate.extended_resources == "translate"
    assert (
        isinstance(mutate.templates, ApiTemplateWriter)
        and mutate.templates.field_manager == "platform-draguard"
    )
    assert validate.templates is None  # the validating endpoint never writes


def test_translations_are_counted_by_result() -> None:
    name = "draguard_extended_resource_translations_total"

    def count(result: str) -> float:
        return REGISTRY.get_sample_value(name, {"result": result}) or 0.0

    before = {r: count(r) for r in ("translated", "unmapped", "dryrun", "error")}
    for result in ("translated", "translated", "dryrun", "error", None):
        app._observe("mutate", ReviewInfo("Pod", "CREATE", "allowed", extended=result), 0.001)
    assert {r: count(r) - before[r] for r in before} == {
        "translated": 2,
        "unmapped": 0,
        "dryrun": 1,
        "error": 1,
    }
