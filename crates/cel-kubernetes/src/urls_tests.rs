//! Tests of the `urls` library, through the Kubernetes environment.

use super::super::test_support::{assert_costs, assert_errors, assert_values, ok};
use celer_cel::Value;
use celer_cel::value::{Key, OwnedMap};

fn s(x: &str) -> Value<'static> {
    Value::string(x)
}

#[test]
fn url_table() {
    let t = Value::Bool(true);
    let f = Value::Bool(false);
    assert_values(&[
        (
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            t.clone(),
        ),
        ("isURL('/absolute-path')", t.clone()),
        ("isURL('https://a:b:c/')", f.clone()),
        ("isURL('../relative-path')", f.clone()),
        ("isURL('relative')", f.clone()),
        ("isURL('')", f.clone()),
        ("isURL('*')", t.clone()),
        ("isURL('mailto:someone@example.com')", t.clone()),
        ("isURL('https://[::1]:80/')", t.clone()),
        ("isURL('https://[1.2.3.4]/')", f.clone()),
        ("isURL('https://example.com/a\\tb')", f.clone()),
        ("isURL('http://a b.com/')", f.clone()),
        ("isURL('//example.com/x')", t.clone()),
        ("url('/path').getScheme()", s("")),
        ("url('https://example.com/').getScheme()", s("https")),
        ("url('HTTPS://example.com/').getScheme()", s("https")),
        (
            "url('https://example.com:80/').getHost()",
            s("example.com:80"),
        ),
        ("url('https://example.com/').getHost()", s("example.com")),
        ("url('https://[::1]:80/').getHost()", s("[::1]:80")),
        ("url('https://[::1]/').getHost()", s("[::1]")),
        ("url('/path').getHost()", s("")),
        (
            "url('https://example.com:80/').getHostname()",
            s("example.com"),
        ),
        ("url('https://127.0.0.1:80/').getHostname()", s("127.0.0.1")),
        ("url('https://[::1]:80/').getHostname()", s("::1")),
        ("url('/path').getHostname()", s("")),
        ("url('https://example.com:80/').getPort()", s("80")),
        ("url('https://example.com/').getPort()", s("")),
        ("url('https://example.com:/').getPort()", s("")),
        ("url('/path').getPort()", s("")),
        (
            "url('https://example.com/path').getEscapedPath()",
            s("/path"),
        ),
        (
            "url('https://example.com/path with spaces/').getEscapedPath()",
            s("/path%20with%20spaces/"),
        ),
        (
            "url('https://example.com/a%2fb').getEscapedPath()",
            s("/a%2fb"),
        ),
        (
            "url('https://example.com/caf%C3%A9').getEscapedPath()",
            s("/caf%C3%A9"),
        ),
        ("url('https://example.com').getEscapedPath()", s("")),
        (
            "url('https://example.com/p#frag').getEscapedPath()",
            s("/p"),
        ),
        (
            "url('https://example.com/path?').getQuery()",
            Value::map(OwnedMap::new()),
        ),
        (
            "url('https://example.com/path').getQuery()",
            Value::map(OwnedMap::new()),
        ),
        (
            "url('https://example.com/a') == url('https://example.com/a')",
            t.clone(),
        ),
        (
            "url('https://example.com/a') == url('https://example.com/b')",
            f.clone(),
        ),
        (
            "url('https://example.com/a%20b') == url('https://example.com/a b')",
            t.clone(),
        ),
        ("url('mailto:x@example.com').getHost()", s("")),
    ]);
}

#[test]
fn queries() {
    let q = ok("url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()");
    let mut want = OwnedMap::new();
    want.insert(Key::String("k1".into()), Value::list(vec![s("a")]));
    want.insert(Key::String("k2".into()), Value::list(vec![s("b"), s("c")]));
    assert!(celer_cel::ops::equals(&q, &Value::map(want)), "{q:?}");
    let q = ok("url('https://example.com/path?key with spaces=value with spaces').getQuery()");
    let mut want = OwnedMap::new();
    want.insert(
        Key::String("key with spaces".into()),
        Value::list(vec![s("value with spaces")]),
    );
    assert!(celer_cel::ops::equals(&q, &Value::map(want)), "{q:?}");
    // Malformed pairs and semicolons are dropped, '+' is a space, a bare key has value ''.
    let q = ok("url('/p?a=1;b=2&c=%zz&d=x+y&e').getQuery()");
    let mut want = OwnedMap::new();
    want.insert(Key::String("d".into()), Value::list(vec![s("x y")]));
    want.insert(Key::String("e".into()), Value::list(vec![s("")]));
    assert!(celer_cel::ops::equals(&q, &Value::map(want)), "{q:?}");
}

#[test]
fn url_errors() {
    let p = "URL parse error during conversion from string: ";
    let cases: Vec<(String, String)> = vec![
        (
            "url('https://a:b:c/')".into(),
            format!(r#"{p}parse "https://a:b:c/": invalid port ":b:c" after host"#),
        ),
        (
            "url('../relative-path')".into(),
            format!(r#"{p}parse "../relative-path": invalid URI for request"#),
        ),
        ("url('')".into(), format!(r#"{p}parse "": empty url"#)),
        (
            "url(':x')".into(),
            format!(r#"{p}parse ":x": missing protocol scheme"#),
        ),
        (
            "url('https://[::1/')".into(),
            format!(r#"{p}parse "https://[::1/": missing ']' in host"#),
        ),
        (
            "url('https://[1.2.3.4]/')".into(),
            format!(r#"{p}parse "https://[1.2.3.4]/": invalid IP-literal"#),
        ),
        (
            "url('https://[zz]/')".into(),
            format!(
                r#"{p}parse "https://[zz]/": invalid host: ParseAddr("zz"): unable to parse IP"#
            ),
        ),
        (
            "url('/a%zz')".into(),
            format!(r#"{p}parse "/a%zz": invalid URL escape "%zz""#),
        ),
        (
            "url('/a%2')".into(),
            format!(r#"{p}parse "/a%2": invalid URL escape "%2""#),
        ),
        (
            "url('https://ex%2ample.com/')".into(),
            format!(r#"{p}parse "https://ex%2ample.com/": invalid URL escape "%2a""#),
        ),
        (
            "url('http://a b.com/')".into(),
            format!(r#"{p}parse "http://a b.com/": invalid character " " in host name"#),
        ),
        (
            "url('http://a\\nb/')".into(),
            format!(r#"{p}parse "http://a\nb/": net/url: invalid control character in URL"#),
        ),
        (
            "url('http://us^er@host/')".into(),
            format!(r#"{p}parse "http://us^er@host/": net/url: invalid userinfo"#),
        ),
        (
            "url('/p#%zz')".into(),
            format!(r#"{p}parse "/p#%zz": invalid URL escape "%zz""#),
        ),
        (
            "dyn(1).getHost()".into(),
            "no such overload: getHost(int)".into(),
        ),
    ];
    let refs: Vec<(&str, &str)> = cases
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_errors(&refs);
}

#[test]
fn costs_follow_kubernetes() {
    assert_costs(&[
        // ceil(20 * 0.1)
        ("url('https://example.com')", 2),
        ("isURL('https://example.com')", 1),
        ("url('https://example.com').getHost()", 3),
        ("url('https://example.com').getQuery()", 3),
    ]);
}

/// Kubernetes declares `net.IP` and `net.CIDR` as type identifiers, but not its other types:
/// `kubernetes.URL`, `kubernetes.Semver` and `kubernetes.NamedFormat` are undeclared names.
#[test]
fn only_net_types_are_type_identifiers() {
    for expr in [
        "type(url('/a')) == kubernetes.URL",
        "type(semver('1.0.0')) == kubernetes.Semver",
        "type(format.uuid()) == kubernetes.NamedFormat",
    ] {
        let e = super::super::test_support::check_err(expr);
        assert!(e.contains("undeclared reference"), "{expr}: {e}");
    }
}

/// Cases checked one by one against Go 1.26's `net/url` (the rules Kubernetes inherits).
#[test]
fn go_1_26_host_rules() {
    assert_values(&[
        (
            "url('https://[fe80::1%25en0]:8080/x').getHost()",
            s("[fe80::1%en0]:8080"),
        ),
        (
            "url('https://[fe80::1%25en0]:8080/x').getHostname()",
            s("fe80::1%en0"),
        ),
        (
            "url('https://[::ffff:1.2.3.4]/').getHostname()",
            s("::ffff:1.2.3.4"),
        ),
        // Only http and https hosts are limited to one colon.
        ("url('postgres://a:1,b:2/db').getHostname()", s("a:1,b")),
        ("url('postgres://a:1,b:2/db').getPort()", s("2")),
        (
            "url('http://u%41:p@host/') == url('http://uA:p@host/')",
            Value::Bool(true),
        ),
        // `scheme:/path` keeps no empty authority when printed (Go's OmitHost).
        ("url('http:/x') == url('http:///x')", Value::Bool(false)),
    ]);
    let p = "URL parse error during conversion from string: ";
    let cases = [
        (
            "url('https://[fe80::1%25]/')".to_string(),
            format!(
                r#"{p}parse "https://[fe80::1%25]/": invalid host: ParseAddr("fe80::1%"): zone must be a non-empty string"#
            ),
        ),
        (
            "url('http://a:1:2/')".to_string(),
            format!(r#"{p}parse "http://a:1:2/": invalid port ":1:2" after host"#),
        ),
        (
            "url('https://x[::1]/')".to_string(),
            format!(r#"{p}parse "https://x[::1]/": invalid IP-literal"#),
        ),
    ];
    let refs: Vec<(&str, &str)> = cases
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_errors(&refs);
    // More than 10,000 query parameters: Go's ParseQuery refuses them all.
    let many = "a=1&".repeat(10_000);
    let q = ok(&format!("url('/p?{many}').getQuery()"));
    assert!(
        celer_cel::ops::equals(&q, &Value::map(OwnedMap::new())),
        "{q:?}"
    );
    let fewer = "a=1&".repeat(9_999);
    let q = ok(&format!("url('/p?{fewer}').getQuery().a.size()"));
    assert!(matches!(q, Value::Int(9_999)), "{q:?}");
}
