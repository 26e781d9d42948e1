"""File discovery over a repository as it is (issue 15 §3): `--exclude` globs and Helm charts, on real
files (tests/fixtures/repo-shapes and small trees made here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from webhook.io.files import HelmChart, UnreadableInput, discover_all, excluded

SHAPES = Path(__file__).resolve().parents[1] / "fixtures" / "repo-shapes"
CHART = SHAPES / "charts" / "gpu-inference"


@pytest.mark.parametrize(
    ("path", "pattern", "hit"),
    [
        ("repo/vendor", "vendor", True),  # a directory by its name
        ("repo/vendor", "vendor/", True),  # a trailing / changes nothing
        ("repo/vendored", "vendor", False),  # a whole component, not a prefix of one
        ("./repo/web/models.json", "*.json", True),  # `*` matches across `/` (fnmatch)
        ("./repo/web/models.json", "./repo/web/*", True),  # a leading ./ on either side is ignored
        ("repo/charts/a/templates/x.yaml", "templates/*.yaml", True),  # a tail after a /
        ("repo/charts/a/templates/x.yaml", "charts/*/templates", True),  # a directory on its way
        ("repo/charts/a/templates", "charts/*/templates", True),
        ("repo/charts/a/values.yaml", "charts/*/templates", False),
        ("repo/Web/models.json", "web/*", False),  # case-sensitive
        ("/abs/repo/a.yaml", "/abs/*", True),  # an absolute path as given
        ("repo/a.yaml", "a.yml", False),
    ],
)
def test_a_glob_matches_the_path_or_a_part_of_it_made_of_whole_components(
    path: str, pattern: str, hit: bool
) -> None:
    assert excluded(path, [pattern]) is hit


def test_a_helm_charts_templates_are_not_listed_and_the_chart_is_named() -> None:
    found = discover_all([str(SHAPES)])
    assert found.charts == [HelmChart(str(CHART), str(CHART / "Chart.yaml"), 2)]
    assert not [f for f in found.files if "/templates/" in f]
    assert str(CHART / "Chart.yaml") in found.files and str(CHART / "values.yaml") in found.files


def test_a_template_named_on_the_command_line_is_read() -> None:
    template = str(CHART / "templates" / "deployment.yaml")
    assert discover_all([template]).files == [template]
    # the templates/ directory named itself is walked too: it is not inside a chart's walk
    assert discover_all([str(CHART / "templates")]).files == [
        str(CHART / "templates" / "claim-template.yaml"),
        template,
    ]


def test_a_templates_directory_without_a_chart_yaml_is_walked(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "a.yaml").write_text("{}\n")
    (tmp_path / "values.yaml").write_text("x: 1\n")  # no Chart.yaml: not a chart
    found = discover_all([str(tmp_path)])
    assert found.files == [str(tmp_path / "templates" / "a.yaml"), str(tmp_path / "values.yaml")]
    assert found.charts == []


def test_an_empty_templates_directory_leaves_nothing_to_say(tmp_path: Path) -> None:
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "NOTES.txt").write_text("thanks\n")
    assert discover_all([str(tmp_path)]).charts == []


def test_an_excluded_directory_is_not_entered_and_counts_once(tmp_path: Path) -> None:
    vendor = tmp_path / "vendor" / "deep"
    vendor.mkdir(parents=True)
    (vendor / "a.yaml").write_text("{}\n")
    os.mkfifo(vendor / "pipe.yaml")  # listed, it would be a skipped-file warning
    (tmp_path / "b.yaml").write_text("{}\n")
    found = discover_all([str(tmp_path)], ["vendor"])
    assert found.files == [str(tmp_path / "b.yaml")]
    assert (found.excluded, found.skipped) == ([str(tmp_path / "vendor")], [])


def test_exclusion_applies_to_named_paths_after_checking_they_exist(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[]\n")
    (tmp_path / "b.yaml").write_text("{}\n")
    found = discover_all([str(tmp_path / "a.json"), str(tmp_path / "b.yaml")], ["*.json"])
    assert (found.files, found.excluded) == ([str(tmp_path / "b.yaml")], [str(tmp_path / "a.json")])
    with pytest.raises(UnreadableInput, match="no such file"):
        discover_all([str(tmp_path / "typo.json")], ["*.json"])
    assert discover_all(["-"], ["*"]).files == ["-"]  # stdin has no path to match


def test_a_file_is_excluded_alike_whether_named_or_found_in_a_walk(tmp_path: Path) -> None:
    """pre-commit names every staged file: `--exclude 'charts/*/templates'` must leave out a template
    named on the command line as it leaves out the directory in a walk."""
    templates = tmp_path / "charts" / "gpu" / "templates"
    templates.mkdir(parents=True)
    (templates / "a.yaml").write_text("{}\n")
    (tmp_path / "charts" / "gpu" / "values.yaml").write_text("x: 1\n")
    glob = ["charts/*/templates"]
    walked = discover_all([str(tmp_path)], glob)
    named = discover_all([str(templates / "a.yaml"), str(tmp_path / "charts" / "gpu" / "values.yaml")], glob)
    assert walked.files == named.files == [str(tmp_path / "charts" / "gpu" / "values.yaml")]
    assert (walked.excluded, named.excluded) == ([str(templates)], [str(templates / "a.yaml")])
