//! Tests of the `semver` library, through the Kubernetes environment.

use super::super::test_support::{assert_costs, assert_errors, assert_values, check_err};
use super::{normalize_and_parse, parse};
use celer_cel::Value;

#[test]
fn semver_table() {
    let t = Value::Bool(true);
    let f = Value::Bool(false);
    assert_values(&[
        ("isSemver('1.2.3-beta.1+build.1')", t.clone()),
        ("isSemver('1.0.0')", t.clone()),
        ("isSemver('')", f.clone()),
        ("isSemver('v1.0.0')", f.clone()),
        ("isSemver(' 1.0.0')", f.clone()),
        ("isSemver('1. 0.0')", f.clone()),
        ("isSemver('1.0.0 ')", f.clone()),
        ("isSemver('01.01.01')", f.clone()),
        ("isSemver('1')", f.clone()),
        ("isSemver('1.1')", f.clone()),
        ("isSemver('1.2.3-')", f.clone()),
        ("isSemver('1.2.3-01')", f.clone()),
        ("isSemver('1.2.3-0a')", t.clone()),
        ("isSemver('1.2.3+001')", t.clone()),
        ("isSemver('1.2.3+')", f.clone()),
        ("isSemver('1.2.3-a_b')", f.clone()),
        ("isSemver('', true)", f.clone()),
        ("isSemver(' 1.0.0', true)", f.clone()),
        ("isSemver('1. 0.0', true)", f.clone()),
        ("isSemver('1.0.0 ', true)", f.clone()),
        ("isSemver('v1.0.0', true)", t.clone()),
        ("isSemver('01.01.01', true)", t.clone()),
        ("isSemver('1', true)", t.clone()),
        ("isSemver('1.1', true)", t.clone()),
        ("isSemver('1-beta', true)", f.clone()),
        ("isSemver('1.0.0', false)", t.clone()),
        ("semver('v01.01', true) == semver('1.1.0')", t.clone()),
        ("semver('1.2.3') == semver('1.2.3')", t.clone()),
        ("semver('1.2.3+a') == semver('1.2.3+b')", t.clone()),
        ("semver('1.2.3') == semver('1.0.0')", f.clone()),
        ("semver('1.0.0').isLessThan(semver('1.2.3'))", t.clone()),
        ("semver('1.0.0').isLessThan(semver('1.0.0'))", f.clone()),
        ("semver('1.2.3').isGreaterThan(semver('1.0.0'))", t.clone()),
        ("semver('1.0.0').isGreaterThan(semver('1.0.0'))", f.clone()),
        ("semver('1.2.3').compareTo(semver('1.2.3'))", Value::Int(0)),
        ("semver('1.0.0').compareTo(semver('1.2.3'))", Value::Int(-1)),
        ("semver('1.2.3').compareTo(semver('1.0.0'))", Value::Int(1)),
        ("semver('1.2.3').major()", Value::Int(1)),
        ("semver('1.2.3').minor()", Value::Int(2)),
        ("semver('1.2.3').patch()", Value::Int(3)),
        ("semver('v2', true).major()", Value::Int(2)),
        // Precedence from semver.org §11.
        (
            "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))",
            t.clone(),
        ),
        (
            "semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))",
            t.clone(),
        ),
        (
            "semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta'))",
            t.clone(),
        ),
        (
            "semver('1.0.0-beta').isLessThan(semver('1.0.0-beta.2'))",
            t.clone(),
        ),
        (
            "semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11'))",
            t.clone(),
        ),
        (
            "semver('1.0.0-beta.11').isLessThan(semver('1.0.0-rc.1'))",
            t.clone(),
        ),
        (
            "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
            t.clone(),
        ),
        (
            "semver('1.0.0').compareTo(semver('1.0.0+build'))",
            Value::Int(0),
        ),
        (
            "semver('10.0.0').isGreaterThan(semver('9.99.99'))",
            t.clone(),
        ),
    ]);
}

#[test]
fn semver_errors() {
    assert_errors(&[
        ("semver('v1.0')", "No Major.Minor.Patch elements found"),
        ("semver('')", "Version string empty"),
        ("semver('1.2')", "No Major.Minor.Patch elements found"),
        (
            "semver('a.2.3')",
            r#"Invalid character(s) found in major number "a""#,
        ),
        (
            "semver('01.2.3')",
            r#"Major number must not contain leading zeroes "01""#,
        ),
        (
            "semver('1.02.3')",
            r#"Minor number must not contain leading zeroes "02""#,
        ),
        (
            "semver('1.x.3')",
            r#"Invalid character(s) found in minor number "x""#,
        ),
        (
            "semver('1.2.x')",
            r#"Invalid character(s) found in patch number "x""#,
        ),
        (
            "semver('1.2.03')",
            r#"Patch number must not contain leading zeroes "03""#,
        ),
        (
            "semver('.2.3')",
            r#"strconv.ParseUint: parsing "": invalid syntax"#,
        ),
        (
            "semver('99999999999999999999.2.3')",
            r#"strconv.ParseUint: parsing "99999999999999999999": value out of range"#,
        ),
        ("semver('1.2.3-')", "Prerelease is empty"),
        (
            "semver('1.2.3-01')",
            r#"Numeric PreRelease version must not contain leading zeroes "01""#,
        ),
        (
            "semver('1.2.3-a_b')",
            r#"Invalid character(s) found in prerelease "a_b""#,
        ),
        ("semver('1.2.3+')", "Build meta data is empty"),
        (
            "semver('1.2.3+a_b')",
            r#"Invalid character(s) found in build meta data "a_b""#,
        ),
        (
            "semver('1.0-rc', true)",
            "short version cannot contain PreRelease/Build meta data",
        ),
        (
            "semver('1-rc.1', true)",
            r#"Invalid character(s) found in major number "1-rc""#,
        ),
        ("dyn(1).major()", "no such overload: major(int)"),
        (
            "dyn(semver('1.0.0')).isLessThan(dyn(1))",
            "no such overload: isLessThan(kubernetes.Semver, int)",
        ),
        (
            "dyn(1).compareTo(semver('1.0.0'))",
            "no such overload: compareTo(int, kubernetes.Semver)",
        ),
    ]);
    let e = check_err("isSemver([1, 2, 3])");
    assert!(
        e.contains("found no matching overload for 'isSemver' applied to"),
        "{e}"
    );
}

#[test]
fn normalization() {
    for (input, want) in [
        ("v1.2.3", (1, 2, 3)),
        ("1", (1, 0, 0)),
        ("01.01.01", (1, 1, 1)),
        ("0.0.0", (0, 0, 0)),
        ("00.000.0", (0, 0, 0)),
        ("v1.0", (1, 0, 0)),
    ] {
        let v = normalize_and_parse(input).unwrap();
        assert_eq!((v.major, v.minor, v.patch), want, "{input}");
    }
    // Only the first three parts are trimmed; a pre-release after them is kept.
    assert!(normalize_and_parse("1.2.03-rc.1").is_ok());
    assert!(normalize_and_parse("vv1.0.0").is_err());
    assert_eq!(
        parse("1.2.3").unwrap(),
        normalize_and_parse("1.2.3").unwrap()
    );
}

#[test]
fn costs_follow_kubernetes() {
    assert_costs(&[
        // ceil(5 * 0.1)
        ("semver('1.2.3')", 1),
        // ceil(11 * 0.1)
        ("isSemver('1.2.3-rc.10')", 2),
        ("isSemver('v1.2', true)", 1),
        ("semver('1.2.3').major()", 2),
        ("semver('1.2.3').isLessThan(semver('1.2.4'))", 3),
        ("semver('1.2.3') == semver('1.2.4')", 3),
    ]);
}

/// Edge cases checked against blang/semver v4 and Kubernetes' normalization in Go.
#[test]
fn go_checked_edges() {
    assert_errors(&[
        ("semver('1.2.3-a..b')", "Prerelease is empty"),
        (
            "semver('1.2.3-é')",
            r#"Invalid character(s) found in prerelease "é""#,
        ),
        (
            "semver('1.2.3.4')",
            r#"Invalid character(s) found in patch number "3.4""#,
        ),
        (
            "semver('18446744073709551616.0.0')",
            r#"strconv.ParseUint: parsing "18446744073709551616": value out of range"#,
        ),
        (
            "semver('v', true)",
            r#"strconv.ParseUint: parsing "": invalid syntax"#,
        ),
    ]);
    assert_values(&[
        ("semver('18446744073709551615.0.0').major()", Value::Int(-1)),
        ("semver('00', true).major()", Value::Int(0)),
        (
            "semver('1.0.0-rc.1+b').compareTo(semver('1.0.0-rc.1'))",
            Value::Int(0),
        ),
    ]);
}
