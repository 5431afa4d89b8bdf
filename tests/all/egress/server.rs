//! Loopback HTTP(S) servers for the egress tests: they record every
//! request they get (so a test can prove one got nothing) and answer
//! through a handler. Bounded: reads time out, handlers end on their own,
//! and dropping the server stops its accept loop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Request line and headers, as sent.
    pub head: String,
    pub body: Vec<u8>,
}

impl Seen {
    /// The values of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Vec<String> {
        self.head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .filter(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
            .collect()
    }
}

/// Writes a response for a request.
pub type Handler = Arc<dyn Fn(&Seen, &mut dyn Write) + Send + Sync>;

/// A server on a loopback address.
pub struct Loopback {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// A TLS configuration for a server.
pub type Tls = Arc<rustls::ServerConfig>;

impl Loopback {
    /// An HTTP server on 127.0.0.1.
    pub fn http(handler: impl Fn(&Seen, &mut dyn Write) + Send + Sync + 'static) -> Loopback {
        Loopback::on(
            TcpListener::bind("127.0.0.1:0").unwrap(),
            None,
            Arc::new(handler),
        )
    }

    /// An HTTPS server on 127.0.0.1.
    pub fn https(
        tls: Tls,
        handler: impl Fn(&Seen, &mut dyn Write) + Send + Sync + 'static,
    ) -> Loopback {
        Loopback::on(
            TcpListener::bind("127.0.0.1:0").unwrap(),
            Some(tls),
            Arc::new(handler),
        )
    }

    /// A server on `listener`.
    pub fn on(listener: TcpListener, tls: Option<Tls>, handler: Handler) -> Loopback {
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (s, h, tls) = (s.clone(), handler.clone(), tls.clone());
                std::thread::spawn(move || serve(conn, tls, &s, &*h));
            }
        });
        Loopback {
            addr,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    conn: TcpStream,
    tls: Option<Tls>,
    seen: &Mutex<Vec<Seen>>,
    handler: &(dyn Fn(&Seen, &mut dyn Write) + Send + Sync),
) {
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    conn.set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    match tls {
        None => exchange(conn, seen, handler),
        Some(config) => {
            let Ok(server) = rustls::ServerConnection::new(config) else {
                return;
            };
            exchange(rustls::StreamOwned::new(server, conn), seen, handler);
        }
    }
}

/// Read requests off `stream` and answer each, until it closes.
fn exchange<S: Read + Write>(
    stream: S,
    seen: &Mutex<Vec<Seen>>,
    handler: &(dyn Fn(&Seen, &mut dyn Write) + Send + Sync),
) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let mut req = Seen {
            head,
            body: Vec::new(),
        };
        let len: usize = req
            .header("content-length")
            .first()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if len > 0 {
            req.body = vec![0; len];
            if reader.read_exact(&mut req.body).is_err() {
                seen.lock().unwrap().push(req);
                return;
            }
        } else if req
            .header("transfer-encoding")
            .iter()
            .any(|v| v.contains("chunked"))
        {
            req.body = read_chunked(&mut reader);
        }
        seen.lock().unwrap().push(req.clone());
        let stream = reader.get_mut();
        handler(&req, stream);
        if stream.flush().is_err() {
            return;
        }
    }
}

fn read_chunked(r: &mut impl BufRead) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        if r.read_line(&mut size).unwrap_or(0) == 0 {
            return body;
        }
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            return body;
        };
        let mut chunk = vec![0; n + 2];
        if r.read_exact(&mut chunk).is_err() {
            return body;
        }
        if n == 0 {
            return body;
        }
        body.extend_from_slice(&chunk[..n]);
    }
}

/// A complete response with `status`, extra `headers` and `body`.
pub fn respond(out: &mut dyn Write, status: u16, headers: &[(&str, &str)], body: &[u8]) {
    let mut text = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", body.len());
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str("\r\n");
    let _ = out.write_all(text.as_bytes());
    let _ = out.write_all(body);
}

/// A handler answering 200 with `body`.
pub fn ok_with(body: &'static str) -> impl Fn(&Seen, &mut dyn Write) + Send + Sync + 'static {
    move |_, out| respond(out, 200, &[], body.as_bytes())
}
