"""`draguard convert` throughput: documents per second and MB/s of the conversion of generated beta
manifests (v1beta1 slices and claims, which take the round trip; v1beta2 classes, which take the
apiVersion-only path), and of validating the same input with --runtime-config.

    python bench/convert_bench.py              # 2,000 documents of each sort
    python bench/convert_bench.py --docs 200

Figures taken while other work runs on the machine are indicative only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from webhook.config.context import Context  # noqa: E402
from webhook.convert.rewrite import convert_text  # noqa: E402
from webhook.convert.served import parse_runtime_config  # noqa: E402
from webhook.validate import check_file_text  # noqa: E402

SLICE = """---
# node-{i}'s GPUs
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: node-{i}-gpus
spec:
  driver: gpu.example.com
  nodeName: node-{i}
  pool: {{name: node-{i}, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: gpu-0   # first
    basic:
      attributes:
        model: {{string: X100}}
        index: {{int: 0}}
      capacity:
        memory: {{value: 80Gi}}
  - name: gpu-1
    basic:
      attributes:
        model: {{string: X100}}
        index: {{int: 1}}
      capacity:
        memory: {{value: 80Gi}}
"""
CLAIM = """---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {{name: claim-{i}, namespace: ml}}
spec:
  devices:
    requests:
    - name: gpu   # the request
      deviceClassName: example-gpu
      count: 2
      selectors:
      - cel: {{expression: "device.attributes['gpu.example.com'].model == 'X100'"}}
"""
CLASS = """---
apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata: {{name: class-{i}}}
spec:
  selectors:
  - cel: {{expression: "device.driver == 'gpu.example.com'"}}
"""


def _measure(name: str, text: str, docs: int, fn: object) -> None:
    start = time.perf_counter()
    fn(text)  # type: ignore[operator]
    took = time.perf_counter() - start
    mb = len(text.encode()) / 1e6
    print(f"{name:<34} {docs:>6} docs  {took:7.2f} s  {docs / took:8.0f} docs/s  {mb / took:6.2f} MB/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=2000)
    n = ap.parse_args().docs
    beta = Context(runtime_config=parse_runtime_config("api/beta=true"))
    for name, template in (("v1beta1 ResourceSlice (round trip)", SLICE), ("v1beta1 ResourceClaim (round trip)", CLAIM),
                           ("v1beta2 DeviceClass (apiVersion)", CLASS)):  # fmt: skip
        text = "".join(template.format(i=i) for i in range(n))
        _measure(f"convert {name}", text, n, lambda t: convert_text(t, "bench.yaml"))
        _measure(f"validate {name}", text, n, lambda t: check_file_text(t, "bench.yaml", beta))


if __name__ == "__main__":
    main()
