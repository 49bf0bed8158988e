//! Which servers fire trusts over https: the system's roots, the CA of `--cacert`, or, with
//! `--insecure`, any certificate at all. rustls on the `ring` provider.

use crate::error::{CaFileError, Error};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where trust comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Trust {
    /// The system's roots (`/etc/ssl/certs`; `SSL_CERT_FILE` and `SSL_CERT_DIR` override).
    #[default]
    System,
    /// Only the certificates in this PEM file, as curl's `--cacert`.
    CaFile(PathBuf),
    /// Any certificate: for self-signed test servers, never for a server across a network.
    Insecure,
}

impl Trust {
    /// How the output header names it.
    pub fn name(&self) -> &'static str {
        match self {
            Trust::System => "system",
            Trust::CaFile(_) => "cacert",
            Trust::Insecure => "insecure",
        }
    }
}

/// The rustls client settings for `trust`; ALPN is left to the connector. The system's roots
/// are read only when `https` is true (an http:// run needs none). `Err` is bad input: a CA
/// file that cannot be read or holds no certificate, or a system without roots.
pub fn client_config(trust: &Trust, https: bool) -> Result<ClientConfig, Error> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(Error::Tls)?;
    let config = match trust {
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth(),
        Trust::CaFile(path) => builder
            .with_root_certificates(ca_file(path).map_err(|source| Error::CaFile {
                path: path.clone(),
                source,
            })?)
            .with_no_client_auth(),
        Trust::System if https => builder
            .with_root_certificates(system_roots()?)
            .with_no_client_auth(),
        Trust::System => builder
            .with_root_certificates(RootCertStore::empty())
            .with_no_client_auth(),
    };
    Ok(config)
}

/// The certificates of a `--cacert` file, every one of them accepted by rustls.
fn ca_file(path: &Path) -> Result<RootCertStore, CaFileError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())?;
    let mut roots = RootCertStore::empty();
    for (i, cert) in certs.into_iter().enumerate() {
        roots.add(cert).map_err(|source| CaFileError::Certificate {
            index: i + 1,
            source,
        })?;
    }
    if roots.is_empty() {
        return Err(CaFileError::Empty);
    }
    Ok(roots)
}

/// The system's trusted roots; `Err` when there are none to trust.
fn system_roots() -> Result<RootCertStore, Error> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (_added, _ignored) = roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let why = found.errors.first().map(|e| e.to_string());
        return Err(Error::NoSystemRoots { why });
    }
    Ok(roots)
}

/// Accepts every certificate, but still checks that the handshake is signed by its key, so
/// that the connection is at least a working TLS session.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_cli::{Ending, ToolError};

    #[test]
    fn a_ca_file_without_certificates_is_refused_by_name() {
        let path = std::env::temp_dir().join(format!("tokenpipe-fire-ca-{}", std::process::id()));
        std::fs::write(&path, "not a certificate\n").unwrap();
        let e = client_config(&Trust::CaFile(path.clone()), true)
            .err()
            .unwrap();
        assert_eq!(e.ending(), Ending::BadInput);
        let e = tokenpipe_cli::message(&e);
        assert!(
            e.contains("--cacert") && e.contains("no PEM certificate"),
            "{e}"
        );
        let _ = std::fs::remove_file(&path);
        let missing = client_config(&Trust::CaFile("/nonexistent/ca.pem".into()), true)
            .err()
            .unwrap();
        assert_eq!(missing.ending(), Ending::BadInput);
        let missing = tokenpipe_cli::message(&missing);
        assert!(
            missing.starts_with("--cacert /nonexistent/ca.pem: I/O error: "),
            "{missing}"
        );
    }

    #[test]
    fn plain_http_needs_no_roots() {
        assert!(client_config(&Trust::System, false).is_ok());
        assert!(client_config(&Trust::Insecure, true).is_ok());
    }
}
