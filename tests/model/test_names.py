"""Name formats: vectors from apimachinery's validation tests and DRA validation behaviour."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webhook.model import names as n

LABEL_GOOD = [
    "a",
    "ab",
    "abc",
    "a1",
    "a-1",
    "a--1--2--b",
    "0",
    "01",
    "012",
    "1a",
    "1-a",
    "1--a--b--2",
    "a" * 63,
]
LABEL_BAD = [
    "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1",
    "_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2",
    " ", "a ", " a", "a b", "1 ", " 1", "1 2", "a" * 64, "a\n", "é",
]  # fmt: skip
SUB_GOOD = [
    "a", "a--1--2--b", "0.a", "a.1", "1--a--b--2.1", "a.b.c.d.e", "1.2.3.4.5", "11.22.33.44.55", "a" * 253,
]  # fmt: skip
SUB_BAD = [
    "", "A", "aBc", "-", "a-", "-a", "_", "a_b", ".", "a.", ".a", "a..b", "1..2", " ", "a b",
    "A.a", "ab.A", "a.B.c.d.e", "a@b", "a,b", "a;b", "a:b", "a%b", "a?b", "a$b", "a" * 254, "a.b\n",
]  # fmt: skip


@pytest.mark.parametrize("v", LABEL_GOOD)
def test_dns_label_good(v: str) -> None:
    assert n.dns_label(v) == []
    assert n.device_name(v) == []


@pytest.mark.parametrize("v", LABEL_BAD)
def test_dns_label_bad(v: str) -> None:
    assert n.dns_label(v)


def test_dns_label_messages() -> None:
    assert n.dns_label("a.b") == ["must not contain dots"]
    (msg,) = n.dns_label("A")
    assert msg.startswith(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"
    )
    assert msg.endswith(
        "(e.g. 'my-name' or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    )
    assert n.dns_label("a" * 64) == ["must be no more than 63 characters"]
    assert len(n.dns_label("A" * 64)) == 2


@pytest.mark.parametrize("v", SUB_GOOD)
def test_dns_subdomain_good(v: str) -> None:
    assert n.dns_subdomain(v) == []
    assert n.node_name(v) == []
    assert n.resource_claim_name(v) == []


@pytest.mark.parametrize("v", SUB_BAD)
def test_dns_subdomain_bad(v: str) -> None:
    assert n.dns_subdomain(v)


def test_dns_subdomain_messages() -> None:
    assert n.dns_subdomain("a" * 254) == ["must be no more than 253 characters"]
    (msg,) = n.dns_subdomain("A.b")
    assert "a lowercase RFC 1123 subdomain" in msg and "(e.g. 'example.com'," in msg


def test_length_counts_utf8_bytes() -> None:
    # 62 ASCII bytes + one 2-byte character = 64 bytes, like Go's len().
    assert "must be no more than 63 characters" in n.dns_label("a" * 62 + "é")


@pytest.mark.parametrize("v", ["a", "ab", "abc", "a1", "_a", "a_", "a_b", "a_1", "a__1__2__b", "__abc_123", "A", "AB", "AbC", "A1", "_A", "A_", "A_B", "A_1", "A__1__2__B", "__123_ABC"])  # fmt: skip
def test_c_identifier_good(v: str) -> None:
    assert n.c_identifier(v) == []


@pytest.mark.parametrize("v", ["", "1", "123", "1a", "-", "a-", "-a", "1-", "-1", "1_", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a", "a b", "1 ", " 1", "1 2", "#a#"])  # fmt: skip
def test_c_identifier_bad(v: str) -> None:
    (msg,) = n.c_identifier(v)
    assert msg.startswith("a valid C identifier must start with alphabetic character or '_'")


LABEL_KEY_GOOD = [
    "simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple", "now-with-dashes/simple",
    "now.with.dots/simple", "1-num.2-num/3-num", "1234/5678", "1.2.3.4/5678", "Uppercase_Is_OK_123",
    "example.com/Uppercase_Is_OK_123", "requests.storage-foo", "a" * 63, "a" * 253 + "/" + "b" * 63,
]  # fmt: skip
LABEL_KEY_BAD = [
    "nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-", "only/one/slash", "Example.com/abc",
    "example_com/abc", "example.com/", "/simple", "a" * 64, "a" * 254 + "/abc", "",
]  # fmt: skip


@pytest.mark.parametrize("v", LABEL_KEY_GOOD)
def test_label_key_good(v: str) -> None:
    assert n.label_key(v) == []


@pytest.mark.parametrize("v", LABEL_KEY_BAD)
def test_label_key_bad(v: str) -> None:
    assert n.label_key(v)


def test_label_key_messages() -> None:
    assert n.label_key("/simple") == ["prefix part must be non-empty"]
    assert n.label_key("example.com/") == [
        "name part must be non-empty",
        n.label_key("example.com/-")[0],
    ]
    assert n.label_key("a" * 64)[0] == "name part must be no more than 63 bytes"
    assert n.label_key("a" * 254 + "/abc") == ["prefix part must be no more than 253 bytes"]
    assert n.label_key("Example.com/abc")[0].startswith("prefix part a lowercase RFC 1123 subdomain")
    (msg,) = n.label_key("only/one/slash")
    assert msg.startswith("a valid label key must consist of") and "optional DNS subdomain prefix" in msg


@pytest.mark.parametrize("v", ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234", "A", "a_b", "a.b", "a" * 63, ""])  # fmt: skip
def test_label_value_good(v: str) -> None:
    assert n.label_value(v) == []


@pytest.mark.parametrize("v", ["nospecialchars%^=@", "Tama-nui-te-rā.is.Māori.sun", "\\backslashes\\are\\bad", "-starts-with-dash", "ends-with-dash-", ".starts.with.dot", "ends.with.dot.", "a" * 64])  # fmt: skip
def test_label_value_bad(v: str) -> None:
    assert n.label_value(v)


def test_label_value_too_long_message() -> None:
    assert n.label_value("a" * 64) == ["must be no more than 63 bytes"]


# --- DRA names -------------------------------------------------------------------------------


@pytest.mark.parametrize("v", ["gpu.example.com", "dra.example.com", "a", "GPU.Example.COM", "a" * 63])
def test_driver_name_good(v: str) -> None:
    assert n.driver_name(v) == []


def test_driver_name_upper_is_accepted_but_detectable() -> None:
    assert n.driver_name("Gpu.Example.com") == []
    assert n.driver_name_has_upper("Gpu.Example.com")
    assert not n.driver_name_has_upper("gpu.example.com")


def test_driver_name_bad() -> None:
    assert [n.render("", m) for m in n.driver_name("")] == ["Required value"]
    assert [n.render("x", m) for m in n.driver_name("a" * 64)] == ["Too long: may not be more than 63 bytes"]
    (msg,) = n.driver_name("gpu_example.com")
    assert "RFC 1123 subdomain" in msg
    assert n.render("gpu_example.com", msg).startswith(
        'Invalid value: "gpu_example.com": a lowercase RFC 1123'
    )
    assert n.driver_name("-gpu.example.com") and n.driver_name("gpu..example.com")


@pytest.mark.parametrize("v", ["pool", "node-1", "a.b/c.d", "x/y/z", "a" * 253, "a" * 100 + "/" + "b" * 100])
def test_pool_name_good(v: str) -> None:
    assert n.pool_name(v) == []


def test_pool_name_bad() -> None:
    assert [n.render("", m) for m in n.pool_name("")] == ["Required value"]
    # Upstream reports the total length and then the one segment's own DNS-subdomain length.
    assert [n.render("", m)[:45] for m in n.pool_name("a" * 254)] == [
        "Too long: may not be more than 253 bytes",
        'Invalid value: "' + "a" * 29,
    ]
    msgs = n.pool_name("a//b")
    assert len(msgs) == 1 and n.render("a//b", msgs[0]).startswith(
        'Invalid value: "": a lowercase RFC 1123 subdomain'
    )
    assert len(n.pool_name("/a/")) == 2
    msgs = n.pool_name("ok/Bad")
    assert len(msgs) == 1 and n.render("ok/Bad", msgs[0]).startswith('Invalid value: "Bad":')


@pytest.mark.parametrize(
    "v",
    [
        "model",
        "_x",
        "memory_GiB",
        "a" * 32,
        "dra.example.com/model",
        "Dra.Example.com/model",
        "a" * 63 + "/" + "b" * 32,
    ],
)
def test_attribute_key_good(v: str) -> None:
    assert n.attribute_key(v) == []


def test_attribute_key_more_than_one_slash_is_accepted_like_upstream() -> None:
    assert n.attribute_key("a/b/c") == []
    assert n.attribute_key("a/b/c", fully_qualified=True) == []
    assert n.attribute_key_has_extra_slash("a/b/c")
    assert not n.attribute_key_has_extra_slash("a/b")


def _rendered(v: str, fq: bool = False) -> list[str]:
    return [n.render(v, m) for m in n.attribute_key(v, fq)]


def test_attribute_key_bad() -> None:
    assert _rendered("a" * 33) == ["Too long: may not be more than 32 bytes"]
    assert _rendered("1x")[0].startswith('Invalid value: "1x": a valid C identifier')
    assert _rendered("dra.example.com/my-attr")[0].startswith(
        'Invalid value: "my-attr": a valid C identifier'
    )
    assert _rendered("/model") == ['Invalid value: "": the domain must not be empty']
    assert _rendered("dra.example.com/") == ['Invalid value: "": the name must not be empty']
    assert _rendered("a" * 64 + "/x") == ["Too long: may not be more than 63 bytes"]
    assert _rendered("dra_example.com/x")[0].startswith(
        'Invalid value: "dra_example.com": a lowercase RFC 1123'
    )
    assert _rendered("model", True) == [
        'Invalid value: "model": a fully qualified name must be a domain and a name separated by a slash'
    ]
    assert _rendered("dra.example.com/model", True) == []


@pytest.mark.parametrize(
    "v", ["example.com/gpu", "nvidia.com/gpu", "deviceclass.resource.k8s.io/gpu-class", "a/" + "b" * 63]
)
def test_extended_resource_name_good(v: str) -> None:
    assert n.extended_resource_name(v) == []


@pytest.mark.parametrize(
    "v",
    [
        "gpu",  # no "/": native resource
        "kubernetes.io/gpu",
        "foo.kubernetes.io/gpu",  # contains kubernetes.io/
        "requests.example.com/gpu",
        "example.com/-gpu",
        "example.com/" + "b" * 64,  # name part > 63
        "a/b/c",  # requests.a/b/c is not a label key
        "Example.com/gpu",
    ],
)
def test_extended_resource_name_bad(v: str) -> None:
    assert n.extended_resource_name(v) == ["must be a valid extended resource name"]
    assert n.extended_resource_name_reasons(v)


def test_extended_resource_name_reasons() -> None:
    assert n.extended_resource_name_reasons("gpu") == [
        "a name must be a domain-prefixed path, such as 'example.com/my-prop'"
    ]
    assert n.extended_resource_name_reasons("x.kubernetes.io/gpu") == [
        'must not have "kubernetes.io/" domain'
    ]


UUID = "0b0a1f2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b"


def test_uuid_good() -> None:
    assert n.uuid(UUID) == []


@pytest.mark.parametrize(
    ("v", "msg"),
    [
        ("", "error validating uid: invalid UUID length: 0"),
        ("123", "error validating uid: invalid UUID length: 3"),
        (UUID[:-1] + "g", "error validating uid: invalid UUID format"),
        (UUID.replace("-", "_"), "error validating uid: invalid UUID format"),
        ("(" + UUID + ")", "error validating uid: invalid bracketed UUID format"),
        ("urx:uuid:" + UUID, 'error validating uid: invalid urn prefix: "urx:uuid:"'),
        (UUID.upper(), "uid must be in RFC 4122 normalized form"),
        ("{" + UUID + "}", "uid must be in RFC 4122 normalized form"),
        ("urn:uuid:" + UUID, "uid must be in RFC 4122 normalized form"),
        (UUID.replace("-", ""), "uid must be in RFC 4122 normalized form"),
    ],
)
def test_uuid_bad(v: str, msg: str) -> None:
    (got,) = n.uuid(v)
    assert got.startswith(msg)


def test_go_quote() -> None:
    assert n.go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert n.go_quote("a\nb\x01") == '"a\\nb\\x01"'
    assert n.go_quote("rā") == '"rā"'


_LABEL_ALPHABET = st.sampled_from("abz09-.A_/")


@given(st.text(alphabet=_LABEL_ALPHABET, max_size=70))
def test_label_is_subdomain_without_dots(v: str) -> None:
    # A DNS label is exactly a DNS subdomain that has no dots and at most 63 bytes.
    assert (n.dns_label(v) == []) == (n.dns_subdomain(v) == [] and "." not in v and len(v) <= 63)


@given(st.text(alphabet=_LABEL_ALPHABET, max_size=40))
def test_fully_qualified_is_qualified_plus_slash(v: str) -> None:
    fq_ok = n.attribute_key(v, fully_qualified=True) == []
    assert fq_ok == (n.attribute_key(v) == [] and "/" in v)
