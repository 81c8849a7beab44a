//! The part of Go's `net/url` that Kubernetes' `url` library uses: `Parse`,
//! `ParseRequestURI`, `EscapedPath`, `Hostname`, `Port` and `Query`, with Go's error texts.
//!
//! The reference is Go 1.26 (checked against it input by input), whose rules are stricter
//! than older releases': a bracketed host must be an IPv6 address (`invalid host:
//! ParseAddr(..)`, `invalid IP-literal`), `http`/`https` hosts may hold one colon (the port
//! is taken after the first one), and a query of more than 10,000 parameters reads as empty.

use std::fmt;

use super::netip::{self, Addr};
use super::shared::go_quote;

/// Which part of a URL is being escaped or unescaped (Go's `encoding`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// A parsed URL, as Go's `url.URL` keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Url {
    pub scheme: String,
    pub opaque: String,
    pub user: Option<(String, Option<String>)>,
    pub host: String,
    /// Go's `OmitHost`: `scheme:/path` had no authority at all (printed without `//`).
    pub omit_host: bool,
    pub path: String,
    pub raw_path: String,
    pub force_query: bool,
    pub raw_query: String,
    pub fragment: String,
    pub raw_fragment: String,
}

/// Go's `*url.Error` for `parse`: `parse "<url>": <why>`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UrlError {
    url: String,
    why: String,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parse {}: {}", go_quote(&self.url), self.why)
    }
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn unhex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// Go's `shouldEscape`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => return c == b'?',
            Mode::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => return true,
            Mode::Fragment => return false,
            Mode::Host | Mode::Zone => {}
        },
        _ => {}
    }
    if mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

/// Go's `unescape`, with its `EscapeError` / `InvalidHostError` texts.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let b = s.as_bytes();
    let bad_escape = |at: usize, len: usize| {
        let end = at.saturating_add(len).min(b.len());
        let bad = String::from_utf8_lossy(b.get(at..end).unwrap_or_default());
        format!("invalid URL escape {}", go_quote(&bad))
    };
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'%' => {
                let (Some(&h), Some(&l)) = (b.get(i + 1), b.get(i + 2)) else {
                    return Err(bad_escape(i, 3));
                };
                if !is_hex(h) || !is_hex(l) {
                    return Err(bad_escape(i, 3));
                }
                let percent25 = h == b'2' && l == b'5';
                // In a host, %-escapes may only stand for non-ASCII bytes (or a zone's %25).
                if mode == Mode::Host && unhex(h) < 8 && !percent25 {
                    return Err(bad_escape(i, 3));
                }
                let v = unhex(h) << 4 | unhex(l);
                if mode == Mode::Zone && !percent25 && v != b' ' && should_escape(v, Mode::Host) {
                    return Err(bad_escape(i, 3));
                }
                out.push(v);
                i += 3;
            }
            b'+' => {
                out.push(if mode == Mode::QueryComponent {
                    b' '
                } else {
                    b'+'
                });
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    let bad = char::from(c).to_string();
                    return Err(format!("invalid character {} in host name", go_quote(&bad)));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    // Go strings may hold any bytes; CEL strings are UTF-8, so invalid sequences are
    // replaced (Go would carry them, and cel-go would then replace them on conversion).
    Ok(match String::from_utf8(out) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Go's `escape`.
fn escape(s: &str, mode: Mode) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if c == b' ' && mode == Mode::QueryComponent {
            out.push('+');
        } else if should_escape(c, mode) {
            out.push('%');
            out.push(char::from(HEX[usize::from(c >> 4)]));
            out.push(char::from(HEX[usize::from(c & 15)]));
        } else {
            out.push(char::from(c));
        }
    }
    // Every byte >= 0x80 was escaped, so `out` is ASCII.
    out
}

/// Go's `getScheme`.
fn get_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' => {
                if i == 0 {
                    return Ok(("", raw));
                }
            }
            b':' => {
                if i == 0 {
                    return Err("missing protocol scheme".to_string());
                }
                return Ok((raw.get(..i).unwrap_or(""), raw.get(i + 1..).unwrap_or("")));
            }
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `url.Parse`: the fragment is cut off first.
pub fn parse(raw: &str) -> Result<Url, UrlError> {
    let (u, frag) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = parse_inner(u, false).map_err(|why| UrlError {
        url: u.to_string(),
        why,
    })?;
    if frag.is_empty() {
        return Ok(url);
    }
    let fragment = unescape(frag, Mode::Fragment).map_err(|why| UrlError {
        url: raw.to_string(),
        why,
    })?;
    url.raw_fragment = if escape(&fragment, Mode::Fragment) == frag {
        String::new()
    } else {
        frag.to_string()
    };
    url.fragment = fragment;
    Ok(url)
}

/// Go's `url.ParseRequestURI`: an absolute URI or an absolute path, no fragment handling.
pub fn parse_request_uri(raw: &str) -> Result<Url, UrlError> {
    parse_inner(raw, true).map_err(|why| UrlError {
        url: raw.to_string(),
        why,
    })
}

fn parse_inner(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|c| c < 0x20 || c == 0x7f) {
        return Err("net/url: invalid control character in URL".to_string());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_string());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".to_string();
        return Ok(url);
    }
    let (scheme, mut rest) = get_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = rest.get(..rest.len() - 1).unwrap_or("");
    } else if let Some((r, q)) = rest.split_once('?') {
        rest = r;
        url.raw_query = q.to_string();
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".to_string());
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".to_string());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let authority_and_path = rest.get(2..).unwrap_or("");
        let (authority, path) = match authority_and_path.find('/') {
            Some(i) => authority_and_path.split_at(i),
            None => (authority_and_path, ""),
        };
        let (user, host) = parse_authority(&url.scheme, authority)?;
        url.user = user;
        url.host = host;
        rest = path;
    } else if !url.scheme.is_empty() && rest.starts_with('/') {
        url.omit_host = true;
    }
    let path = unescape(rest, Mode::Path)?;
    url.raw_path = if escape(&path, Mode::Path) == rest {
        String::new()
    } else {
        rest.to_string()
    };
    url.path = path;
    Ok(url)
}

type Userinfo = Option<(String, Option<String>)>;

/// Go's `defaultMaxParams` for query parsing.
const MAX_QUERY_PARAMS: usize = 10_000;

fn parse_authority(scheme: &str, authority: &str) -> Result<(Userinfo, String), String> {
    let at = authority.rfind('@');
    let host = parse_host(
        scheme,
        match at {
            Some(i) => authority.get(i + 1..).unwrap_or(""),
            None => authority,
        },
    )?;
    let Some(i) = at else {
        return Ok((None, host));
    };
    let userinfo = authority.get(..i).unwrap_or("");
    if !valid_userinfo(userinfo) {
        return Err("net/url: invalid userinfo".to_string());
    }
    let user = match userinfo.split_once(':') {
        None => (unescape(userinfo, Mode::UserPassword)?, None),
        Some((name, password)) => (
            unescape(name, Mode::UserPassword)?,
            Some(unescape(password, Mode::UserPassword)?),
        ),
    };
    Ok((Some(user), host))
}

fn valid_userinfo(s: &str) -> bool {
    s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '-' | '.'
                    | '_'
                    | ':'
                    | '~'
                    | '!'
                    | '$'
                    | '&'
                    | '\''
                    | '('
                    | ')'
                    | '*'
                    | '+'
                    | ','
                    | ';'
                    | '='
                    | '%'
                    | '@'
            )
    })
}

fn valid_optional_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        _ if port.is_empty() => true,
        Some(digits) => digits.bytes().all(|c| c.is_ascii_digit()),
        None => false,
    }
}

fn parse_host(scheme: &str, host: &str) -> Result<String, String> {
    match host.rfind('[') {
        Some(i) if i > 0 => return Err("invalid IP-literal".to_string()),
        Some(_) => return parse_ip_literal(host),
        None => {}
    }
    if let (Some(first), Some(last)) = (host.find(':'), host.rfind(':')) {
        // Only http and https hosts are held to a single colon (Go keeps the old,
        // last-colon reading for other schemes, e.g. comma-separated database hosts).
        let at = if first != last && scheme != "http" && scheme != "https" {
            last
        } else {
            first
        };
        let colon_port = host.get(at..).unwrap_or("");
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
    }
    unescape(host, Mode::Host)
}

/// `[IPv6 address(%25zone)?](:port)?`.
fn parse_ip_literal(host: &str) -> Result<String, String> {
    let Some(close) = host.rfind(']') else {
        return Err("missing ']' in host".to_string());
    };
    let colon_port = host.get(close + 1..).unwrap_or("");
    if !valid_optional_port(colon_port) {
        return Err(format!("invalid port {} after host", go_quote(colon_port)));
    }
    let colon_port = unescape(colon_port, Mode::Host)?;
    let hostname = host.get(1..close).unwrap_or("");
    let name = match hostname.find("%25") {
        Some(z) => {
            let addr = unescape(hostname.get(..z).unwrap_or(""), Mode::Host)?;
            let zone = unescape(hostname.get(z..).unwrap_or(""), Mode::Zone)?;
            addr + &zone
        }
        None => unescape(hostname, Mode::Host)?,
    };
    let parsed = netip::parse_addr(&name).map_err(|e| format!("invalid host: {e}"))?;
    if matches!(parsed.addr, Addr::V4(_)) {
        return Err("invalid IP-literal".to_string());
    }
    Ok(format!("[{name}]{colon_port}"))
}

/// Go's `validEncoded` for paths.
fn valid_encoded_path(s: &str) -> bool {
    s.bytes().all(|c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, Mode::Path)
    })
}

/// Go's `splitHostPort`.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let mut host = host_port;
    let mut port = "";
    if let Some(colon) = host.rfind(':')
        && valid_optional_port(host.get(colon..).unwrap_or(""))
    {
        port = host.get(colon + 1..).unwrap_or("");
        host = host.get(..colon).unwrap_or("");
    }
    if host.len() >= 2 && host.starts_with('[') && host.ends_with(']') {
        host = host.get(1..host.len() - 1).unwrap_or("");
    }
    (host, port)
}

impl Url {
    /// Go's `EscapedPath`.
    pub fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded_path(&self.raw_path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".to_string();
        }
        escape(&self.path, Mode::Path)
    }

    /// Go's `Hostname`: the host without port and brackets.
    pub fn hostname(&self) -> &str {
        split_host_port(&self.host).0
    }

    /// Go's `Port`.
    pub fn port(&self) -> &str {
        split_host_port(&self.host).1
    }

    /// Go's `Query` (`ParseQuery` ignoring malformed pairs): keys in first-seen order with
    /// their values in order.
    pub fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        // Go refuses (and returns nothing for) more than 10,000 parameters.
        if self.raw_query.matches('&').count() >= MAX_QUERY_PARAMS {
            return out;
        }
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(k), Ok(v)) = (
                unescape(k, Mode::QueryComponent),
                unescape(v, Mode::QueryComponent),
            ) else {
                continue;
            };
            match out.iter_mut().find(|(key, _)| *key == k) {
                Some((_, values)) => values.push(v),
                None => out.push((k, vec![v])),
            }
        }
        out
    }

    /// Go's `URL.String`, which Kubernetes compares for equality.
    pub fn to_go_string(&self) -> String {
        let mut buf = String::new();
        if !self.scheme.is_empty() {
            buf.push_str(&self.scheme);
            buf.push(':');
        }
        if !self.opaque.is_empty() {
            buf.push_str(&self.opaque);
        } else {
            let omitted = self.omit_host && self.host.is_empty() && self.user.is_none();
            if (!self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some()) && !omitted
            {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    buf.push_str("//");
                }
                if let Some((name, password)) = &self.user {
                    buf.push_str(&escape(name, Mode::UserPassword));
                    if let Some(p) = password {
                        buf.push(':');
                        buf.push_str(&escape(p, Mode::UserPassword));
                    }
                    buf.push('@');
                }
                buf.push_str(&escape(&self.host, Mode::Host));
            }
            let path = self.escaped_path();
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                buf.push('/');
            }
            if buf.is_empty() && path.split('/').next().unwrap_or("").contains(':') {
                buf.push_str("./");
            }
            buf.push_str(&path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            buf.push('?');
            buf.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            buf.push('#');
            let escaped = if !self.raw_fragment.is_empty()
                && unescape(&self.raw_fragment, Mode::Fragment).is_ok_and(|f| f == self.fragment)
            {
                self.raw_fragment.clone()
            } else {
                escape(&self.fragment, Mode::Fragment)
            };
            buf.push_str(&escaped);
        }
        buf
    }
}
