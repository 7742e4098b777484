//! A TLS endpoint for tests: a CA and a server certificate for 127.0.0.1
//! made at test time, and a terminator that accepts TLS and forwards the
//! plaintext to a target (the test broker, which speaks no TLS itself).

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A CA (its certificate written to `ca_file`) and a server certificate it
/// signed for 127.0.0.1 and localhost.
pub struct Certificates {
    pub ca_file: PathBuf,
    /// The server's private key (PKCS#8) and certificate in one PEM file,
    /// as Kafka's PEM keystore reads them.
    pub server_pem_file: PathBuf,
    server_chain: Vec<CertificateDer<'static>>,
    server_key: Vec<u8>,
}

impl Certificates {
    /// Makes a fresh CA named `name` and writes its certificate into `dir`.
    pub fn generate(dir: &Path, name: &str) -> Certificates {
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, format!("engram test CA {name}"));
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let issuer = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
        let mut server =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        server
            .distinguished_name
            .push(DnType::CommonName, "127.0.0.1");
        let server_key = KeyPair::generate().unwrap();
        let server_cert = server.signed_by(&server_key, &issuer).unwrap();
        let ca_file = dir.join(format!("ca-{name}.pem"));
        std::fs::write(&ca_file, issuer.pem()).unwrap();
        let server_pem_file = dir.join(format!("server-{name}.pem"));
        std::fs::write(
            &server_pem_file,
            format!("{}{}", server_key.serialize_pem(), server_cert.pem()),
        )
        .unwrap();
        Certificates {
            ca_file,
            server_pem_file,
            server_chain: vec![server_cert.der().clone()],
            server_key: server_key.serialize_der(),
        }
    }
}

/// Accepts TLS on a local port and relays each connection to `target` in
/// plaintext; runs until the test process ends.
pub struct TlsTerminator {
    pub port: u16,
    handshakes: Arc<AtomicUsize>,
}

impl TlsTerminator {
    pub fn spawn(listener: TcpListener, target: String, certificates: &Certificates) -> Self {
        let port = listener.local_addr().unwrap().port();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certificates.server_key.clone()));
        let config = ServerConfig::builder_with_provider(Arc::new(
            tokio_rustls::rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certificates.server_chain.clone(), key)
        .unwrap();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let handshakes = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&handshakes);
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((client, _)) = listener.accept().await else {
                        continue;
                    };
                    let acceptor = acceptor.clone();
                    let target = target.clone();
                    let counted = Arc::clone(&counted);
                    tokio::spawn(async move {
                        // A client that fails the handshake (wrong CA) just
                        // goes away; that is what the tests look at.
                        let Ok(mut tls) = acceptor.accept(client).await else {
                            return;
                        };
                        counted.fetch_add(1, Ordering::SeqCst);
                        let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else {
                            return;
                        };
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut server).await;
                    });
                }
            });
        });
        TlsTerminator { port, handshakes }
    }

    /// TLS handshakes completed so far.
    pub fn handshakes(&self) -> usize {
        self.handshakes.load(Ordering::SeqCst)
    }
}
