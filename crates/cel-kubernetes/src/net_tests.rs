//! Tests of the `ip` and `cidr` libraries, through the Kubernetes environment.

use super::super::test_support::{assert_costs, assert_errors, assert_values, check_err};
use celer_cel::Value;

#[test]
fn ip_table() {
    let cases: &[(&str, Value<'static>)] = &[
        ("string(ip('192.168.0.1'))", Value::string("192.168.0.1")),
        ("string(ip('2001:DB8::68'))", Value::string("2001:db8::68")),
        ("isIP('192.168.0.1')", Value::Bool(true)),
        ("isIP('192.168.0.1.0')", Value::Bool(false)),
        ("isIP('::ffff:1.2.3.4')", Value::Bool(false)),
        ("isIP('fe80::1%eth0')", Value::Bool(false)),
        ("isIP('01.2.3.4')", Value::Bool(false)),
        ("isIP('')", Value::Bool(false)),
        ("ip.isCanonical('127.0.0.1')", Value::Bool(true)),
        ("ip.isCanonical('2001:db8::abcd')", Value::Bool(true)),
        ("ip.isCanonical('2001:DB8::ABCD')", Value::Bool(false)),
        ("ip.isCanonical('2001:db8::0:0:0:abcd')", Value::Bool(false)),
        ("ip('192.168.0.1').family()", Value::Int(4)),
        ("ip('::1').family()", Value::Int(6)),
        ("ip('0.0.0.0').isUnspecified()", Value::Bool(true)),
        ("ip('::').isUnspecified()", Value::Bool(true)),
        ("ip('::1').isUnspecified()", Value::Bool(false)),
        ("ip('127.0.0.1').isLoopback()", Value::Bool(true)),
        ("ip('2001:db8::abcd').isLoopback()", Value::Bool(false)),
        ("ip('224.0.0.1').isLinkLocalMulticast()", Value::Bool(true)),
        ("ip('224.0.1.1').isLinkLocalMulticast()", Value::Bool(false)),
        ("ip('ff02::1').isLinkLocalMulticast()", Value::Bool(true)),
        ("ip('fd00::1').isLinkLocalMulticast()", Value::Bool(false)),
        (
            "ip('169.254.169.254').isLinkLocalUnicast()",
            Value::Bool(true),
        ),
        ("ip('fe80::1').isLinkLocalUnicast()", Value::Bool(true)),
        ("ip('fd80::1').isLinkLocalUnicast()", Value::Bool(false)),
        ("ip('192.168.0.1').isGlobalUnicast()", Value::Bool(true)),
        (
            "ip('255.255.255.255').isGlobalUnicast()",
            Value::Bool(false),
        ),
        ("ip('2001:db8::abcd').isGlobalUnicast()", Value::Bool(true)),
        ("ip('ff00::1').isGlobalUnicast()", Value::Bool(false)),
        ("ip('127.0.0.1') == ip('127.0.0.1')", Value::Bool(true)),
        ("ip('2001:db8::1') == ip('2001:DB8::1')", Value::Bool(true)),
        ("ip('127.0.0.1') == ip('10.0.0.1')", Value::Bool(false)),
        ("ip('::') == ip('0.0.0.0')", Value::Bool(false)),
        ("type(ip('192.168.0.1')) == net.IP", Value::Bool(true)),
        ("type(ip('192.168.0.1')) == net.CIDR", Value::Bool(false)),
        ("[ip('1.2.3.4')] == [ip('1.2.3.4')]", Value::Bool(true)),
    ];
    assert_values(cases);
}

#[test]
fn ip_errors() {
    assert_errors(&[
        (
            "ip('192.168.0.1.0')",
            r#"IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long"#,
        ),
        (
            "ip.isCanonical('2001:db8:::68')",
            r#"IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")"#,
        ),
        (
            "ip('fe80::1%en0')",
            r#"IP address "fe80::1%en0" with zone value is not allowed"#,
        ),
        (
            "ip('::ffff:192.168.0.1')",
            r#"IPv4-mapped IPv6 address "::ffff:192.168.0.1" is not allowed"#,
        ),
        (
            "ip('127.0.0.01')",
            r#"IP Address "127.0.0.01" parse error during conversion from string: ParseAddr("127.0.0.01"): IPv4 field has octet with leading zero"#,
        ),
        ("dyn(1).family()", "no such overload: family(int)"),
        ("ip(dyn(1))", "no such overload: ip(int)"),
    ]);
    let e = check_err("isIP(cidr('192.168.0.0/24'))");
    assert!(
        e.contains("found no matching overload for 'isIP' applied to '(net.CIDR)'"),
        "{e}"
    );
}

#[test]
fn cidr_table() {
    let cases: &[(&str, Value<'static>)] = &[
        (
            "string(cidr('192.168.0.0/24'))",
            Value::string("192.168.0.0/24"),
        ),
        (
            "string(cidr('2001:db8::/32'))",
            Value::string("2001:db8::/32"),
        ),
        (
            "string(cidr('192.168.0.1/24'))",
            Value::string("192.168.0.1/24"),
        ),
        ("isCIDR('192.168.0.0/16')", Value::Bool(true)),
        ("isCIDR('192.168.0.1/16')", Value::Bool(true)),
        ("isCIDR('::1/128')", Value::Bool(true)),
        ("isCIDR('192.168.0.0/33')", Value::Bool(false)),
        ("isCIDR('::1/129')", Value::Bool(false)),
        ("isCIDR('::ffff:1.2.3.4/120')", Value::Bool(false)),
        ("isCIDR('fe80::1%en0/64')", Value::Bool(false)),
        (
            "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))",
            Value::Bool(true),
        ),
        (
            "cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))",
            Value::Bool(false),
        ),
        (
            "cidr('192.168.0.0/24').containsIP('192.168.0.1')",
            Value::Bool(true),
        ),
        (
            "cidr('192.168.0.0/24').containsIP('192.168.1.1')",
            Value::Bool(false),
        ),
        (
            "cidr('2001:db8::/32').containsIP(ip('192.168.1.1'))",
            Value::Bool(false),
        ),
        (
            "cidr('192.168.1.1/32').containsIP(ip('2001:db8::1'))",
            Value::Bool(false),
        ),
        (
            "cidr('2001:db8::/32').containsIP('2001:db8::1')",
            Value::Bool(true),
        ),
        (
            "cidr('2001:db8::/32').containsIP('2001:dc8::1')",
            Value::Bool(false),
        ),
        (
            "cidr('192.168.0.1/24').containsIP('192.168.0.7')",
            Value::Bool(true),
        ),
        ("cidr('0.0.0.0/0').containsIP('8.8.8.8')", Value::Bool(true)),
        (
            "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))",
            Value::Bool(true),
        ),
        (
            "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.1/32'))",
            Value::Bool(true),
        ),
        (
            "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/23'))",
            Value::Bool(false),
        ),
        (
            "cidr('192.168.0.0/24').containsCIDR('192.168.0.0/25')",
            Value::Bool(true),
        ),
        (
            "cidr('192.168.1.0/24').containsCIDR('192.168.2.0/24')",
            Value::Bool(false),
        ),
        (
            "cidr('10.0.0.0/8').containsCIDR('10.0.0.0/8')",
            Value::Bool(true),
        ),
        (
            "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
            Value::Bool(true),
        ),
        (
            "cidr('10.0.0.1/8').containsCIDR('10.1.0.0/16')",
            Value::Bool(true),
        ),
        (
            "cidr('2001:db8::/32').containsCIDR(cidr('2001:db8::/33'))",
            Value::Bool(true),
        ),
        (
            "cidr('2001:db8::/32').containsCIDR(cidr('2001:db8::/31'))",
            Value::Bool(false),
        ),
        (
            "cidr('0.0.0.0/0').containsCIDR(cidr('::/0'))",
            Value::Bool(false),
        ),
        (
            "cidr('::/0').containsCIDR(cidr('1.0.0.0/8'))",
            Value::Bool(false),
        ),
        (
            "cidr('192.168.0.0/24').ip() == ip('192.168.0.0')",
            Value::Bool(true),
        ),
        (
            "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
            Value::Bool(true),
        ),
        ("cidr('::1/128').ip().family()", Value::Int(6)),
        (
            "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
            Value::Bool(true),
        ),
        (
            "cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()",
            Value::Bool(false),
        ),
        (
            "string(cidr('2001:db8:1::/32').masked())",
            Value::string("2001:db8::/32"),
        ),
        ("cidr('192.168.0.0/16').prefixLength()", Value::Int(16)),
        ("cidr('::1/128').prefixLength()", Value::Int(128)),
        (
            "cidr('127.0.0.1/24') == cidr('127.0.0.1/24')",
            Value::Bool(true),
        ),
        (
            "cidr('2001:db8::/32') == cidr('10.0.0.1/32')",
            Value::Bool(false),
        ),
        (
            "type(cidr('192.168.0.0/24')) == net.CIDR",
            Value::Bool(true),
        ),
    ];
    assert_values(cases);
}

#[test]
fn cidr_errors() {
    assert_errors(&[
        (
            "cidr('192.168.0.0/')",
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: """#,
        ),
        (
            "cidr('fe80::1%en0/24')",
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("fe80::1%en0/24"): IPv6 zones cannot be present in a prefix"#,
        ),
        (
            "cidr('::ffff:192.168.0.1/24')",
            r#"network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:192.168.0.1/24" is not allowed"#,
        ),
        (
            "cidr('10.0.0.0/8').containsIP('10.0.0')",
            r#"IP Address "10.0.0" parse error during conversion from string: ParseAddr("10.0.0"): IPv4 address too short"#,
        ),
        (
            "cidr('10.0.0.0/8').containsCIDR('10.0.0.0')",
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0"): no '/'"#,
        ),
        (
            "cidr('10.0.0.0/8').containsIP(dyn(1))",
            "no such overload: containsIP(net.CIDR, int)",
        ),
    ]);
}

#[test]
fn costs_follow_kubernetes() {
    // Each case: the whole expression's cost. A string literal costs 0, a call adds its own.
    assert_costs(&[
        // ip(s): ceil(11 * 0.1) = 2
        ("ip('192.168.0.1')", 2),
        ("isIP('192.168.0.1')", 2),
        // ip.isCanonical: ceil(11 * 0.2) = 3
        ("ip.isCanonical('192.168.0.1')", 3),
        // 2 for ip(...) + 1 for family()
        ("ip('192.168.0.1').family()", 3),
        // cidr: ceil(14 * 0.1) = 2
        ("cidr('192.168.0.0/24')", 2),
        // 2 + containsIP: ceil(2*3*0.1) = 1, + string ceil(11*0.1) = 2 => 5
        ("cidr('192.168.0.0/24').containsIP('192.168.0.1')", 5),
        // 2 + 2 (ip) + containsIP 1 => 5
        ("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", 5),
        // 2 + containsCIDR: 1 + ceil(0.3) 1 + 1 = 3, + string ceil(14 * 0.1) = 2 => 7
        ("cidr('192.168.0.0/24').containsCIDR('192.168.0.0/25')", 7),
        // /128: size 16: ceil(3.2)=4 + ceil(1.6)=2 + 1 = 7; cidr('::1/128') = 1 and 1 => 9
        ("cidr('::1/128').containsCIDR(cidr('::1/128'))", 9),
        // cidr() 2 + ip() 1 + masked 1
        ("cidr('192.168.0.0/24').ip()", 3),
        ("cidr('192.168.0.0/24').masked()", 3),
        // equality of two IPs: 2 + 2 + 1
        ("ip('192.168.0.1') == ip('192.168.0.1')", 5),
        // string(ip): 2 + 1
        ("string(ip('192.168.0.1'))", 3),
    ]);
}

#[test]
fn mixed_type_equality_is_a_check_error() {
    let e = check_err("ip('1.2.3.4') == cidr('1.2.3.4/32')");
    assert!(e.contains("found no matching overload for '_==_'"), "{e}");
}
