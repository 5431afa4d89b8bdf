//! A real OCI registry for the tests: Debian's `docker-registry` (the CNCF
//! distribution registry) on 127.0.0.1 with a random free port and its
//! storage in a temporary directory. Installed with apt when missing, so a
//! fresh machine passes; stopped when dropped.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BINARY: &str = "/usr/bin/docker-registry";

/// A running registry.
pub struct Registry {
    child: Child,
    pub port: u16,
    dir: tempfile::TempDir,
}

/// Install `docker-registry` with apt if it is missing (once per process).
fn ensure_installed() {
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _guard = INSTALLING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if Path::new(BINARY).exists() {
        return;
    }
    let status = Command::new("sh")
        .args([
            "-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry",
        ])
        .status();
    assert!(
        Path::new(BINARY).exists(),
        "the OCI tests need {BINARY} (Debian's docker-registry package) and installing it \
         failed ({status:?}): run `apt-get install docker-registry` as root"
    );
}

impl Registry {
    pub fn start() -> Registry {
        ensure_installed();
        let dir = tempfile::Builder::new()
            .prefix("warden-registry-")
            .tempdir()
            .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\n\
             storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\n\
             http:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("data").display()
        );
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new(BINARY)
            .arg("serve")
            .arg(&config_path)
            .env("OTEL_TRACES_EXPORTER", "none")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let registry = Registry { child, port, dir };
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "docker-registry did not listen on 127.0.0.1:{port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// `oci://127.0.0.1:PORT/REPO`.
    pub fn reference(&self, repo: &str) -> String {
        format!("oci://127.0.0.1:{}/{repo}", self.port)
    }

    /// Where the registry stores the blob with digest `sha256:HEX`.
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// Push an artifact of one layer with the media types given, as any
    /// client could (not through warden): returns the manifest digest.
    pub fn push_raw(
        &self,
        repo: &str,
        config_media_type: &str,
        config: &[u8],
        layer_media_type: &str,
        layer: &[u8],
        claimed_size: Option<i64>,
    ) -> String {
        use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
        use oci_client::manifest::OciImageManifest;
        use oci_client::secrets::RegistryAuth;
        let reference: oci_client::Reference =
            format!("127.0.0.1:{}/{repo}", self.port).parse().unwrap();
        let client = oci_client::Client::new(ClientConfig {
            protocol: ClientProtocol::Http,
            ..ClientConfig::default()
        });
        let layers = vec![ImageLayer {
            data: layer.to_vec(),
            media_type: layer_media_type.into(),
            annotations: None,
        }];
        let config = Config {
            data: config.to_vec(),
            media_type: config_media_type.into(),
            annotations: None,
        };
        let mut manifest = OciImageManifest::build(&layers, &config, None);
        manifest.media_type = Some("application/vnd.oci.image.manifest.v1+json".into());
        if let Some(size) = claimed_size {
            manifest.layers[0].size = size;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            client
                .push(
                    &reference,
                    &layers,
                    config,
                    &RegistryAuth::Anonymous,
                    Some(manifest),
                )
                .await
                .unwrap();
            let (raw, _) = client
                .pull_manifest_raw(
                    &reference,
                    &RegistryAuth::Anonymous,
                    &["application/vnd.oci.image.manifest.v1+json"],
                )
                .await
                .unwrap();
            format!("sha256:{}", warden::base::sha256_hex(&raw))
        })
    }

    /// The manifest stored for `repo:tag`, as JSON.
    pub fn manifest(&self, repo_tag: &str) -> serde_json::Value {
        use oci_client::client::{ClientConfig, ClientProtocol};
        let reference: oci_client::Reference = format!("127.0.0.1:{}/{repo_tag}", self.port)
            .parse()
            .unwrap();
        let client = oci_client::Client::new(ClientConfig {
            protocol: ClientProtocol::Http,
            ..ClientConfig::default()
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (raw, _) = runtime
            .block_on(client.pull_manifest_raw(
                &reference,
                &oci_client::secrets::RegistryAuth::Anonymous,
                &["application/vnd.oci.image.manifest.v1+json"],
            ))
            .unwrap();
        serde_json::from_slice(&raw).unwrap()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
