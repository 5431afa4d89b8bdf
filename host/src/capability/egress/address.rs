//! Host names and literal IP addresses, normalised; addresses classified.
//!
//! Invariant: every spelling of an IP address a URL parser or resolver
//! might accept — dotted decimal, a single decimal number (`2130706433`),
//! octal (`0177.0.0.1`), hex (`0x7f.1`), short forms (`127.1`), bracketed
//! IPv6, IPv4-mapped IPv6 — becomes one [`IpAddr`] before any check, and a
//! host that cannot be read unambiguously is refused, never guessed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A request's host after normalisation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A DNS name: lowercase ASCII, no trailing dot.
    Name(String),
    /// A literal address (IPv4-mapped IPv6 is stored as IPv4).
    Ip(IpAddr),
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V4(v4)) => write!(f, "{v4}"),
            Host::Ip(IpAddr::V6(v6)) => write!(f, "[{v6}]"),
        }
    }
}

/// Why a host was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("the host is empty")]
    Empty,
    #[error("IPv6 zone identifiers are not allowed")]
    ZoneId,
    #[error("`{0}` is not a valid IPv6 address")]
    BadIpv6(String),
    #[error("`{0}` looks like an IPv4 address but is not a valid one")]
    BadIpv4(String),
    #[error(
        "`{0}` is not a valid host name (ASCII letters, digits, `-` and `_`; use punycode for other names)"
    )]
    BadName(String),
}

/// Normalise the host part of a URL authority (brackets allowed for IPv6).
pub fn parse_host(raw: &str) -> Result<Host, HostError> {
    if raw.is_empty() {
        return Err(HostError::Empty);
    }
    if let Some(inner) = raw.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| HostError::BadIpv6(raw.to_string()))?;
        if inner.contains('%') {
            return Err(HostError::ZoneId);
        }
        let v6: Ipv6Addr = inner
            .parse()
            .map_err(|_| HostError::BadIpv6(raw.to_string()))?;
        return Ok(Host::Ip(canonical_ip(IpAddr::V6(v6))));
    }
    let lower = raw.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if name.is_empty() {
        return Err(HostError::Empty);
    }
    if ends_in_number(name) {
        return parse_ipv4(name)
            .map(|v4| Host::Ip(IpAddr::V4(v4)))
            .ok_or_else(|| HostError::BadIpv4(raw.to_string()));
    }
    let labels_ok = name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !labels_ok {
        return Err(HostError::BadName(raw.to_string()));
    }
    Ok(Host::Name(name.to_string()))
}

/// IPv4-mapped IPv6 (`::ffff:a.b.c.d`) as the IPv4 address it is.
pub fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// WHATWG URL: a host whose last label is a number is an IPv4 address.
fn ends_in_number(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    match last.strip_prefix("0x") {
        Some(hex) => hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => false,
    }
}

/// WHATWG IPv4 parsing: one to four parts, each decimal, octal (leading
/// `0`) or hex (`0x`); the last part fills the remaining bytes.
fn parse_ipv4(name: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut numbers = Vec::with_capacity(parts.len());
    for part in &parts {
        numbers.push(parse_ipv4_number(part)?);
    }
    let (last, init) = numbers.split_last()?;
    if init.iter().any(|n| *n > 255) {
        return None;
    }
    let last_bits = 8 * (5 - numbers.len() as u32);
    if last_bits < 64 && *last >= 1u64 << last_bits {
        return None;
    }
    let mut value = *last;
    for (i, n) in init.iter().enumerate() {
        value += n << (8 * (3 - i as u32));
    }
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

fn parse_ipv4_number(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(hex) = part.strip_prefix("0x") {
        (hex, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    // A bare `0x` (zero to WHATWG) is refused: nothing is guessed.
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// What kind of address an IP is, for the egress check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AddressClass {
    /// Globally routable: allowed whenever the name is.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918, unique-local `fc00::/7`, site-local `fec0::/10`.
    Private,
    /// `169.254.0.0/16` (cloud metadata lives here), `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT, `100.64.0.0/10`.
    SharedNat,
    /// Documentation and benchmarking ranges.
    Documentation,
    /// Reserved, deprecated or special-purpose ranges (including tunnels
    /// such as Teredo, and IPv4-compatible IPv6).
    Reserved,
    /// `0.0.0.0/8`, `::`: never allowed.
    Unspecified,
    /// Multicast: never allowed.
    Multicast,
    /// `255.255.255.255`: never allowed.
    Broadcast,
}

impl AddressClass {
    /// Whether no rule can ever allow it.
    pub fn never_allowed(self) -> bool {
        matches!(
            self,
            AddressClass::Unspecified | AddressClass::Multicast | AddressClass::Broadcast
        )
    }

    /// Words for messages: "a loopback address".
    pub fn describe(self) -> &'static str {
        match self {
            AddressClass::Public => "a public address",
            AddressClass::Loopback => "a loopback address",
            AddressClass::Private => "a private address",
            AddressClass::LinkLocal => "a link-local address",
            AddressClass::SharedNat => "a shared (carrier-grade NAT) address",
            AddressClass::Documentation => "a documentation or benchmarking address",
            AddressClass::Reserved => "a reserved address",
            AddressClass::Unspecified => "an unspecified address",
            AddressClass::Multicast => "a multicast address",
            AddressClass::Broadcast => "the broadcast address",
        }
    }
}

/// Classify `ip`; IPv6 forms that embed an IPv4 address (mapped, NAT64,
/// 6to4) are judged by the embedded address.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) => AddressClass::Unspecified,
        (10, _, _) => AddressClass::Private,
        (100, 64..=127, _) => AddressClass::SharedNat,
        (127, _, _) => AddressClass::Loopback,
        (169, 254, _) => AddressClass::LinkLocal,
        (172, 16..=31, _) => AddressClass::Private,
        (192, 0, 0) => AddressClass::Reserved,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressClass::Documentation,
        (192, 88, 99) => AddressClass::Reserved,
        (192, 168, _) => AddressClass::Private,
        (198, 18..=19, _) => AddressClass::Documentation,
        (224..=239, _, _) => AddressClass::Multicast,
        _ if ip == Ipv4Addr::BROADCAST => AddressClass::Broadcast,
        (240..=255, _, _) => AddressClass::Reserved,
        _ => AddressClass::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0, 0, 0] => AddressClass::Unspecified,
        [0, 0, 0, 0, 0, 0, 0, 1] => AddressClass::Loopback,
        // IPv4-compatible (deprecated): never a real destination.
        [0, 0, 0, 0, 0, 0, _, _] => AddressClass::Reserved,
        // NAT64 well-known prefix: the IPv4 address it stands for decides.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => match classify_v4(embedded(hi, lo)) {
            AddressClass::Public => AddressClass::Public,
            AddressClass::Unspecified | AddressClass::Broadcast => AddressClass::Reserved,
            other => other,
        },
        // 6to4: the embedded IPv4 address decides.
        [0x2002, hi, lo, ..] => match classify_v4(embedded(hi, lo)) {
            AddressClass::Public => AddressClass::Public,
            AddressClass::Unspecified | AddressClass::Broadcast => AddressClass::Reserved,
            other => other,
        },
        [0x2001, 0xdb8, ..] => AddressClass::Documentation,
        [0x2001, 0x2, 0, ..] => AddressClass::Documentation,
        // Teredo, ORCHID and other IETF special-purpose blocks.
        [0x2001, 0, ..] | [0x2001, 0x10..=0x2f, ..] | [0x2001, 0x1..=0x1ff, ..] => {
            AddressClass::Reserved
        }
        [x, ..] if x & 0xfff0 == 0x3ff0 => AddressClass::Documentation,
        [x, ..] if x & 0xfe00 == 0xfc00 => AddressClass::Private,
        [x, ..] if x & 0xffc0 == 0xfe80 => AddressClass::LinkLocal,
        [x, ..] if x & 0xffc0 == 0xfec0 => AddressClass::Private,
        [x, ..] if x & 0xff00 == 0xff00 => AddressClass::Multicast,
        // Only 2000::/3 is allocated for global unicast.
        [x, ..] if x & 0xe000 == 0x2000 => AddressClass::Public,
        _ => AddressClass::Reserved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(host: &str) -> IpAddr {
        match parse_host(host).unwrap() {
            Host::Ip(ip) => ip,
            Host::Name(n) => panic!("{host} parsed as name {n}"),
        }
    }

    #[test]
    fn every_spelling_of_loopback_is_one_address() {
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        for spelling in [
            "127.0.0.1",
            "2130706433",
            "0177.0.0.1",
            "0x7f.1",
            "0x7f000001",
            "127.1",
            "127.0.1",
            "0177.1",
            "127.0.0.1.",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "0X7F.0.0.1",
        ] {
            assert_eq!(ip(spelling), lo, "{spelling}");
        }
        assert_eq!(ip("[::1]"), "::1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn ambiguous_hosts_are_refused() {
        for bad in [
            "256.0.0.1",
            "1.2.3.4.5",
            "0x100000000",
            "09.0.0.1",
            "1.2.3.0x",
            "99999999999999999999999",
            "[::1%25eth0]",
            "[::1%eth0]",
            "[::zz]",
            "a..b",
            "exa mple.com",
            "ex%61mple.com",
            "bücher.de",
            "",
            ".",
        ] {
            assert!(parse_host(bad).is_err(), "{bad:?} was accepted");
        }
        assert_eq!(
            parse_host("1.2.3.0x").unwrap_err(),
            HostError::BadIpv4("1.2.3.0x".into())
        );
        assert_eq!(
            parse_host("[fe80::1%25en0]").unwrap_err(),
            HostError::ZoneId
        );
    }

    #[test]
    fn names_are_lowercased_without_trailing_dot() {
        assert_eq!(
            parse_host("API.Example.COM.").unwrap(),
            Host::Name("api.example.com".into())
        );
        assert_eq!(
            parse_host("1.example").unwrap(),
            Host::Name("1.example".into())
        );
    }

    #[test]
    fn addresses_are_classified() {
        let cases = [
            ("127.0.0.1", AddressClass::Loopback),
            ("10.0.0.1", AddressClass::Private),
            ("172.31.255.255", AddressClass::Private),
            ("192.168.1.1", AddressClass::Private),
            ("169.254.169.254", AddressClass::LinkLocal),
            ("100.64.0.1", AddressClass::SharedNat),
            ("0.0.0.0", AddressClass::Unspecified),
            ("224.0.0.1", AddressClass::Multicast),
            ("255.255.255.255", AddressClass::Broadcast),
            ("240.0.0.1", AddressClass::Reserved),
            ("192.0.2.1", AddressClass::Documentation),
            ("198.18.0.1", AddressClass::Documentation),
            ("93.184.216.34", AddressClass::Public),
            ("172.32.0.1", AddressClass::Public),
            ("::1", AddressClass::Loopback),
            ("::", AddressClass::Unspecified),
            ("::ffff:10.0.0.1", AddressClass::Private),
            ("::127.0.0.1", AddressClass::Reserved),
            ("::8.8.8.8", AddressClass::Reserved),
            ("64:ff9b::10.0.0.1", AddressClass::Private),
            ("64:ff9b::8.8.8.8", AddressClass::Public),
            ("2002:7f00:1::", AddressClass::Loopback),
            ("2002:0808:0808::1", AddressClass::Public),
            ("2001::1", AddressClass::Reserved),
            ("2001:db8::1", AddressClass::Documentation),
            ("fd00::1", AddressClass::Private),
            ("fc00::1", AddressClass::Private),
            ("fe80::1", AddressClass::LinkLocal),
            ("fec0::1", AddressClass::Private),
            ("ff02::1", AddressClass::Multicast),
            ("2606:4700:4700::1111", AddressClass::Public),
            ("4000::1", AddressClass::Reserved),
        ];
        for (addr, class) in cases {
            assert_eq!(classify(addr.parse().unwrap()), class, "{addr}");
        }
    }
}
