//! `x509_decode(pem)`: the first PEM block, a `CERTIFICATE` or `CERTIFICATE REQUEST` with an
//! RSA key, as an object of Go's `x509.Certificate` / `x509.CertificateRequest` fields.
//!
//! The DER decoding is `celer-cel-kyverno`'s `x509.decode` (the same Go structures that
//! Kyverno's CEL library returns), run through a one-line CEL program, so that celer keeps
//! one certificate reader. Kyverno's JMESPath function encodes the whole Go
//! `x509.Certificate`; the fields the CEL library leaves out are added here from the
//! certificate's own DER ([`super::x509_fields`]).

use std::sync::LazyLock;

use celer_cel::{Activation, Env, Program, Type, Value as CelValue};
use celer_jmespath::{Function, RuntimeError};
use sonic_rs::Value;

use super::{S, raw, sig, str_arg};
use crate::json::normalize_numbers;

static DECODE: LazyLock<Option<(Env, Program)>> = LazyLock::new(|| {
    let mut env = Env::standard();
    celer_cel_kyverno::x509::register(env.registry_mut());
    env.declare("pem", Type::String);
    let program = env.compile("x509.decode(pem)").ok()?;
    Some((env, program))
});

fn decode(args: &[Value]) -> Result<Value, RuntimeError> {
    let pem = str_arg(args, 0);
    let (env, program) = DECODE
        .as_ref()
        .ok_or_else(|| raw("x509_decode is unavailable"))?;
    let mut activation = Activation::new(env);
    activation
        .bind("pem", CelValue::string(pem))
        .map_err(|e| raw(e.to_string()))?;
    let decoded = program.eval(&activation).map_err(|e| raw(e.message()))?;
    let json = celer_cel_kyverno::convert::value_to_json(&decoded).map_err(|e| raw(e.message()))?;
    let mut json = normalize_numbers(&json);
    super::x509_fields::complete(pem, &mut json);
    Ok(json)
}

pub(super) fn functions(out: &mut Vec<Function>) {
    out.push(Function::new("x509_decode", sig([S]), decode));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::tests::{eval, eval_err};
    use sonic_rs::{JsonValueTrait, json};

    /// A self-signed RSA certificate made with openssl for these tests: several subject
    /// attributes, certificate policies, an unknown EKU, an unknown critical extension,
    /// policy constraints.
    const RICH: &str = include_str!("testdata/rich-rsa.pem");

    #[test]
    fn decodes_the_whole_go_certificate() {
        let c = eval("x509_decode(pem)", json!({"pem": RICH}));
        assert_eq!(c["Version"], json!(3));
        assert_eq!(c["SignatureAlgorithm"], json!(4));
        assert_eq!(c["Subject"]["CommonName"], json!("rich"));
        assert_eq!(c["Subject"]["Organization"], json!(["Org A", "Org B"]));
        assert_eq!(c["Subject"]["SerialNumber"], json!("42"));
        assert_eq!(c["Subject"]["OrganizationalUnit"], json!(null));
        assert_eq!(c["Policies"], json!(["1.2.3.4", "2.23.140.1.2.1"]));
        assert_eq!(c["UnknownExtKeyUsage"], json!([[1, 2, 3, 5]]));
        assert_eq!(c["UnhandledCriticalExtensions"], json!([[1, 2, 3, 6]]));
        assert_eq!(
            (
                c["InhibitAnyPolicy"].clone(),
                c["RequireExplicitPolicy"].clone()
            ),
            (json!(2), json!(1))
        );
        // Go's big.Int serial, read back as a float64.
        assert_eq!(c["SerialNumber"].as_f64(), Some(1.987_620_097_710_608e47));
        assert_eq!(c["PublicKey"]["E"], json!(65537));
        assert_eq!(
            eval_err("x509_decode('junk')", json!({})),
            "failed to decode PEM block"
        );
    }
}
