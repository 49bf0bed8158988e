//! Identifiers every tool derives the same way: one hash, so ids made by different tools (a
//! schedule's id, a run's id, a request's `x-request-id`) are computed by one piece of code.

/// FNV-1a over `parts`, each followed by a zero byte so that `["ab", "c"]` and `["a", "bc"]`
/// differ. Not cryptographic: it names runs, it does not protect anything.
pub fn fnv1a<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(std::iter::once(&0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// A hash that differs between any two runs, even started in the same nanosecond on one host:
/// the wall clock, the monotonic clock and the process id.
pub fn unique_run_hash(monotonic_ns: u64) -> u64 {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let parts = [
        wall.to_le_bytes(),
        monotonic_ns.to_le_bytes(),
        u64::from(std::process::id()).to_le_bytes(),
    ];
    fnv1a(parts.iter().map(|p| &p[..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_separated() {
        assert_ne!(
            fnv1a([&b"ab"[..], &b"c"[..]]),
            fnv1a([&b"a"[..], &b"bc"[..]])
        );
        assert_eq!(fnv1a([&b"x"[..]]), fnv1a([&b"x"[..]]));
        assert_ne!(unique_run_hash(1), 0);
    }
}
