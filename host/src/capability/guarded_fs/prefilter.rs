//! `prefilter`'s read: the guarded [`read`](super::read), then a native
//! search for a few literals, so that a file holding none of them is not
//! copied into the guest.
//!
//! Invariant: it reads exactly what `read` reads on the same descriptor,
//! with the same checks and errors, and tells the guest no more than those
//! bytes would: whether a needle occurs in them, their length and whether
//! a NUL is among the first few. It never opens or names a file.

use aho_corasick::AhoCorasick;
use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::FsResult;

use super::GuardedFs;

/// The most needles one set holds.
pub const MAX_NEEDLES: usize = 64;
/// The longest needle, in bytes.
pub const MAX_NEEDLE_LEN: usize = 256;

/// Why a set of needles was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("a prefilter takes 1 to {MAX_NEEDLES} needles, none empty or over {MAX_NEEDLE_LEN} bytes")]
pub struct BadNeedles;

/// A checked set of needles and the search for them.
pub struct Needles {
    set: Vec<Vec<u8>>,
    finder: AhoCorasick,
}

impl Needles {
    /// Check `set` and build its search.
    pub fn new(set: Vec<Vec<u8>>) -> Result<Needles, BadNeedles> {
        let fits = |n: &Vec<u8>| !n.is_empty() && n.len() <= MAX_NEEDLE_LEN;
        if set.is_empty() || set.len() > MAX_NEEDLES || !set.iter().all(fits) {
            return Err(BadNeedles);
        }
        let finder = AhoCorasick::new(&set).map_err(|_| BadNeedles)?;
        Ok(Needles { set, finder })
    }

    /// Whether this is the search for exactly `set`.
    pub fn is_for(&self, set: &[Vec<u8>]) -> bool {
        self.set == set
    }
}

/// What a prefiltered read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Filtered {
    /// The bytes `read` returns, holding a needle, and whether the file
    /// ended there.
    Bytes(Vec<u8>, bool),
    /// The bytes read hold no needle.
    Absent {
        /// Bytes read.
        size: u64,
        /// The read reached the end of the file.
        end: bool,
        /// A NUL among the first `sniff` bytes.
        nul_in_head: bool,
    },
}

impl GuardedFs<'_> {
    /// `read` of `len` bytes at `offset`, handed over only when it holds
    /// one of `needles`.
    pub fn read_if_contains(
        &mut self,
        fd: &Resource<Descriptor>,
        len: u64,
        offset: u64,
        needles: &Needles,
        sniff: u32,
    ) -> FsResult<Filtered> {
        let (bytes, end) = self.read_whole(fd, len, offset)?;
        if needles.finder.is_match(&bytes) {
            return Ok(Filtered::Bytes(bytes, end));
        }
        let head = &bytes[..bytes.len().min(sniff as usize)];
        Ok(Filtered::Absent {
            size: bytes.len() as u64,
            end,
            nul_in_head: memchr::memchr(0, head).is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_needle_sets_out_of_bounds() {
        assert_eq!(Needles::new(Vec::new()).err(), Some(BadNeedles));
        assert_eq!(Needles::new(vec![Vec::new()]).err(), Some(BadNeedles));
        let long = vec![b'a'; MAX_NEEDLE_LEN + 1];
        assert_eq!(Needles::new(vec![long]).err(), Some(BadNeedles));
        let many = vec![b"ab".to_vec(); MAX_NEEDLES + 1];
        assert_eq!(Needles::new(many).err(), Some(BadNeedles));
        let most = vec![vec![b'z'; MAX_NEEDLE_LEN]; MAX_NEEDLES];
        assert!(Needles::new(most).is_ok());
    }
}
