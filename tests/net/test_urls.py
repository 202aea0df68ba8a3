"""URL parsing: hosts read as a browser reads them, so no address hides from the policy."""

from __future__ import annotations

import ipaddress

import pytest

from toolrun.net.errors import UnsupportedUrl
from toolrun.net.urls import check_port, parse_url


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://127.0.0.1/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://0x7F000001/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://127.0.1/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1"),
        ("http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "127.0.0.1"),  # fullwidth
        ("http://127。0。0。1/", "127.0.0.1"),
        ("http://0/", "0.0.0.0"),
        ("http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254"),
        ("http://169.254.43518/", "169.254.169.254"),
        ("http://[::1]/", "::1"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"),
        ("http://[0:0:0:0:0:ffff:7f00:0001]/", "::ffff:7f00:1"),
    ],
)
def test_parse_url_reads_every_ip_spelling(url: str, host: str) -> None:
    target = parse_url(url)
    assert target.host == host
    assert target.ip == ipaddress.ip_address(host)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://Example.COM/", "example.com"),
        ("http://bücher.example/", "xn--bcher-kva.example"),
        ("http://BÜCHER.example/", "xn--bcher-kva.example"),
        ("http://example.com./", "example.com."),
        ("http://1.2.3.example/", "1.2.3.example"),
        ("http://0x7f.example/", "0x7f.example"),
    ],
)
def test_parse_url_normalises_names(url: str, host: str) -> None:
    target = parse_url(url)
    assert target.host == host
    assert target.ip is None


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/", "scheme 'ftp'"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("gopher://127.0.0.1:70/", "scheme 'gopher'"),
        ("javascript:alert(1)", "scheme 'javascript'"),
        ("example.com/page", "scheme missing"),
        ("http://user:pw@example.com/", "user name or password"),
        ("http://user@example.com/", "user name or password"),
        ("http:///path", "no host"),
        ("http://example.com:99999/", "invalid port"),
        ("http://example.com:0/", "invalid port"),
        ("http://example.com:8o/", "invalid port"),
        ("http://[::1/", "not a valid URL"),
        ("http://[::g]/", "not a valid URL"),
        ("http://256.0.0.1/", "invalid IPv4"),
        ("http://1.2.3.4.5/", "invalid IPv4"),
        ("http://0x100000000/", "invalid IPv4"),
        ("http://09.0.0.1/", "invalid IPv4"),
        ("http://exa mple.com/", "invalid host"),
        ("http://exa%00mple.com/", "invalid host"),
        ("http://exa<mple.com/", "invalid host"),
        ("http://%ff.example/", "invalid host"),
    ],
)
def test_parse_url_rejects(url: str, message: str) -> None:
    with pytest.raises(UnsupportedUrl) as caught:
        parse_url(url)
    assert message in caught.value.message
    assert caught.value.code == 400


def test_parse_url_reads_backslash_as_slash_like_a_browser() -> None:
    # Browsers send this to evil.example; a parser that saw user info would dial 127.0.0.1.
    target = parse_url("http://evil.example\\@127.0.0.1/")
    assert (target.host, target.target) == ("evil.example", "/@127.0.0.1/")


def test_parse_url_encodes_path_and_drops_fragment() -> None:
    target = parse_url("  http://example.com/a b/ü?q=1 2&x=ü#frag\n")
    assert target.target == "/a%20b/%C3%BC?q=1%202&x=%C3%BC"
    assert target.url == "http://example.com/a%20b/%C3%BC?q=1%202&x=%C3%BC"


def test_parse_url_keeps_existing_escapes_and_defaults_path() -> None:
    assert parse_url("http://example.com/a%2Fb?x=%20").target == "/a%2Fb?x=%20"
    assert parse_url("https://example.com").target == "/"


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/b", "http://example.com:8080/b"),
        ("c", "http://example.com:8080/dir/c"),
        ("../up", "http://example.com:8080/up"),
        ("?q=2", "http://example.com:8080/dir/page?q=2"),
        ("//other.example/x", "http://other.example/x"),
        ("https://secure.example/", "https://secure.example/"),
        ("\\\\other.example\\y", "http://other.example/y"),
    ],
)
def test_parse_url_resolves_relative_locations(location: str, expected: str) -> None:
    assert parse_url(location, base="http://example.com:8080/dir/page?q=1").url == expected


@pytest.mark.parametrize(
    ("url", "host_header"),
    [
        ("http://example.com/", "example.com"),
        ("http://example.com:80/", "example.com"),
        ("https://example.com:443/", "example.com"),
        ("http://example.com:443/", "example.com:443"),
        ("https://[::1]:8443/", "[::1]:8443"),
    ],
)
def test_host_header_omits_default_port(url: str, host_header: str) -> None:
    assert parse_url(url).host_header == host_header


@pytest.mark.parametrize("port", [80, 443, 1024, 8080, 8443, 40000, 65535])
def test_check_port_allows(port: int) -> None:
    check_port(parse_url(f"http://example.com:{port}/"))


@pytest.mark.parametrize("port", [1, 21, 22, 25, 53, 110, 143, 445, 1023, 2049, 6000, 6667, 10080])
def test_check_port_refuses(port: int) -> None:
    with pytest.raises(UnsupportedUrl, match=f"port {port} is not allowed"):
        check_port(parse_url(f"http://example.com:{port}/"))
