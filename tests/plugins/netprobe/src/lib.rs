//! A hostile test fixture for the host's network egress: it sends exactly
//! the request its input describes through `wasi:http` — any method,
//! scheme, authority, path and headers (CR/LF and Host included), a body of
//! any size — and reports what came back or the error code, checking
//! nothing itself, so only the host can refuse. Another tool shows
//! everything the guest can see, and one leaks a workspace file through
//! every output channel, to test redaction at the host's choke point.

mod raw;
mod view;

mod wasi_http {
    wit_bindgen::generate!({
        path: "wit",
        world: "netprobe",
        generate_all,
    });
}

warden_sdk::register!(raw::HttpRaw, view::SeeAll, view::LeakFile);
