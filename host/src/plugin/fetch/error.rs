//! Why a fetch or a push failed: one line each, saying what to do next.

/// A fetch or push that failed; nothing was installed or published.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{reference} is not a valid reference: {reason}")]
    BadReference { reference: String, reason: String },
    #[error(
        "installing from a URL needs the component's digest: add --sha256 HEX (the sha256 of {url})"
    )]
    DigestRequired { url: String },
    #[error("--sha256 {given} is not a sha256: give 64 hex digits")]
    BadSha256 { given: String },
    #[error("--sha256 applies to a URL or OCI install; a local file is hashed as it is installed")]
    DigestForLocal,
    #[error(
        "{url} is plain http, which anyone on the way can change: use https, or pass --allow-http to accept it"
    )]
    PlainHttp { url: String },
    #[error(
        "digest mismatch: {what} has sha256 {got}, but {expected} was expected; nothing was installed"
    )]
    DigestMismatch {
        what: String,
        expected: String,
        got: String,
    },
    #[error(
        "the tag moved: {reference} now serves manifest {served}, but {pinned} is pinned{hint}; nothing was installed"
    )]
    TagMoved {
        reference: String,
        pinned: String,
        served: String,
        /// What to do: update through the lockfile, or change the pin.
        hint: String,
    },
    #[error("{what} is not a component: {reason}")]
    NotAComponent { what: String, reason: String },
    #[error("{what} answered {status}")]
    Status { what: String, status: String },
    #[error("the registry refused {reference}: {message}")]
    Registry { reference: String, message: String },
    #[error(
        "the registry refused access to {reference} (401 Unauthorized): only anonymous pulls and pushes are supported"
    )]
    Unauthorized { reference: String },
    #[error("{what} is larger than the {cap} MiB cap on downloads; nothing was installed")]
    TooLarge { what: String, cap: u64 },
    #[error("{what} is larger than the {cap_kib} KiB cap on manifests; nothing was installed")]
    ManifestTooLarge { what: String, cap_kib: u64 },
    #[error(
        "{what} was cut short: {got} of {expected} bytes arrived; try again, nothing was installed"
    )]
    Truncated {
        what: String,
        got: u64,
        expected: u64,
    },
    #[error(
        "{from} redirects to another host ({to}); refused: install from {to} directly if you trust it"
    )]
    CrossHostRedirect { from: String, to: String },
    #[error("{from} redirects more than {max} times; refused")]
    TooManyRedirects { from: String, max: usize },
    #[error("the fetch took longer than {secs} s and was stopped; nothing was installed")]
    Timeout { secs: u64 },
    #[error("{0}")]
    Network(String),
}
