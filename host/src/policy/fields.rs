//! Checks on the numbers a policy file gives, shared by its tables.

use serde::{Deserialize, Deserializer, de::Error as _};

/// A count or size that must be at least 1 (leave it out for the default).
pub(super) fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = u64::deserialize(d)?;
    if v == 0 {
        return Err(D::Error::custom(
            "must be at least 1; leave it out for the default",
        ));
    }
    Ok(Some(v))
}
