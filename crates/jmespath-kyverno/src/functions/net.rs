//! `is_external_url(url)`: whether a URL's host is neither loopback nor private. An IP
//! address is judged directly; a name is resolved with [`Options::resolver`](crate::Options)
//! (the system resolver by default, as Kyverno resolves it), and is external only if none
//! of its addresses is loopback or private.

use std::net::IpAddr;

use celer_jmespath::{Function, RuntimeError};
use sonic_rs::Value;

use super::{S, raw, sig, str_arg};
use crate::Options;

/// Go's `IsLoopback() || IsPrivate()`, IPv4-mapped addresses read as IPv4.
fn internal(ip: IpAddr) -> bool {
    let v4 = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => v6.to_ipv4_mapped(),
    };
    if let Some(v4) = v4 {
        return v4.is_loopback() || v4.is_private();
    }
    match ip {
        IpAddr::V6(v6) => {
            v6.is_loopback() || (v6.segments().first().copied().unwrap_or(0) & 0xfe00) == 0xfc00
        }
        IpAddr::V4(_) => false,
    }
}

fn external(args: &[Value], options: &Options) -> Result<Value, RuntimeError> {
    let url =
        celer_cel_kubernetes::gourl::parse(str_arg(args, 0)).map_err(|e| raw(e.to_string()))?;
    let host = url.hostname();
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(Value::from(!internal(ip)));
    }
    let addrs = (options.resolver)(host).map_err(raw)?;
    Ok(Value::from(!addrs.into_iter().any(internal)))
}

/// The system resolver, worded as Go's (`lookup <host>: ...`).
pub(crate) fn system_resolver(host: &str) -> Result<Vec<IpAddr>, String> {
    use std::net::ToSocketAddrs as _;
    if host.is_empty() {
        return Err("lookup : no such host".into());
    }
    (host, 0u16)
        .to_socket_addrs()
        .map(|addrs| addrs.map(|a| a.ip()).collect())
        .map_err(|e| format!("lookup {host}: {e}"))
}

pub(super) fn functions(out: &mut Vec<Function>, options: &Options) {
    let options = options.clone();
    out.push(Function::new("is_external_url", sig([S]), move |a| {
        external(a, &options)
    }));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::net::IpAddr;

    use sonic_rs::json;

    #[test]
    fn classifies_addresses() {
        let options = crate::Options::default().with_resolver(|host| match host {
            "internal.example" => Ok(vec!["10.0.0.1".parse::<IpAddr>().unwrap()]),
            "public.example" => Ok(vec!["93.184.216.34".parse::<IpAddr>().unwrap()]),
            other => Err(format!("lookup {other}: no such host")),
        });
        let r = crate::registry_with(&options);
        let check = |url: &str| {
            r.compile(&format!("is_external_url('{url}')"))
                .unwrap()
                .search(&json!({}))
        };
        assert_eq!(check("https://8.8.8.8/x").unwrap(), json!(true));
        assert_eq!(check("http://127.0.0.1:8080").unwrap(), json!(false));
        assert_eq!(check("http://192.168.1.1").unwrap(), json!(false));
        assert_eq!(check("http://[::1]/").unwrap(), json!(false));
        assert_eq!(check("http://[fd00::1]/").unwrap(), json!(false));
        assert_eq!(check("https://internal.example/a").unwrap(), json!(false));
        assert_eq!(check("https://public.example/a").unwrap(), json!(true));
        assert!(check("https://nowhere.example/").is_err());
    }
}
