"""`draguard serve` and `draguard certs`: their flags and what they run (the server lives in
webhook/server/). Both print usage errors (bad flags, unusable certificates, a missing state directory)
as one line and exit 2 before anything starts."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from webhook.cli import argtypes
from webhook.cli.options import add_driver_schemas_arg
from webhook.model.errors import UsageError

if TYPE_CHECKING:
    from webhook.config.profile import Profile

DEFAULT_CERTS = "certs"
DEFAULT_STATE = "examples"


def add_serve_parser(sub: argparse._SubParsersAction, add_profile_args: Callable) -> None:  # type: ignore[type-arg]
    s = sub.add_parser(
        "serve",
        help="run the admission webhook (HTTPS: /validate, /mutate, /healthz, /readyz, /metrics)",
        description="Serve AdmissionReviews over HTTPS with gunicorn. With no flags: a CA and a serving "
        f"certificate are created under {DEFAULT_CERTS}/ if missing, the cluster state is read from "
        f"{DEFAULT_STATE}/ (and re-read when it changes), and the server listens on 127.0.0.1:8443.",
    )
    add_profile_args(s)
    s.add_argument(
        "--policy",
        metavar="FILE",
        help="policy file or DraguardPolicy objects: rule severities, feasibility modes, tenants (with "
        "--state cluster combined with the cluster's DraguardPolicies)",
    )
    add_driver_schemas_arg(s)
    s.add_argument(
        "--state",
        metavar="DIR|cluster",
        help=f"manifests forming the cluster state, loaded as `simulate` loads them and re-read when "
        f"they change (default: {DEFAULT_STATE}/); `cluster`: list and watch the API server (in-cluster "
        "configuration, else $KUBECONFIG)",
    )
    s.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="the API server to list and watch (implies --state cluster)",
    )
    s.add_argument(
        "--watch-timeout-seconds",
        type=argtypes.whole_number,
        default=0,
        metavar="N",
        help="server-side timeout of each watch (default: random 300-600 s per watch, as client-go's "
        "reflector); the watch is then reopened from its resourceVersion",
    )
    s.add_argument(
        "--watch-read-timeout-seconds",
        type=argtypes.positive(float),
        default=150.0,
        metavar="S",
        help="a watch that received nothing (no event, no bookmark) for this long is taken as dead and "
        "reopened (default 150; the API server sends a bookmark about every minute)",
    )
    s.add_argument(
        "--list-page-size",
        type=argtypes.whole_number,
        default=500,
        metavar="N",
        help="items per LIST page of the initial lists and relists (default 500; 0 = unpaginated)",
    )
    s.add_argument(
        "--audit-interval",
        type=argtypes.seconds,
        default=0.0,
        metavar="S",
        help="with --state cluster: audit the cluster in the background (a process of its own) when a watch "
        "event changed something, at most once every S seconds, and keep PolicyReports "
        "(wgpolicyk8s.io/v1alpha2) current through the API (default 0: no background audit)",
    )
    s.add_argument(
        "--audit-max-results",
        type=argtypes.whole_number,
        default=1000,
        metavar="N",
        help="with --audit-interval: results listed per PolicyReport (default 1000; failures first)",
    )
    s.add_argument(
        "--audit-max-pending-pods",
        type=argtypes.whole_number,
        default=200,
        metavar="N",
        help="with --audit-interval: Pods pending on DRA explained per audit (default 200)",
    )
    s.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument(
        "--port", type=argtypes.port, default=8443, help="port (default 8443; 0 = any free port, logged)"
    )
    s.add_argument(
        "--certs",
        metavar="DIR",
        help=f"directory with tls.crt and tls.key (see `draguard certs`); the files are re-read when "
        f"they change. Default {DEFAULT_CERTS}/, created with a new CA when missing",
    )
    s.add_argument(
        "--client-ca",
        metavar="FILE",
        help="require a client certificate signed by this CA (the API server's, from its "
        "AdmissionConfiguration kubeconfig)",
    )
    s.add_argument(
        "--deadline-seconds",
        type=argtypes.positive(float),
        default=2.0,
        metavar="S",
        help="time one review may take, feasibility included (default 2); the URL's ?timeout= "
        "(the webhook's timeoutSeconds) shortens it to 80%% of that. Past it, feasibility is undecided "
        "(admitted with a warning)",
    )
    s.add_argument(
        "--budget-steps",
        type=argtypes.whole_number,
        default=100_000,
        metavar="N",
        help="allocator search steps of one feasibility run (default 100000; a request may run two)",
    )
    s.add_argument(
        "--budget-seconds",
        type=argtypes.positive(float),
        default=0.75,
        metavar="S",
        help="wall-clock limit of one feasibility run (default 0.75)",
    )
    s.add_argument(
        "--failure-mode",
        choices=("open", "closed"),
        default="open",
        help="answer when draguard itself fails on a request: open = allow with a warning (default), "
        "closed = deny (set failurePolicy to match)",
    )
    s.add_argument(
        "--workers",
        type=argtypes.whole_number,
        default=0,
        help="worker processes, each with its own copy of the state (default: one per core; "
        "with --state cluster one: one state and one watch per kind per replica)",
    )
    s.add_argument("--threads", type=argtypes.whole_number, default=0, help="threads per worker (default 4)")
    s.add_argument(
        "--max-body-bytes",
        type=argtypes.byte_size,
        default=None,
        metavar="SIZE",
        help="largest request body (default 7Mi: an UPDATE review carries two objects of up to 3 MiB); "
        "larger ones get 413",
    )
    s.add_argument(
        "--reload-interval",
        type=argtypes.positive(float),
        default=1.0,
        metavar="S",
        help="seconds between two checks of the state directory for changes (default 1)",
    )
    s.add_argument(
        "--keepalive",
        type=argtypes.positive(float),
        default=60.0,
        metavar="S",
        help="idle keep-alive (default 60)",
    )
    s.add_argument(
        "--read-timeout",
        type=argtypes.positive(float),
        default=2.0,
        metavar="S",
        help="one deadline for a request to arrive whole: a new connection's TLS handshake, the request "
        "head and body (default 2; the body also within the review's deadline). A connection that misses "
        "it is closed (408 when the head had arrived)",
    )
    s.add_argument(
        "--max-connections",
        type=argtypes.positive(int),
        default=2048,
        metavar="N",
        help="open connections per worker (default 2048); at the cap the one waiting longest for its "
        "request is closed to make room, and when every one is being answered a new one is refused",
    )
    s.add_argument(
        "--drain-seconds",
        type=argtypes.seconds,
        default=5.0,
        metavar="S",
        help="after SIGTERM: seconds /readyz answers 503 while reviews are still answered (with "
        "Connection: close), before the worker stops accepting (default 5; within --graceful-timeout)",
    )
    s.add_argument(
        "--graceful-timeout",
        type=argtypes.positive(float),
        default=20.0,
        metavar="S",
        help="seconds in-flight requests get after SIGTERM (default 20)",
    )
    s.add_argument(
        "--extended-resources",
        choices=("native", "translate", "off"),
        default=None,
        help="Pods asking for extended resources a DeviceClass maps (example.com/gpu: 2): native = the "
        "scheduler serves them (DRAExtendedResource on), the webhook checks the mapping; translate = the "
        "mutating webhook rewrites Pod CREATEs into ResourceClaims from ResourceClaimTemplates it applies "
        "(needs --state cluster and RBAC to patch resourceclaimtemplates); off. Default: native when the "
        "profile's DRAExtendedResource gate is on, else off",
    )
    s.add_argument(
        "--field-manager",
        default="draguard",
        metavar="NAME",
        help="field manager of draguard's writes: the ResourceClaimTemplates translate applies, the status of "
        "DraguardPolicies (default draguard)",
    )
    s.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")
    s.add_argument("--access-log", action="store_true", help="log every request to stderr")
    s.set_defaults(run=run_serve)


def add_certs_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    c = sub.add_parser(
        "certs",
        help="create a CA and a serving certificate for the webhook; print the caBundle",
        description="Create (or keep) a CA in DIR and issue a serving certificate for the given names "
        "(tls.crt/tls.key, replaced atomically: a running `draguard serve` picks it up). Prints the "
        "caBundle (base64 PEM of the CA) for the webhook configurations.",
    )
    c.add_argument("--dir", default=DEFAULT_CERTS, metavar="DIR", help=f"default {DEFAULT_CERTS}/")
    c.add_argument("--dns", action="append", default=[], metavar="NAME", help="DNS name (repeatable)")
    c.add_argument("--ip", action="append", default=[], metavar="ADDR", help="IP address (repeatable)")
    c.add_argument(
        "--service",
        metavar="NAME",
        help="the webhook's Service: adds NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local",
    )
    c.add_argument("--namespace", default="default", metavar="NS", help="the Service's namespace")
    c.add_argument(
        "--days", type=argtypes.whole_number, default=365, help="serving certificate validity (default 365)"
    )
    c.add_argument(
        "--ca-days", type=argtypes.whole_number, default=3650, help="validity of a new CA (default 3650)"
    )
    c.add_argument("--new-ca", action="store_true", help="replace the CA too (the caBundle changes)")
    c.add_argument("--client", metavar="CN", help="also issue client.crt/client.key with this common name")
    c.set_defaults(run=run_certs)


def run_certs(args: argparse.Namespace) -> int:
    from webhook.server.certs import DEFAULT_DNS, DEFAULT_IPS, ca_bundle, ensure_certs, san_summary

    dns = list(args.dns)
    if args.service:
        from webhook.server.certs import service_names

        dns += service_names(args.service, args.namespace)
    ips = list(args.ip)
    if not dns and not ips:
        dns, ips = list(DEFAULT_DNS), list(DEFAULT_IPS)
    if args.days < 1 or args.ca_days < 1:
        raise UsageError("--days and --ca-days must be at least 1")
    files = ensure_certs(
        args.dir, dns, ips, args.days, args.ca_days, renew=True, new_ca=args.new_ca, client=args.client
    )
    names = ", ".join(san_summary(files.tls_cert.read_bytes()))
    sys.stderr.write(f"draguard: {files.tls_cert} and {files.tls_key} for {names}; CA {files.ca_cert}\n")
    sys.stdout.write(ca_bundle(files.ca_cert) + "\n")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from webhook.config.profile import load_profile, parse_feature_gates
    from webhook.io.files import discover_all
    from webhook.server.options import CLUSTER, DEFAULT_MAX_BODY, DEFAULT_THREADS, ServeOptions

    gates = parse_feature_gates(args.feature_gates)
    profile = load_profile(args.k8s_version, gates)
    _check_extended_resources(args, profile)
    if args.kubeconfig and args.state not in (None, CLUSTER):
        raise UsageError(
            f"--kubeconfig lists and watches the API server: it goes with --state {CLUSTER}, not --state {args.state}"
        )
    state = CLUSTER if args.kubeconfig else args.state or DEFAULT_STATE
    if args.audit_interval > 0 and state != CLUSTER:
        raise UsageError("--audit-interval audits the cluster through the API server: add --state cluster")
    if state == CLUSTER:
        from webhook.state.live import ConfigError, load_api_client

        try:
            load_api_client(args.kubeconfig).close()  # a missing or broken configuration: exit 2 now
        except ConfigError as e:
            raise UsageError(str(e)) from None
    else:
        if args.state is None and not Path(state).is_dir():
            raise UsageError(
                f"no --state given and no {DEFAULT_STATE}/ directory here: pass --state DIR "
                f"(manifests forming the cluster state) or --state {CLUSTER}"
            )
        discover_all([state])  # UnreadableInput (exit 2) when it does not exist
    certs = args.certs or DEFAULT_CERTS
    _ensure_serving_cert(certs, embedded=args.certs is None, address=args.address)
    options = ServeOptions(
        state=state,
        certs=certs,
        address=args.address,
        port=args.port,
        k8s_version=args.k8s_version,
        feature_gates=tuple(sorted(gates.items())),
        policy=args.policy,
        driver_schemas=args.driver_schemas,
        client_ca=args.client_ca,
        deadline_seconds=args.deadline_seconds,
        budget_steps=args.budget_steps,
        budget_seconds=args.budget_seconds,
        failure_mode=args.failure_mode,
        workers=args.workers,
        threads=args.threads or DEFAULT_THREADS,
        max_body_bytes=args.max_body_bytes or DEFAULT_MAX_BODY,
        reload_interval=args.reload_interval,
        keepalive=args.keepalive,
        read_timeout=args.read_timeout,
        max_connections=args.max_connections,
        drain_seconds=args.drain_seconds,
        graceful_timeout=args.graceful_timeout,
        log_level=args.log_level,
        access_log=args.access_log,
        kubeconfig=args.kubeconfig,
        watch_timeout_seconds=args.watch_timeout_seconds or None,
        watch_read_timeout_seconds=args.watch_read_timeout_seconds,
        list_page_size=args.list_page_size,
        extended_resources=args.extended_resources,
        field_manager=args.field_manager,
        audit_interval=args.audit_interval,
        audit_max_results=args.audit_max_results,
        audit_max_pending_pods=args.audit_max_pending_pods,
    )
    if args.client_ca and not Path(args.client_ca).is_file():
        raise UsageError(f"--client-ca {args.client_ca}: no such file")
    from webhook.server.run import serve
    from webhook.server.wiring import load_serve_policy

    load_serve_policy(options)  # a bad policy file is a usage error before gunicorn starts
    return serve(options)


def _check_extended_resources(args: argparse.Namespace, profile: Profile) -> None:
    """`native` needs a scheduler that serves extended resources through DRA; `translate` writes
    ResourceClaimTemplates through the API server, so it needs the live state's API access."""
    from webhook.server.options import CLUSTER

    mode = args.extended_resources
    if mode == "native" and not profile.enabled("DRAExtendedResource"):
        raise UsageError(
            f"--extended-resources native: the DRAExtendedResource feature gate is off in Kubernetes "
            f"{profile.version}, so its scheduler does not serve extended resources through DRA; use "
            "--extended-resources translate (or off)"
        )
    if mode == "translate" and args.state != CLUSTER and not args.kubeconfig:
        raise UsageError(
            "--extended-resources translate creates ResourceClaimTemplates through the API server: "
            "add --state cluster (in the cluster, or with --kubeconfig PATH)"
        )
    if not args.field_manager or len(args.field_manager) > 128 or not args.field_manager.isprintable():
        raise UsageError("--field-manager: 1 to 128 printable characters")


def _ensure_serving_cert(directory: str, embedded: bool, address: str) -> None:
    """The embedded default creates what is missing under certs/; an explicit --certs DIR must hold
    the files already (a missing Secret mount must not turn into a self-signed certificate)."""
    from webhook.server.certs import DEFAULT_DNS, DEFAULT_IPS, CertFiles, ensure_certs

    files = CertFiles(Path(directory))
    if files.tls_cert.exists() and files.tls_key.exists():
        return
    if not embedded:
        raise UsageError(
            f"--certs {directory}: no tls.crt and tls.key there; create them with "
            f"`draguard certs --dir {directory} --dns NAME` (or mount your own)"
        )
    ips = list(DEFAULT_IPS)
    try:
        ip = ipaddress.ip_address(address)
        if not ip.is_unspecified and str(ip) not in ips:
            ips.append(str(ip))
    except ValueError:
        pass
    dns = list(DEFAULT_DNS) + ([address] if _is_name(address) and address not in DEFAULT_DNS else [])
    ensure_certs(directory, dns, ips, renew=False)
    sys.stderr.write(
        f"draguard: created a CA and a serving certificate in {directory}/ ({', '.join(dns + ips)})\n"
    )


def _is_name(address: str) -> bool:
    try:
        ipaddress.ip_address(address)
        return False
    except ValueError:
        return bool(address)
