//! `--server-metrics-every`: each endpoint scraped on a fixed period while the run goes on, in
//! a task of its own per endpoint, so that neither the send loop nor another endpoint ever
//! waits for a slow one. A scrape still going when the next is due lets that one pass: the
//! period keeps its phase (scrapes at `every`, `2·every`, … from the start of the loop) and
//! each tick let pass is counted in [`Skipped`], told in one warning at the end of the run.

use super::Scraper;
use crate::http::HttpClient;
use crate::stop::Stop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokenpipe_format::{Record, ScrapePhase};
use tokio::time::{Instant, MissedTickBehavior};

/// The scrapes during the run let pass because the one before was still going.
#[derive(Debug, Default)]
pub struct Skipped(AtomicU64);

impl Skipped {
    /// How many were let pass.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// The end-of-run warning, if any scrape was let pass.
    pub fn warning(&self, every: Duration) -> Option<String> {
        let n = self.count();
        (n > 0).then(|| {
            format!(
                "--server-metrics-every {} s: {n} scrape{} skipped (the one before was still going)",
                every.as_secs_f64(),
                if n == 1 { "" } else { "s" }
            )
        })
    }
}

/// Scrapes `scraper` every `every` until dropped, handing each record to `write`, stamped by
/// `now_ns`; counts the ticks let pass in `skipped`.
pub async fn scrape_every(
    scraper: &Scraper,
    client: &HttpClient,
    every: Duration,
    stop: &Stop,
    now_ns: impl Fn() -> u64,
    write: impl Fn(&Record),
    skipped: &Skipped,
) {
    let mut ticks = tokio::time::interval_at(Instant::now() + every, every);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        ticks.tick().await;
        let scrape = scraper.scrape(client, ScrapePhase::During, &now_ns, stop);
        tokio::pin!(scrape);
        // Each tick that comes while the scrape is still going is let pass, and counted at
        // once (so a scrape that never ends counts too).
        let record = loop {
            tokio::select! {
                record = &mut scrape => break record,
                _ = ticks.tick() => {
                    skipped.0.fetch_add(1, Ordering::Relaxed);
                }
            }
        };
        if let Some(record) = record {
            write(&record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_counts_the_skipped_scrapes() {
        let s = Skipped::default();
        assert_eq!(s.warning(Duration::from_secs(1)), None);
        s.0.fetch_add(3, Ordering::Relaxed);
        assert_eq!(
            s.warning(Duration::from_millis(100)).unwrap(),
            "--server-metrics-every 0.1 s: 3 scrapes skipped (the one before was still going)"
        );
    }
}
