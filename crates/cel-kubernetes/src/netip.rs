//! The part of Go's `net/netip` that Kubernetes' `ip` and `cidr` libraries depend on: parsing
//! with Go's rules and error texts, RFC 5952 formatting, masking and containment.
//!
//! Why not `std::net`: Go and Rust accept different strings. Go rejects IPv4 octets with
//! leading zeros (as Rust does) but accepts IPv6 zones (`fe80::1%eth0`), which Rust rejects
//! with no way to tell the caller a zone was the problem; Kubernetes reports zones and
//! IPv4-mapped addresses with their own messages, and its other errors quote Go's parser
//! word for word (`ParseAddr("1.2.3"): IPv4 address too short`). So parsing is written here,
//! following Go's grammar step by step; the address itself is plain bytes.

use std::fmt::{self, Write as _};

use super::shared::go_quote;

/// An IPv4 or IPv6 address. Zones are never kept: every Kubernetes function rejects them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Addr {
    V4([u8; 4]),
    V6([u8; 16]),
}

/// A parsed address and the zone that followed `%`, if any.
#[derive(Debug, Clone, Copy)]
pub struct Parsed<'s> {
    pub addr: Addr,
    pub zone: Option<&'s str>,
}

/// Go's `parseAddrError`: `ParseAddr("<in>"): <msg>[ (at "<rest>")]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AddrError {
    input: String,
    msg: &'static str,
    at: Option<String>,
}

impl AddrError {
    fn new(input: &str, msg: &'static str) -> AddrError {
        AddrError {
            input: input.to_string(),
            msg,
            at: None,
        }
    }

    fn at(input: &str, msg: &'static str, at: &str) -> AddrError {
        AddrError {
            input: input.to_string(),
            msg,
            at: (!at.is_empty()).then(|| at.to_string()),
        }
    }
}

impl fmt::Display for AddrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ParseAddr({}): {}", go_quote(&self.input), self.msg)?;
        if let Some(at) = &self.at {
            write!(f, " (at {})", go_quote(at))?;
        }
        Ok(())
    }
}

impl Addr {
    /// Go's `Is4In6`: an IPv6 address in `::ffff:0:0/96`.
    pub fn is_4in6(&self) -> bool {
        match self {
            Addr::V4(_) => false,
            Addr::V6(b) => b[..10].iter().all(|&x| x == 0) && b[10] == 0xff && b[11] == 0xff,
        }
    }

    pub fn bit_len(&self) -> u8 {
        match self {
            Addr::V4(_) => 32,
            Addr::V6(_) => 128,
        }
    }

    /// The address with IPv4-mapped IPv6 addresses turned into IPv4 (Go's `Unmap`), for the
    /// classification predicates, which Go applies to the unmapped form.
    fn unmapped(&self) -> Addr {
        match self {
            Addr::V6(b) if self.is_4in6() => Addr::V4([b[12], b[13], b[14], b[15]]),
            other => *other,
        }
    }

    pub fn is_unspecified(&self) -> bool {
        match self {
            Addr::V4(b) => *b == [0; 4],
            Addr::V6(b) => *b == [0; 16],
        }
    }

    pub fn is_loopback(&self) -> bool {
        match self.unmapped() {
            Addr::V4(b) => b[0] == 127,
            Addr::V6(b) => u128::from_be_bytes(b) == 1,
        }
    }

    pub fn is_multicast(&self) -> bool {
        match self.unmapped() {
            Addr::V4(b) => b[0] & 0xf0 == 0xe0,
            Addr::V6(b) => b[0] == 0xff,
        }
    }

    pub fn is_link_local_unicast(&self) -> bool {
        match self.unmapped() {
            Addr::V4(b) => b[0] == 169 && b[1] == 254,
            Addr::V6(b) => b[0] == 0xfe && b[1] & 0xc0 == 0x80,
        }
    }

    pub fn is_link_local_multicast(&self) -> bool {
        match self.unmapped() {
            Addr::V4(b) => b[0] == 224 && b[1] == 0 && b[2] == 0,
            Addr::V6(b) => b[0] == 0xff && b[1] & 0x0f == 0x02,
        }
    }

    /// Go's `IsGlobalUnicast`: not unspecified, not the IPv4 broadcast address, not loopback,
    /// multicast or link-local unicast. Private ranges count as global.
    pub fn is_global_unicast(&self) -> bool {
        let ip = self.unmapped();
        if let Addr::V4(b) = ip
            && (b == [0; 4] || b == [255; 4])
        {
            return false;
        }
        ip != Addr::V6([0; 16])
            && !ip.is_loopback()
            && !ip.is_multicast()
            && !ip.is_link_local_unicast()
    }

    fn bits(&self) -> u128 {
        match self {
            Addr::V4(b) => u128::from(u32::from_be_bytes(*b)),
            Addr::V6(b) => u128::from_be_bytes(*b),
        }
    }

    fn with_bits(&self, bits: u128) -> Addr {
        match self {
            Addr::V4(_) => Addr::V4((bits as u32).to_be_bytes()),
            Addr::V6(_) => Addr::V6(bits.to_be_bytes()),
        }
    }

    /// The address with all but the top `prefix` bits cleared.
    pub fn masked(&self, prefix: u8) -> Addr {
        let len = u32::from(self.bit_len());
        let keep = u32::from(prefix).min(len);
        let host = len - keep;
        let mask = if host >= 128 { 0 } else { u128::MAX << host };
        self.with_bits(self.bits() & mask)
    }
}

impl fmt::Display for Addr {
    /// Go's `Addr.String`: dotted decimal, or RFC 5952 (lower case, no leading zeros, the
    /// longest run of two or more zero fields, the first on a tie, written `::`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::V4(b) => write!(f, "{}.{}.{}.{}", b[0], b[1], b[2], b[3]),
            Addr::V6(b) if self.is_4in6() => {
                write!(f, "::ffff:{}.{}.{}.{}", b[12], b[13], b[14], b[15])
            }
            Addr::V6(b) => {
                let field = |i: usize| u16::from_be_bytes([b[2 * i], b[2 * i + 1]]);
                let (mut zero_start, mut zero_len) = (usize::MAX, 0);
                let mut i = 0;
                while i < 8 {
                    let mut j = i;
                    while j < 8 && field(j) == 0 {
                        j += 1;
                    }
                    if j - i >= 2 && j - i > zero_len {
                        zero_start = i;
                        zero_len = j - i;
                    }
                    i = j.max(i + 1);
                }
                let mut i = 0;
                while i < 8 {
                    if i == zero_start {
                        f.write_str("::")?;
                        i += zero_len;
                        continue;
                    }
                    if i > 0 && i != zero_start + zero_len {
                        f.write_char(':')?;
                    }
                    write!(f, "{:x}", field(i))?;
                    i += 1;
                }
                Ok(())
            }
        }
    }
}

/// Go's `netip.ParseAddr`, keeping any zone for the caller to reject.
pub fn parse_addr(s: &str) -> Result<Parsed<'_>, AddrError> {
    for c in s.bytes() {
        match c {
            b'.' => {
                return parse_v4_fields(s, s).map(|b| Parsed {
                    addr: Addr::V4(b),
                    zone: None,
                });
            }
            b':' => return parse_v6(s),
            b'%' => return Err(AddrError::new(s, "missing IPv6 address")),
            _ => {}
        }
    }
    Err(AddrError::new(s, "unable to parse IP"))
}

/// Go's `parseIPv4Fields`: four decimal octets, no leading zeros. `input` is the whole string
/// the caller was given (errors quote it); `s` is the dotted part.
fn parse_v4_fields(input: &str, s: &str) -> Result<[u8; 4], AddrError> {
    let mut fields = [0u8; 4];
    let (mut val, mut pos, mut digits) = (0u32, 0usize, 0usize);
    let bytes = s.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        let rest = s.get(i..).unwrap_or("");
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return Err(AddrError::new(
                    input,
                    "IPv4 field has octet with leading zero",
                ));
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return Err(AddrError::new(input, "IPv4 field has value >255"));
            }
        } else if c == b'.' {
            if i == 0 || i == bytes.len() - 1 || bytes.get(i - 1) == Some(&b'.') {
                return Err(AddrError::at(
                    input,
                    "IPv4 field must have at least one digit",
                    rest,
                ));
            }
            if pos == 3 {
                return Err(AddrError::new(input, "IPv4 address too long"));
            }
            if let Some(f) = fields.get_mut(pos) {
                *f = val as u8;
            }
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            return Err(AddrError::at(input, "unexpected character", rest));
        }
    }
    if pos < 3 {
        return Err(AddrError::new(input, "IPv4 address too short"));
    }
    fields[3] = val as u8;
    Ok(fields)
}

/// Go's `parseIPv6`.
fn parse_v6(input: &str) -> Result<Parsed<'_>, AddrError> {
    let (mut s, zone) = match input.find('%') {
        Some(i) => {
            let zone = input.get(i + 1..).unwrap_or("");
            if zone.is_empty() {
                return Err(AddrError::new(input, "zone must be a non-empty string"));
            }
            (input.get(..i).unwrap_or(""), Some(zone))
        }
        None => (input, None),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if let Some(rest) = s.strip_prefix("::") {
        ellipsis = Some(0);
        s = rest;
        if s.is_empty() {
            return Ok(Parsed {
                addr: Addr::V6(ip),
                zone,
            });
        }
    }
    let mut i = 0usize;
    while i < 16 {
        let mut off = 0usize;
        let mut acc = 0u32;
        for c in s.bytes() {
            let digit = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => break,
            };
            acc = (acc << 4) + u32::from(digit);
            if off > 3 {
                return Err(AddrError::at(
                    input,
                    "each group must have 4 or less digits",
                    s,
                ));
            }
            if acc > 0xffff {
                return Err(AddrError::at(input, "IPv6 field has value >=2^16", s));
            }
            off += 1;
        }
        if off == 0 {
            return Err(AddrError::at(
                input,
                "each colon-separated field must have at least one digit",
                s,
            ));
        }
        if s.as_bytes().get(off) == Some(&b'.') {
            if ellipsis.is_none() && i != 12 {
                return Err(AddrError::at(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    s,
                ));
            }
            if i + 4 > 16 {
                return Err(AddrError::at(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    s,
                ));
            }
            let v4 = parse_v4_fields(input, s)?;
            if let Some(dst) = ip.get_mut(i..i + 4) {
                dst.copy_from_slice(&v4);
            }
            s = "";
            i += 4;
            break;
        }
        if let Some(dst) = ip.get_mut(i..i + 2) {
            dst.copy_from_slice(&(acc as u16).to_be_bytes());
        }
        i += 2;
        s = s.get(off..).unwrap_or("");
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(AddrError::at(input, "unexpected character, want colon", s));
        }
        if s.len() == 1 {
            return Err(AddrError::at(
                input,
                "colon must be followed by more characters",
                s,
            ));
        }
        s = s.get(1..).unwrap_or("");
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(AddrError::at(input, "multiple :: in address", s));
            }
            ellipsis = Some(i);
            s = s.get(1..).unwrap_or("");
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(AddrError::at(input, "trailing garbage after address", s));
    }
    if i < 16 {
        let Some(at) = ellipsis else {
            return Err(AddrError::new(input, "address string too short"));
        };
        let n = 16 - i;
        ip.copy_within(at..i, at + n);
        if let Some(gap) = ip.get_mut(at..at + n) {
            gap.fill(0);
        }
    } else if ellipsis.is_some() {
        return Err(AddrError::new(
            input,
            "the :: must expand to at least one field of zeros",
        ));
    }
    Ok(Parsed {
        addr: Addr::V6(ip),
        zone,
    })
}

/// An address and a prefix length (host bits are kept, as Go's `Prefix` keeps them).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Prefix {
    pub addr: Addr,
    pub bits: u8,
}

impl Prefix {
    /// Go's `Prefix.Masked`.
    pub fn masked(&self) -> Prefix {
        Prefix {
            addr: self.addr.masked(self.bits),
            bits: self.bits,
        }
    }

    /// Go's `Prefix.Contains`: same family and the same top `bits` bits.
    pub fn contains(&self, ip: &Addr) -> bool {
        match (self.addr, ip) {
            (Addr::V4(_), Addr::V4(_)) | (Addr::V6(_), Addr::V6(_)) => {
                self.addr.masked(self.bits) == ip.masked(self.bits)
            }
            _ => false,
        }
    }

    /// Kubernetes' `containsCIDR`: the other prefix, masked to this prefix's length, is this
    /// prefix masked, and it is at least as long. Different families never contain each other.
    pub fn contains_prefix(&self, other: &Prefix) -> bool {
        match (self.addr, other.addr) {
            (Addr::V4(_), Addr::V4(_)) | (Addr::V6(_), Addr::V6(_)) => {
                self.addr.masked(self.bits) == other.addr.masked(self.bits)
                    && self.bits <= other.bits
            }
            _ => false,
        }
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

/// Why `ParsePrefix` failed: `netip.ParsePrefix("<in>"): <msg>`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrefixError {
    input: String,
    msg: String,
}

impl fmt::Display for PrefixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "netip.ParsePrefix({}): {}",
            go_quote(&self.input),
            self.msg
        )
    }
}

/// Go's `netip.ParsePrefix`: an address (no zone), `/`, and a decimal length without sign or
/// leading zeros, at most 32 or 128.
pub fn parse_prefix(s: &str) -> Result<Prefix, PrefixError> {
    let err = |msg: String| PrefixError {
        input: s.to_string(),
        msg,
    };
    let Some(slash) = s.rfind('/') else {
        return Err(err("no '/'".to_string()));
    };
    let parsed = parse_addr(s.get(..slash).unwrap_or("")).map_err(|e| err(e.to_string()))?;
    if parsed.zone.is_some() {
        return Err(err("IPv6 zones cannot be present in a prefix".to_string()));
    }
    let bits_str = s.get(slash + 1..).unwrap_or("");
    let bad_bits = || err(format!("bad bits after slash: {}", go_quote(bits_str)));
    if bits_str.len() > 1 && !matches!(bits_str.as_bytes().first(), Some(b'1'..=b'9')) {
        return Err(bad_bits());
    }
    let bits = go_atoi(bits_str).ok_or_else(bad_bits)?;
    let max = i64::from(parsed.addr.bit_len());
    if !(0..=max).contains(&bits) {
        return Err(err("prefix length out of range".to_string()));
    }
    Ok(Prefix {
        addr: parsed.addr,
        bits: bits as u8,
    })
}

/// Go's `strconv.Atoi` on what `ParsePrefix` lets through: an optional sign and decimal
/// digits that fit in 64 bits.
fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn addr(s: &str) -> Addr {
        parse_addr(s).unwrap().addr
    }

    #[test]
    fn parses_and_formats_like_go() {
        for (input, canonical) in [
            ("127.0.0.1", "127.0.0.1"),
            ("0.0.0.0", "0.0.0.0"),
            ("::", "::"),
            ("::1", "::1"),
            ("2001:DB8::68", "2001:db8::68"),
            ("2001:db8:0:0:0:0:0:1", "2001:db8::1"),
            ("2001:db8:0:1:0:0:0:1", "2001:db8:0:1::1"),
            ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
            ("2001:db8:1:1:1:1:0:1", "2001:db8:1:1:1:1:0:1"),
            ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"),
            ("0:0:0:0:0:0:0:0", "::"),
            ("1::", "1::"),
            ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"),
            ("::1.2.3.4", "::102:304"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("ff02::1", "ff02::1"),
            ("0001:02:3::", "1:2:3::"),
        ] {
            assert_eq!(addr(input).to_string(), canonical, "{input}");
        }
        assert!(addr("::ffff:c0a8:1").is_4in6());
        assert_eq!(parse_addr("fe80::1%en0").unwrap().zone, Some("en0"));
    }

    #[test]
    fn errors_are_go_texts() {
        for (input, message) in [
            (
                "192.168.0.1.0",
                r#"ParseAddr("192.168.0.1.0"): IPv4 address too long"#,
            ),
            ("1.2.3", r#"ParseAddr("1.2.3"): IPv4 address too short"#),
            (
                "01.2.3.4",
                r#"ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero"#,
            ),
            (
                "1.2.3.256",
                r#"ParseAddr("1.2.3.256"): IPv4 field has value >255"#,
            ),
            (
                "1..2.3",
                r#"ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")"#,
            ),
            (
                "1.2.3.4x",
                r#"ParseAddr("1.2.3.4x"): unexpected character (at "x")"#,
            ),
            ("", r#"ParseAddr(""): unable to parse IP"#),
            ("abc", r#"ParseAddr("abc"): unable to parse IP"#),
            ("%eth0", r#"ParseAddr("%eth0"): missing IPv6 address"#),
            (
                "fe80::1%",
                r#"ParseAddr("fe80::1%"): zone must be a non-empty string"#,
            ),
            (
                "2001:db8:::68",
                r#"ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")"#,
            ),
            (
                "12345::",
                r#"ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")"#,
            ),
            (
                "1:2:3:4:5:6:7:8:9",
                r#"ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")"#,
            ),
            ("1:2:3", r#"ParseAddr("1:2:3"): address string too short"#),
            (
                "1:2:3:4::5:6:7:8",
                r#"ParseAddr("1:2:3:4::5:6:7:8"): the :: must expand to at least one field of zeros"#,
            ),
            (
                "1::2::3",
                r#"ParseAddr("1::2::3"): multiple :: in address (at ":3")"#,
            ),
            (
                "1:",
                r#"ParseAddr("1:"): colon must be followed by more characters (at ":")"#,
            ),
            (
                "1:2x",
                r#"ParseAddr("1:2x"): unexpected character, want colon (at "x")"#,
            ),
            (
                "1:2:1.2.3.4",
                r#"ParseAddr("1:2:1.2.3.4"): embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")"#,
            ),
            ("::1.2.3", r#"ParseAddr("::1.2.3"): IPv4 address too short"#),
        ] {
            assert_eq!(
                parse_addr(input).unwrap_err().to_string(),
                message,
                "{input}"
            );
        }
    }

    #[test]
    fn prefixes() {
        let p = parse_prefix("192.168.0.1/24").unwrap();
        assert_eq!(p.to_string(), "192.168.0.1/24");
        assert_eq!(p.masked().to_string(), "192.168.0.0/24");
        assert!(p.contains(&addr("192.168.0.200")));
        assert!(!p.contains(&addr("192.168.1.1")));
        assert!(!p.contains(&addr("::ffff:192.168.0.1")));
        let all = parse_prefix("0.0.0.0/0").unwrap();
        assert!(all.contains(&addr("255.1.2.3")));
        let v6 = parse_prefix("2001:db8:1::/32").unwrap();
        assert_eq!(v6.masked().to_string(), "2001:db8::/32");
        assert_eq!(parse_prefix("::/0").unwrap().masked().to_string(), "::/0");
        assert!(
            parse_prefix("10.0.0.0/8")
                .unwrap()
                .contains_prefix(&parse_prefix("10.1.0.0/16").unwrap())
        );
        for (input, message) in [
            ("1.2.3.4", r#"netip.ParsePrefix("1.2.3.4"): no '/'"#),
            (
                "192.168.0.0/",
                r#"netip.ParsePrefix("192.168.0.0/"): bad bits after slash: """#,
            ),
            (
                "1.2.3.4/08",
                r#"netip.ParsePrefix("1.2.3.4/08"): bad bits after slash: "08""#,
            ),
            (
                "1.2.3.4/+8",
                r#"netip.ParsePrefix("1.2.3.4/+8"): bad bits after slash: "+8""#,
            ),
            (
                "1.2.3.4/33",
                r#"netip.ParsePrefix("1.2.3.4/33"): prefix length out of range"#,
            ),
            (
                "::/129",
                r#"netip.ParsePrefix("::/129"): prefix length out of range"#,
            ),
            (
                "fe80::1%en0/64",
                r#"netip.ParsePrefix("fe80::1%en0/64"): IPv6 zones cannot be present in a prefix"#,
            ),
            (
                "1.2.3/8",
                r#"netip.ParsePrefix("1.2.3/8"): ParseAddr("1.2.3"): IPv4 address too short"#,
            ),
        ] {
            assert_eq!(
                parse_prefix(input).unwrap_err().to_string(),
                message,
                "{input}"
            );
        }
        assert_eq!(parse_prefix("1.2.3.4/0").unwrap().bits, 0);
    }

    #[test]
    fn classification() {
        assert!(addr("0.0.0.0").is_unspecified() && addr("::").is_unspecified());
        assert!(addr("127.9.9.9").is_loopback() && addr("::1").is_loopback());
        assert!(addr("224.0.0.1").is_link_local_multicast());
        assert!(!addr("224.0.1.1").is_link_local_multicast());
        assert!(
            addr("ff02::1").is_link_local_multicast() && addr("ff12::1").is_link_local_multicast()
        );
        assert!(!addr("fd00::1").is_link_local_multicast());
        assert!(
            addr("169.254.1.1").is_link_local_unicast() && addr("febf::1").is_link_local_unicast()
        );
        assert!(!addr("fec0::1").is_link_local_unicast());
        assert!(addr("10.0.0.1").is_global_unicast() && addr("fd00::1").is_global_unicast());
        for not_global in [
            "0.0.0.0",
            "255.255.255.255",
            "127.0.0.1",
            "224.0.0.1",
            "169.254.0.1",
            "::",
            "::1",
            "ff00::1",
            "fe80::1",
        ] {
            assert!(!addr(not_global).is_global_unicast(), "{not_global}");
        }
    }
}
