//! TLS: verified against the URL's host name with the trusted roots; a
//! test CA is trusted only through the library API.

use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use warden::capability::egress::Resolver;

use super::server::{Loopback, ok_with};
use super::*;

/// Every name resolves to 127.0.0.1.
struct Loop;

impl Resolver for Loop {
    fn resolve(&self, _host: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        Ok(vec!["127.0.0.1".parse().unwrap()])
    }
}

/// A CA (DER) and a server configuration with a certificate it signed for `names`.
fn test_ca(names: &[&str]) -> (Vec<u8>, Arc<rustls::ServerConfig>) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "warden egress test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &ca, &ca_key).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![leaf.der().clone()], key)
    .unwrap();
    (ca.der().to_vec(), Arc::new(config))
}

fn call(p: &Policy, env: &EgressEnv, host: &str, port: u16) -> (CallReport, serde_json::Value) {
    let sb = Sandbox::new();
    let grant = grant_under(p, &sb.ws(), "http_raw");
    let report = probe_with(
        "http_raw",
        get("https", &format!("{host}:{port}"), "/"),
        &grant,
        &short_limits(),
        env,
    );
    let out = probe_json(&report);
    (report, out)
}

#[test]
fn tls_is_verified_against_the_url_host() {
    let (ca, config) = test_ca(&["tls.test"]);
    let server = Loopback::https(config, ok_with("secure"));
    let port = server.port();
    let p = net_policy(&format!(
        "{{ url = \"https://tls.test:{port}\", allow_private = [\"127.0.0.1\"] }}, \
         {{ url = \"https://other.test:{port}\", allow_private = [\"127.0.0.1\"] }}"
    ));
    let trusted = EgressEnv::system()
        .with_resolver(Loop)
        .with_extra_root(&ca)
        .unwrap();

    let (report, out) = call(&p, &trusted, "tls.test", port);
    assert_eq!(out["body"], "secure", "{out}");
    assert_eq!(report.network[0].status, Some(200));

    let (report, out) = call(&p, &trusted, "other.test", port);
    assert_eq!(
        out["error"], "TlsCertificateError",
        "a certificate for another name: {out}"
    );
    assert!(report.network[0].error.is_some());

    let untrusted = EgressEnv::system().with_resolver(Loop);
    let (_, out) = call(&p, &untrusted, "tls.test", port);
    assert_eq!(out["error"], "TlsCertificateError", "an unknown CA: {out}");

    assert_eq!(
        server.requests().len(),
        1,
        "only the verified exchange got through"
    );
}

#[test]
fn an_address_url_is_verified_as_an_address() {
    let (ca, config) = test_ca(&["tls.test"]);
    let server = Loopback::https(config, ok_with("secure"));
    let port = server.port();
    let p = net_policy(&format!("\"https://127.0.0.1:{port}\""));
    let env = EgressEnv::system().with_extra_root(&ca).unwrap();
    let (_, out) = call(&p, &env, "127.0.0.1", port);
    assert_eq!(
        out["error"], "TlsCertificateError",
        "the certificate names no address: {out}"
    );
    assert!(server.requests().is_empty());
}
