"""The state directory loader: only changed files are read, broken files keep their last good objects,
removed files take theirs away, and the loader thread publishes into a store."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.builders import device_class, dump_yaml, line_of, obj
from webhook.config.context import Context
from webhook.config.profile import load_profile
from webhook.io.files import UnreadableInput, discover_all
from webhook.server.loader import ManifestDirectory, StateLoader, manifest_files


def classes(*names: str) -> str:
    """DeviceClasses `names` (an empty spec), one YAML document each."""
    return dump_yaml(device_class(name) for name in names)


def _dir(root: Path) -> ManifestDirectory:
    return ManifestDirectory(str(root), Context(profile=load_profile("1.37"), lint=False))


def _names(d: ManifestDirectory) -> list[str]:
    return sorted(o["metadata"]["name"] for o in d.objects())


def _write(path: Path, text: str) -> None:
    """Replace the file (new inode), as an atomic writer does."""
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def test_finds_what_discover_finds(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    for rel in ("a.yaml", "b.yml", "c.json", "d.txt", "sub/e.yaml", ".hidden/f.yaml"):
        (tmp_path / rel).write_text("{}\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "a.yaml")
    (tmp_path / "broken.yaml").symlink_to(tmp_path / "missing.yaml")
    os.mkfifo(tmp_path / "fifo.yaml")
    assert list(manifest_files(str(tmp_path))) == discover_all([str(tmp_path)]).files
    assert list(manifest_files(str(tmp_path / "a.yaml"))) == [str(tmp_path / "a.yaml")]
    with pytest.raises(UnreadableInput):
        manifest_files(str(tmp_path / "gone"))


def test_changes_removals_and_broken_files(tmp_path: Path) -> None:
    _write(tmp_path / "a.yaml", classes("a"))
    _write(tmp_path / "b.yaml", classes("b", "b2"))
    d = _dir(tmp_path)
    first = d.scan()
    assert sorted(Path(p).name for p in first.changed) == ["a.yaml", "b.yaml"]
    assert _names(d) == ["a", "b", "b2"]
    a_obj = next(o for o in d.objects() if o["metadata"]["name"] == "a")
    assert d.scan().changed == []  # nothing changed, nothing read
    _write(tmp_path / "b.yaml", classes("b3"))
    r = d.scan()
    assert [Path(p).name for p in r.changed] == ["b.yaml"]
    assert _names(d) == ["a", "b3"]
    assert [o["metadata"]["name"] for o in r.upserts] == ["b3"]
    assert sorted(k[2] for k in r.deletes) == ["b", "b2"]
    assert any(o is a_obj for o in d.objects())  # unchanged files hand on the same dicts
    _write(tmp_path / "b.yaml", "kind: DeviceClass\nmetadata: {name: [oops\n")
    r = d.scan()
    assert [Path(p).name for p in r.unparsable] == ["b.yaml"] and r.changed == []
    assert _names(d) == ["a", "b3"]  # the last good objects stay
    assert d.scan().unparsable == []  # and the broken file is not read again until it changes
    _write(tmp_path / "b.yaml", classes("Bad_Name", "good"))
    r = d.scan()
    assert r.invalid == 1 and _names(d) == ["a", "good"]  # an invalid object is left out, not the file
    (tmp_path / "a.yaml").unlink()
    r = d.scan()
    assert [Path(p).name for p in r.removed] == ["a.yaml"] and _names(d) == ["good"]


def test_only_changed_documents_are_validated_again(tmp_path: Path) -> None:
    docs = [device_class(f"c{i}") for i in range(10)]
    _write(tmp_path / "many.yaml", dump_yaml(docs))
    d = _dir(tmp_path)
    assert d.scan().validated == 10
    before = {o["metadata"]["name"]: o for o in d.objects()}
    docs[3] = device_class("c3", selectors=[])
    _write(tmp_path / "many.yaml", "# a comment moves every line\n" + dump_yaml(docs))
    r = d.scan()
    assert r.validated == 1 and [o["metadata"]["name"] for o in r.upserts] == ["c3"] and r.deletes == []
    after = {o["metadata"]["name"]: o for o in d.objects()}
    assert all(after[n] is before[n] for n in before if n != "c3") and after["c3"] is not before["c3"]
    docs[5] = device_class("Bad_Name")
    _write(tmp_path / "many.yaml", dump_yaml(docs))
    r = d.scan()
    assert r.invalid == 1 and [k[2] for k in r.deletes] == ["c5"]


def test_the_last_file_defining_an_object_wins(tmp_path: Path) -> None:
    _write(tmp_path / "a.yaml", dump_yaml([device_class("same", "true")]))
    _write(tmp_path / "b.yaml", dump_yaml([device_class("same", "false")]))
    d = _dir(tmp_path)
    d.scan()
    (obj,) = d.objects()
    assert obj["spec"]["selectors"][0]["cel"]["expression"] == "false"
    (tmp_path / "b.yaml").unlink()
    r = d.scan()
    assert r.deletes == [] and [o["spec"]["selectors"][0]["cel"]["expression"] for o in r.upserts] == ["true"]
    (tmp_path / "a.yaml").unlink()
    assert d.scan().deletes == [("DeviceClass", "", "same")] and d.objects() == []


def test_a_new_broken_file_contributes_what_parsed(tmp_path: Path) -> None:
    _write(tmp_path / "a.yaml", classes("a") + "---\nkind: [\n")
    d = _dir(tmp_path)
    d.scan()
    assert _names(d) == ["a"]


def test_the_loader_publishes_the_first_load_and_every_change(tmp_path: Path) -> None:
    from webhook.state.store import StateStore

    _write(tmp_path / "a.yaml", classes("a"))
    store = StateStore(load_profile("1.37"))
    published: list[int] = []
    loader = StateLoader(_dir(tmp_path), store, 0.01, on_publish=lambda s, t, r: published.append(s.version))
    assert loader.load_once() is True and loader.ready.is_set()
    first = store.snapshot()
    assert loader.load_once() is False and store.snapshot() is first  # no change: no publish
    _write(tmp_path / "b.yaml", classes("b"))
    assert loader.load_once() is True
    assert first.counts()["DeviceClass"] == 1 and store.snapshot().counts()["DeviceClass"] == 2
    assert len(published) == 2 and published[1] > published[0]
    loader.start()
    (tmp_path / "a.yaml").unlink()
    _write(tmp_path / "c.yaml", classes("c", "d"))
    end = time.monotonic() + 60
    while store.snapshot().counts()["DeviceClass"] != 3 and time.monotonic() < end:
        time.sleep(0.01)
    loader.stop()
    assert store.snapshot().counts()["DeviceClass"] == 3
    assert first.counts()["DeviceClass"] == 1  # a published snapshot never changes


BETA = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: node-1-gpus}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes:
        model: {string: A100}
      capacity:
        memory: {value: 40Gi}
---
apiVersion: resource.k8s.io/v1beta2
kind: ResourceClaim
metadata: {name: one, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}]
---
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: drain-node-1}
spec:
  deviceSelector: {driver: gpu.example.com, pool: node-1}
  taint: {key: maintenance, effect: NoSchedule}
"""


def test_beta_and_alpha_objects_of_the_state_are_converted_to_v1(tmp_path: Path) -> None:
    # `kubectl get resourceslices.v1beta1.resource.k8s.io -o yaml` and the like: objects the cluster
    # stores (as v1) whatever version they are read in, though a default API server serves none of these
    _write(tmp_path / "state.yaml", BETA)
    d = _dir(tmp_path)
    r = d.scan()
    assert r.invalid == 0
    got = {o["kind"]: o for o in d.objects()}
    assert {o["apiVersion"] for o in got.values()} == {"resource.k8s.io/v1"}
    assert got["ResourceSlice"]["spec"]["devices"][0]["attributes"] == {"model": {"string": "A100"}}
    assert got["ResourceClaim"]["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    assert got["DeviceTaintRule"]["spec"]["taint"]["key"] == "maintenance"


def test_draguard_policies_in_the_state_directory_are_left_out_with_a_note(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A `--state DIR` is the cluster's DRA state; its policies come from `--policy FILE` (docs/webhook.md)."""
    text = dump_yaml([device_class("a"), obj("DraguardPolicy", "p", api="draguard.io/v1alpha1", spec={})])
    _write(tmp_path / "a.yaml", text)
    d = _dir(tmp_path)
    with caplog.at_level("WARNING", logger="draguard.state"):
        result = d.scan()
    assert _names(d) == ["a"] and result.invalid == 0
    line = line_of(text, "apiVersion: draguard.io")  # the document's first line
    assert (
        f"{tmp_path / 'a.yaml'}:{line}: a DraguardPolicy is not applied from the state directory"
        in caplog.text
    )
