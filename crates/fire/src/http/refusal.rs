//! A TLS connection refused, in words a user can act on: what is wrong with the server's
//! certificate and the remedy that fits whom fire trusts (`--cacert` given or not), or that the
//! port answered in plain HTTP. rustls' own words about a certificate ("invalid peer
//! certificate: UnknownIssuer") stay after them as the cause; its words for a plain-HTTP answer
//! ("received corrupt message of type InvalidContentType") say nothing more and are dropped.

use super::tls::Trust;
use hyper::Uri;
use rustls::CertificateError as C;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A TLS failure in words a user can act on, with rustls' error as its cause where that adds
/// something.
#[derive(Debug)]
struct TlsRefused {
    message: String,
    cause: Option<rustls::Error>,
}

impl std::fmt::Display for TlsRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TlsRefused {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_ref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// Replaces a TLS error of a connect to `dst` with one that says what is wrong and what to do,
/// under `trust`; other errors pass unchanged.
pub(super) fn explain(e: BoxError, dst: &Uri, trust: &Trust) -> BoxError {
    let Some(cause) = find_rustls_error(&*e).cloned() else {
        return e;
    };
    let Some(message) = words(&cause, dst, trust) else {
        return e;
    };
    let plain_http = matches!(
        cause,
        rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)
    );
    Box::new(TlsRefused {
        message,
        cause: (!plain_http).then_some(cause),
    })
}

/// What to say for `cause`, or `None` to keep rustls' words.
fn words(cause: &rustls::Error, dst: &Uri, trust: &Trust) -> Option<String> {
    let host = dst.host().unwrap_or_default();
    let certificate = format!("the certificate of {host}");
    let test_server = "or --insecure for a test server";
    let message = match cause {
        rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => format!(
            "{} does not answer in TLS: this port speaks plain HTTP: use http://",
            dst.authority().map(|a| a.as_str()).unwrap_or(host)
        ),
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => match trust {
            Trust::CaFile(path) => format!(
                "{certificate} is not signed by a CA in --cacert {}; give the CA that signed it (or its chain's root), {test_server}",
                path.display()
            ),
            _ => format!(
                "{certificate} is not trusted: its issuer is not among the trusted roots; give fire its CA with --cacert FILE, {test_server}"
            ),
        },
        rustls::Error::InvalidCertificate(C::BadSignature) => format!(
            "{certificate} is not signed by the key of the CA it names (a CA of the same name made again?); {}",
            match trust {
                Trust::CaFile(path) => format!(
                    "give in --cacert {} the CA that signed it, {test_server}",
                    path.display()
                ),
                _ => format!("give fire the CA that signed it with --cacert FILE, {test_server}"),
            }
        ),
        rustls::Error::InvalidCertificate(C::NotValidForNameContext { presented, .. }) => {
            let names: Vec<&str> = presented.iter().map(|n| plain_name(n)).collect();
            format!(
                "{certificate} is not valid for {host}: it is for {}; connect by a name it lists, {test_server}",
                if names.is_empty() { "no name at all".to_string() } else { names.join(", ") }
            )
        }
        rustls::Error::InvalidCertificate(C::NotValidForName) => format!(
            "{certificate} is not valid for {host}; connect by a name it lists, {test_server}"
        ),
        rustls::Error::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => format!(
            "{certificate} has expired; renew it on the server (or check this machine's clock), {test_server}"
        ),
        rustls::Error::InvalidCertificate(C::NotValidYet | C::NotValidYetContext { .. }) => {
            format!(
                "{certificate} is not valid yet; check the clocks of this machine and the server, {test_server}"
            )
        }
        rustls::Error::InvalidCertificate(C::Other(other))
            if format!("{other:?}").contains("CaUsedAsEndEntity") =>
        {
            // webpki's error, which rustls passes on as `Other`: matched by name, so that fire
            // needs no dependency on webpki of its own to tell it apart.
            format!(
                "the server at {host} presents a CA certificate as its own (one marked CA:TRUE, as `openssl req -x509` makes by default), and a CA's certificate cannot be a server's; serve a certificate signed by that CA, {test_server}"
            )
        }
        rustls::Error::InvalidCertificate(_) => match trust {
            Trust::CaFile(path) => format!(
                "{certificate} is not trusted, though --cacert {} was given; {test_server}",
                path.display()
            ),
            _ => format!(
                "{certificate} is not trusted; give fire its CA with --cacert FILE, {test_server}"
            ),
        },
        _ => return None,
    };
    Some(message)
}

/// A name as webpki presents it (`DnsName("a.example")`, `IpAddress(10.0.0.5)`), bare.
fn plain_name(presented: &str) -> &str {
    presented
        .strip_prefix("DnsName(\"")
        .and_then(|n| n.strip_suffix("\")"))
        .or_else(|| {
            presented
                .strip_prefix("IpAddress(")
                .and_then(|n| n.strip_suffix(')'))
        })
        .unwrap_or(presented)
}

/// The rustls error under hyper-rustls' and tokio-rustls' `io::Error` wrappers, if any.
fn find_rustls_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(found) = err.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        cur = match err.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => err.source(),
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped(e: rustls::Error) -> BoxError {
        Box::new(std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            e,
        )))
    }

    fn said(e: rustls::Error, trust: &Trust) -> String {
        let dst: Uri = "https://127.0.0.1:8443/v1/models".parse().unwrap();
        explain(wrapped(e), &dst, trust).to_string()
    }

    #[test]
    fn an_unknown_issuer_names_the_remedy() {
        let unknown = || rustls::Error::InvalidCertificate(C::UnknownIssuer);
        let m = said(unknown(), &Trust::System);
        assert!(m.contains("127.0.0.1") && m.contains("not trusted"), "{m}");
        assert!(m.contains("--cacert") && m.contains("--insecure"), "{m}");
        let dst: Uri = "https://h/v1".parse().unwrap();
        let other: BoxError = Box::new(std::io::Error::other("connection refused"));
        assert_eq!(
            explain(other, &dst, &Trust::System).to_string(),
            "connection refused"
        );
        // With --cacert given, the remedy is another CA in that file, not --cacert itself.
        let m = said(unknown(), &Trust::CaFile("ca.pem".into()));
        assert!(
            m.contains("is not signed by a CA in --cacert ca.pem"),
            "{m}"
        );
        assert!(!m.contains("give fire its CA"), "{m}");
    }

    #[test]
    fn a_certificate_for_other_names_lists_them() {
        let e = rustls::Error::InvalidCertificate(C::NotValidForNameContext {
            expected: rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap(),
            presented: vec![
                "DnsName(\"gpu-1.example\")".into(),
                "IpAddress(10.0.0.5)".into(),
            ],
        });
        let m = said(e, &Trust::CaFile("ca.pem".into()));
        assert!(
            m.starts_with("the certificate of 127.0.0.1 is not valid for 127.0.0.1: it is for gpu-1.example, 10.0.0.5; connect by a name it lists"),
            "{m}"
        );
        assert!(!m.contains("--cacert"), "{m}");
    }

    #[test]
    fn a_plain_http_port_is_named_as_one() {
        let e = rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType);
        let m = said(e, &Trust::System);
        assert_eq!(
            m,
            "127.0.0.1:8443 does not answer in TLS: this port speaks plain HTTP: use http://"
        );
        let chain = crate::failure::error_chain(&*explain(
            wrapped(rustls::Error::InvalidMessage(
                rustls::InvalidMessage::InvalidContentType,
            )),
            &"https://h:1/v1".parse().unwrap(),
            &Trust::System,
        ));
        assert_eq!(
            chain, "h:1 does not answer in TLS: this port speaks plain HTTP: use http://",
            "rustls' words add nothing here"
        );
        let chain = crate::failure::error_chain(&*explain(
            wrapped(rustls::Error::InvalidCertificate(C::UnknownIssuer)),
            &"https://h:1/v1".parse().unwrap(),
            &Trust::System,
        ));
        assert!(
            chain.ends_with("UnknownIssuer"),
            "a certificate's cause stays: {chain}"
        );
    }

    #[test]
    fn times_and_other_refusals_do_not_send_a_cacert_user_to_cacert() {
        let cacert = Trust::CaFile("ca.pem".into());
        for e in [
            C::Expired,
            C::NotValidYet,
            C::Revoked,
            C::NotValidForName,
            C::BadSignature,
        ] {
            let m = said(rustls::Error::InvalidCertificate(e), &cacert);
            assert!(!m.contains("give fire its CA"), "{m}");
            assert!(m.contains("--insecure"), "{m}");
        }
        let m = said(
            rustls::Error::InvalidCertificate(C::Expired),
            &Trust::System,
        );
        assert!(m.contains("has expired"), "{m}");
    }
}
