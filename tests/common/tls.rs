//! TLS for tests: a CA and a server certificate for 127.0.0.1 made at test
//! time, written as the PEM files the broker's TLS listener and engram read.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};

/// A CA (its certificate written to `ca_file`) and a server certificate it
/// signed for 127.0.0.1 and localhost.
pub struct Certificates {
    pub ca_file: PathBuf,
    /// The server's private key (PKCS#8) and certificate in one PEM file,
    /// as Kafka's PEM keystore reads them.
    pub server_pem_file: PathBuf,
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
        }
    }
}
