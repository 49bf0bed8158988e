//! Shards (`--shard I/N`): the I-th of N disjoint parts of one schedule, so that several `fire`
//! processes or hosts run one plan and their outputs merge back into one run.
//!
//! Every shard draws the whole schedule and writes its own part, so a shard's requests are
//! exactly the whole schedule's, with the same ids, offsets and prompts. Arrival `u` (a request,
//! or a session with all its turns) belongs to shard `u mod N`; in batch mode member `j` of every
//! batch belongs to shard `j mod N`, so each shard sends its part of every batch. Limits split
//! as evenly as they can: shard I of a concurrency C gets `⌊C/N⌋`, plus one when `I < C mod N`.

use std::str::FromStr;

/// Part `index` (from 0) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    /// Which part, from 0.
    pub index: u64,
    /// How many parts.
    pub count: u64,
}

/// A shard that is not `I/N` with `0 ≤ I < N`, or that would get no share of a limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// The text is not `I/N`.
    #[error("expected I/N (say 0/4), got `{0}`")]
    Syntax(String),
    /// `I` or `N` is not a whole number.
    #[error("{what} in `{text}` is not a whole number")]
    NotNumber {
        /// `I` or `N`.
        what: &'static str,
        /// The shard as given.
        text: String,
    },
    /// `N` is 0.
    #[error("N must be at least 1 in `{0}`")]
    NoParts(String),
    /// `I` is not below `N`.
    #[error("shard {index}/{count} does not exist: I counts from 0 and must be below N")]
    NoSuchShard {
        /// `I`.
        index: u64,
        /// `N`.
        count: u64,
    },
    /// The limit `flag` gives is smaller than the number of shards.
    #[error("{flag} {total} split over {count} shards leaves shard {index} with none; use at most {total} shards")]
    NoShare {
        /// The flag whose limit is split.
        flag: &'static str,
        /// Its value.
        total: u64,
        /// The number of shards.
        count: u64,
        /// The shard left without a share.
        index: u64,
    },
}

impl FromStr for ShardSpec {
    type Err = ShardError;

    /// `I/N` with `0 ≤ I < N`.
    fn from_str(s: &str) -> Result<Self, ShardError> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| ShardError::Syntax(s.to_owned()))?;
        let parse = |x: &str, what: &'static str| {
            x.trim().parse::<u64>().map_err(|_| ShardError::NotNumber {
                what,
                text: s.to_owned(),
            })
        };
        let (index, count) = (parse(i, "I")?, parse(n, "N")?);
        if count == 0 {
            return Err(ShardError::NoParts(s.to_owned()));
        }
        if index >= count {
            return Err(ShardError::NoSuchShard { index, count });
        }
        Ok(Self { index, count })
    }
}

impl ShardSpec {
    /// Whether arrival `unit` is this shard's (`batch`: the batch size in batch mode).
    pub fn holds(&self, unit: u64, batch: Option<u64>) -> bool {
        let member = match batch {
            Some(size) => unit % size.max(1),
            None => unit,
        };
        member % self.count == self.index
    }

    /// How many of the first `units` arrivals are this shard's.
    pub fn units_in(&self, units: u64, batch: Option<u64>) -> u64 {
        match batch {
            Some(size) => {
                let size = size.max(1);
                let (full, rest) = (units / size, units % size);
                full * self.count_below(size) + self.count_below(rest)
            }
            None => self.count_below(units),
        }
    }

    /// How many of `0..n` are `index` modulo `count`.
    fn count_below(&self, n: u64) -> u64 {
        n / self.count + u64::from(self.index < n % self.count)
    }

    /// This shard's part of a limit `total` (a concurrency); an error naming `flag` when the
    /// part would be 0.
    pub fn share(&self, total: u64, flag: &'static str) -> Result<u64, ShardError> {
        let part = self.count_below(total);
        if part == 0 {
            return Err(ShardError::NoShare {
                flag,
                total,
                count: self.count,
                index: self.index,
            });
        }
        Ok(part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(s: &str) -> ShardSpec {
        s.parse().unwrap()
    }

    #[test]
    fn parses_and_refuses_shards_that_do_not_exist() {
        assert_eq!(shard("1/4"), ShardSpec { index: 1, count: 4 });
        for bad in ["3/2", "2/2", "1/0", "x/2", "1", "-1/2"] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_shards_cover_every_arrival_once() {
        for batch in [None, Some(5)] {
            let parts: Vec<ShardSpec> = (0..3).map(|i| ShardSpec { index: i, count: 3 }).collect();
            for unit in 0..40 {
                let owners = parts.iter().filter(|s| s.holds(unit, batch)).count();
                assert_eq!(owners, 1, "unit {unit} batch {batch:?}");
            }
            for units in [0, 1, 7, 40] {
                let total: u64 = parts.iter().map(|s| s.units_in(units, batch)).sum();
                assert_eq!(total, units);
                for s in &parts {
                    let counted = (0..units).filter(|&u| s.holds(u, batch)).count() as u64;
                    assert_eq!(s.units_in(units, batch), counted, "{s:?} {units} {batch:?}");
                }
            }
        }
    }

    #[test]
    fn limits_split_evenly_and_never_to_zero() {
        let parts: Vec<u64> = (0..3)
            .map(|i| {
                ShardSpec { index: i, count: 3 }
                    .share(8, "--concurrency")
                    .unwrap()
            })
            .collect();
        assert_eq!(parts, [3, 3, 2]);
        let err = ShardSpec { index: 2, count: 3 }
            .share(2, "--concurrency")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--concurrency 2 split over 3 shards leaves shard 2 with none; use at most 2 shards"
        );
    }
}
