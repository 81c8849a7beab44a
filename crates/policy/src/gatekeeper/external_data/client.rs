//! Calls to providers, through the shared HTTP client ([`crate::http_client`]): a POST of
//! the `ProviderRequest` over TLS with the Provider's CA, bounded by the Provider's timeout,
//! the body read bounded by [`MAX_RESPONSE`], any status but 2xx an error.

use std::sync::Arc;

use bytes::Bytes;

use super::provider::Provider;
pub use crate::http_client::CallError;
use crate::http_client::{Call, Endpoint};

/// The largest response body read from a provider.
pub const MAX_RESPONSE: usize = 4 << 20;

/// POSTs `body` (JSON) to the provider and waits for the response body.
pub fn post(provider: &Arc<Provider>, body: Vec<u8>) -> Result<Bytes, CallError> {
    let call = Call {
        method: "POST",
        endpoint: Endpoint {
            authority: provider.authority.clone(),
            host: provider.host.clone(),
            port: provider.port,
            path: provider.path.clone(),
            tls: Some((provider.server_name.clone(), Arc::clone(&provider.tls))),
        },
        headers: Vec::new(),
        body: Some(Bytes::from(body)),
        timeout: provider.timeout,
        max_response: MAX_RESPONSE,
        check_address: None,
    };
    let response = crate::http_client::call(call)?;
    if !(200..300).contains(&response.status) {
        return Err(CallError::Status(response.status));
    }
    Ok(response.body)
}
