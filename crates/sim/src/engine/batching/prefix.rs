//! The prefix cache, as vLLM's automatic prefix caching: a prompt is cut into blocks of
//! [`BLOCK_TOKENS`] tokens, each named by a hash of its tokens and of every block before it, so
//! two prompts share a block hash only when they share everything up to its end. A sequence
//! whose first blocks are cached skips their prefill.
//!
//! The cache remembers the most recently used blocks, up to the KV capacity's worth, and
//! forgets the least recently used first. A hit saves the blocks' prefill and their KV: the
//! sequence holds KV only for what it computed itself, the shared blocks being the cache's, in
//! the free part of the capacity (vLLM's evictable blocks; the model does not count them
//! against the capacity, a simplification). The hashes
//! are computed once per request by the server ([`crate::prompt_blocks`]); here they are plain
//! numbers, so the cache is deterministic.

use std::collections::{BTreeMap, HashMap};

/// Tokens per cached block (vLLM's default block size).
pub const BLOCK_TOKENS: u64 = 16;

/// Block hashes, least recently used first.
#[derive(Debug, Clone, Default)]
pub struct PrefixCache {
    /// Most blocks kept.
    capacity: usize,
    /// Block hash → the tick it was last used at.
    used_at: HashMap<u64, u64>,
    /// Tick → block hash: the eviction order.
    by_tick: BTreeMap<u64, u64>,
    tick: u64,
}

impl PrefixCache {
    /// An empty cache that keeps at most `capacity_tokens` tokens' worth of blocks.
    pub fn new(capacity_tokens: u64) -> Self {
        Self {
            capacity: usize::try_from(capacity_tokens / BLOCK_TOKENS).unwrap_or(usize::MAX),
            ..Self::default()
        }
    }

    /// How many of `blocks`' leading blocks are cached; marks them used.
    pub fn hits(&mut self, blocks: &[u64]) -> u64 {
        let mut hits = 0;
        for &block in blocks {
            if !self.used_at.contains_key(&block) {
                break;
            }
            self.touch(block);
            hits += 1;
        }
        hits
    }

    /// Remembers `blocks` (computed by a finished prefill), forgetting the least recently used
    /// blocks beyond the capacity.
    pub fn insert(&mut self, blocks: &[u64]) {
        for &block in blocks {
            self.touch(block);
        }
        while self.used_at.len() > self.capacity {
            let Some((_, oldest)) = self.by_tick.pop_first() else {
                break;
            };
            self.used_at.remove(&oldest);
        }
    }

    fn touch(&mut self, block: u64) {
        self.tick += 1;
        if let Some(old) = self.used_at.insert(block, self.tick) {
            self.by_tick.remove(&old);
        }
        self.by_tick.insert(self.tick, block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_blocks_hit_and_the_least_recent_are_forgotten() {
        let mut cache = PrefixCache::new(3 * BLOCK_TOKENS);
        assert_eq!(cache.hits(&[1, 2, 3]), 0);
        cache.insert(&[1, 2, 3]);
        assert_eq!(cache.hits(&[1, 2, 9]), 2);
        // Only the leading run counts: a hole stops it.
        assert_eq!(cache.hits(&[9, 2, 3]), 0);
        // 3 was used least recently (1 and 2 were touched by the hits): it goes.
        cache.insert(&[4]);
        assert_eq!(cache.hits(&[1, 2, 3]), 2);
        assert_eq!(cache.hits(&[4]), 1);
        assert_eq!(PrefixCache::new(0).hits(&[1]), 0);
    }
}
