//! `--gpus N`: a modelled GPU power draw and energy counter on `/metrics`, in the names and
//! label shape of NVIDIA's DCGM exporter, so that `fire --scrape` and reduce's energy figures
//! can be tried end to end without a GPU. **A simulation**: no GPU is read; the numbers follow
//! the model below, nothing else.
//!
//! The model: each of the N GPUs draws [`IDLE_W`] plus [`W_PER_REQUEST`] for every request in
//! flight (admitted, not yet ended), shared evenly among the GPUs:
//! `P = IDLE_W + W_PER_REQUEST × in_flight / N` watts per GPU. The energy counter is the exact
//! integral of that power since simserve started, in mJ, so a reader that integrates the
//! power gauge and one that takes the counter's change agree. The utilisation is 100 % while any
//! request is in flight and 0 otherwise, as a GPU running one decode after another reports.
//!
//! Series, one per GPU, as dcgm-exporter writes them (`etc/default-counters.csv`):
//! `DCGM_FI_DEV_POWER_USAGE` (gauge, W), `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (counter, mJ),
//! `DCGM_FI_DEV_GPU_UTIL` (gauge, %), each labelled `gpu`, `UUID`, `pci_bus_id`, `device`,
//! `modelName` and `Hostname`.

use std::fmt::Write as _;
use std::sync::Mutex;

/// Watts each modelled GPU draws with nothing in flight.
pub const IDLE_W: f64 = 100.0;
/// Watts each request in flight adds, spread over the GPUs.
pub const W_PER_REQUEST: f64 = 25.0;

/// The most GPUs `--gpus` models (a large node has 8; a rack-scale one 72).
pub const MAX_GPUS: u32 = 1024;

/// The requests in flight and the time integral of their number, kept exact under one lock
/// (twice per request), so that the energy counter never goes down between two scrapes.
#[derive(Debug, Default)]
pub struct Occupancy {
    state: Mutex<OccupancyState>,
}

#[derive(Debug, Default, Clone, Copy)]
struct OccupancyState {
    /// Requests in flight now.
    count: u64,
    /// The sum of their start instants (ns).
    start_sum_ns: u128,
    /// The summed durations of the requests that ended (ns).
    done_ns: u128,
}

impl Occupancy {
    fn lock(&self) -> std::sync::MutexGuard<'_, OccupancyState> {
        // Plain numbers, consistent after any panic.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request came in flight at `at_ns`.
    pub fn start(&self, at_ns: u64) {
        let mut s = self.lock();
        s.count += 1;
        s.start_sum_ns += u128::from(at_ns);
    }

    /// The request that came in flight at `start_ns` ended at `end_ns`.
    pub fn end(&self, start_ns: u64, end_ns: u64) {
        let mut s = self.lock();
        s.count = s.count.saturating_sub(1);
        s.start_sum_ns = s.start_sum_ns.saturating_sub(u128::from(start_ns));
        s.done_ns += u128::from(end_ns.saturating_sub(start_ns));
    }

    /// Requests in flight and the request-nanoseconds spent in flight up to `now_ns`.
    fn read(&self, now_ns: u64) -> (u64, u128) {
        let s = *self.lock();
        let running = (u128::from(s.count) * u128::from(now_ns)).saturating_sub(s.start_sum_ns);
        (s.count, s.done_ns + running)
    }
}

/// N modelled GPUs, reading the server's [`Occupancy`].
#[derive(Debug)]
pub struct Gpus {
    n: u32,
    /// When simserve started (ns on its clock): the energy counters start there.
    start_ns: u64,
}

impl Gpus {
    /// `n` GPUs whose counters start at `start_ns`.
    pub fn new(n: u32, start_ns: u64) -> Self {
        Self { n, start_ns }
    }

    /// Appends the three DCGM families for every GPU at `now_ns` to `out`.
    pub fn render(&self, occupancy: &Occupancy, now_ns: u64, out: &mut String) {
        let (in_flight, busy_ns) = occupancy.read(now_ns);
        let n = f64::from(self.n.max(1));
        let power = IDLE_W + W_PER_REQUEST * in_flight as f64 / n;
        let elapsed_s = now_ns.saturating_sub(self.start_ns) as f64 / 1e9;
        let energy_mj = (IDLE_W * elapsed_s + W_PER_REQUEST * busy_ns as f64 / 1e9 / n) * 1e3;
        let util = if in_flight > 0 { 100.0 } else { 0.0 };
        let families = [
            (
                "DCGM_FI_DEV_GPU_UTIL",
                "gauge",
                "GPU utilization (in %).",
                util,
            ),
            (
                "DCGM_FI_DEV_POWER_USAGE",
                "gauge",
                "Power draw (in W).",
                power,
            ),
            (
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                "counter",
                "Total energy consumption since boot (in mJ).",
                energy_mj.floor(),
            ),
        ];
        for (name, kind, help, value) in families {
            let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n");
            for gpu in 0..self.n {
                let _ = writeln!(
                    out,
                    "{name}{{gpu=\"{gpu}\",UUID=\"GPU-00000000-0000-4000-8000-{gpu:012x}\",\
                     pci_bus_id=\"00000000:{bus:02X}:00.0\",device=\"nvidia{gpu}\",\
                     modelName=\"simserve simulated GPU\",Hostname=\"simserve\"}} {value:?}",
                    bus = gpu + 1
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::{parse_exposition, sum_series};

    const S: u64 = 1_000_000_000;

    #[test]
    fn idle_and_loaded_power_and_its_exact_integral() {
        let occupancy = Occupancy::default();
        let gpus = Gpus::new(2, 10 * S);
        let read = |now: u64| {
            let mut out = String::new();
            gpus.render(&occupancy, now, &mut out);
            parse_exposition(&out, "DCGM_")
        };
        let idle = read(12 * S);
        assert_eq!(idle.len(), 6, "{idle:?}");
        let total = |s: &std::collections::BTreeMap<String, f64>, name: &str| {
            sum_series(s, name, |_| true).unwrap()
        };
        assert_eq!(total(&idle, "DCGM_FI_DEV_POWER_USAGE"), 200.0);
        // 2 s at 100 W on each of two GPUs.
        assert_eq!(
            total(&idle, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
            400_000.0
        );
        assert_eq!(total(&idle, "DCGM_FI_DEV_GPU_UTIL"), 0.0);
        // Two requests from 12 s, one ends at 14 s: 4 request-seconds at 25 W, over 2 GPUs.
        occupancy.start(12 * S);
        occupancy.start(12 * S);
        let busy = read(13 * S);
        assert_eq!(total(&busy, "DCGM_FI_DEV_POWER_USAGE"), 250.0);
        assert_eq!(total(&busy, "DCGM_FI_DEV_GPU_UTIL"), 200.0);
        occupancy.end(12 * S, 14 * S);
        let after = read(16 * S);
        // 6 s idle on 2 GPUs (1.2 kJ) plus (2 + 4) request-seconds at 25 W (150 J).
        assert_eq!(
            total(&after, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
            1_350_000.0
        );
        assert!(after
            .keys()
            .next()
            .unwrap()
            .contains("gpu=\"0\",UUID=\"GPU-"));
    }
}
