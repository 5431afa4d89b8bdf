//! A small real HTTP/1.1 server on loopback whose answers the test writes
//! byte for byte: lying lengths, bodies cut short, redirects.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

/// What the server answers to a request for `path`, written to the stream.
pub type Handler = dyn Fn(&str, &mut TcpStream) + Send + Sync;

/// Serve `handler` on 127.0.0.1 for at most `max_requests` connections;
/// returns the port.
pub fn serve(max_requests: usize, handler: Arc<Handler>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(max_requests) {
            let Ok(mut stream) = stream else { continue };
            let handler = handler.clone();
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(10)));
                if let Some(path) = request_path(&mut stream) {
                    handler(&path, &mut stream);
                }
            });
        }
    });
    port
}

/// The path of the request on `stream`, once its head has been read.
fn request_path(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        if stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let line = String::from_utf8_lossy(&head);
    line.split_whitespace().nth(1).map(str::to_string)
}

/// A whole response: `status` (e.g. `200 OK`), extra headers, body.
pub fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// A response that announces `announced` bytes and sends only `body`.
pub fn respond_cut_short(stream: &mut TcpStream, announced: usize, body: &[u8]) {
    let head =
        format!("HTTP/1.1 200 OK\r\nContent-Length: {announced}\r\nConnection: close\r\n\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// A response with no length that streams `total` zero bytes, until the
/// client hangs up.
pub fn respond_endless(stream: &mut TcpStream, total: usize) {
    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    let chunk = vec![0u8; 64 * 1024];
    let mut sent = 0;
    while sent < total {
        if stream.write_all(&chunk).is_err() {
            return;
        }
        sent += chunk.len();
    }
}
