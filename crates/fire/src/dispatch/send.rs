//! The send loop, in the network runtime: starts a task per released request and keeps the
//! in-flight limit as slots. A request from the queue takes a free slot (closed loop, or a
//! capped open loop) or none is needed (uncapped); a later turn of a closed-loop session comes
//! on the priority channel with its session's slot. A slot frees when its request ends, unless
//! the request succeeded and its session goes on. A request released "when free" starts here
//! the moment a slot frees: its `scheduled_ns` is that instant (or the instant a fill opened the
//! slot), and the delay to its `sent_ns` is the client's own.
//!
//! The send loop also watches the stop signal for every request: when the run stops it aborts
//! the request tasks, each of which then writes its `cancelled` (or `not_sent`) `done` as it is
//! dropped (see `exchange::Request`). A request task therefore polls only its own stream.

use super::feed::Event;
use super::Dispatch;
use crate::exchange::{self, not_sent, Ctx};
use crate::job::{Ended, Flow, Job};
use crate::live::LAG_LIMIT_NS;
use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;

/// What the send loop listens to, and where it reports ends.
pub struct Inbox {
    /// Requests that need a slot (or, uncapped, none), in release order.
    pub queue: UnboundedReceiver<Job>,
    /// Limits, slot openings, and later turns that hold their slot: never wait behind the queue.
    pub priority: UnboundedReceiver<Dispatch>,
    /// The dispatcher's inbox, for the ends it waits on.
    pub ends: Sender<Event>,
}

/// Runs until the dispatcher has released everything and every request has ended.
pub async fn send_loop(ctx: &Arc<Ctx>, mut inbox: Inbox) {
    let mut tasks: tokio::task::JoinSet<(Ended, Flow)> = tokio::task::JoinSet::new();
    let mut slots = usize::MAX;
    let mut busy = 0usize;
    // Only a closed loop schedules requests at the instants slots free; a capped open loop
    // keeps its own offsets and needs no record of them.
    let mut track_freed = false;
    let mut freed_at: VecDeque<u64> = VecDeque::new();
    // Under an open loop's cap: when a slot last freed, and whether the cap is on.
    let mut capped = false;
    let mut last_freed_ns = 0u64;
    let mut waves = Waves::default();
    let mut deadline = None;
    let (mut queue_open, mut priority_open) = (true, true);
    let stop = ctx.stop.clone();
    let mut stopped = std::pin::pin!(stop.stopped());
    let mut aborted = false;
    while queue_open || priority_open {
        tokio::select! {
            biased;
            () = &mut stopped, if !aborted => {
                aborted = true;
                tasks.abort_all();
            }
            ended = tasks.join_next(), if !tasks.is_empty() => {
                let Some(Ok((end, flow))) = ended else {
                    // An aborted request (the run stopped): its slot is free, and nobody waits
                    // for its end.
                    busy = busy.saturating_sub(1);
                    continue;
                };
                // The slot stays with the session for its next turn only while the dispatcher
                // can still send that turn.
                if !(flow.continues && end.ok && priority_open) {
                    busy = busy.saturating_sub(1);
                    last_freed_ns = last_freed_ns.max(end.at_ns);
                    if track_freed {
                        freed_at.push_back(end.at_ns);
                    }
                }
                if flow.report_end {
                    // The dispatcher may have finished; then nobody waits for this end.
                    let _ = inbox.ends.send(Event::Ended(end));
                }
            }
            msg = inbox.priority.recv(), if priority_open => match msg {
                None => {
                    // The dispatcher is gone (the schedule is done, or the duration passed): no
                    // session's next turn will come, so the slots sessions held are free.
                    priority_open = false;
                    busy = tasks.len();
                }
                Some(Dispatch::Limit(n)) => {
                    slots = usize::try_from(n).unwrap_or(usize::MAX);
                    track_freed = true;
                    waves.first_left = n;
                }
                Some(Dispatch::Cap(n)) => {
                    slots = usize::try_from(n).unwrap_or(usize::MAX).max(1);
                    capped = true;
                }
                Some(Dispatch::OpenSlot(at_ns)) => {
                    slots = slots.saturating_add(1);
                    freed_at.push_back(at_ns);
                }
                Some(Dispatch::Free) => {
                    busy = busy.saturating_sub(1);
                    let now = ctx.clock.now_ns();
                    last_freed_ns = last_freed_ns.max(now);
                    if track_freed {
                        freed_at.push_back(now);
                    }
                }
                Some(Dispatch::Deadline(at_ns)) => deadline = Some(at_ns),
                Some(Dispatch::Job(job)) => {
                    // A later turn that holds its session's slot: when it does not start (the
                    // run stopped, or the duration passed) the slot it held frees.
                    let holds = job.flow.has_slot;
                    if !start(ctx, &mut tasks, job, deadline) && holds {
                        busy = busy.saturating_sub(1);
                    }
                }
            },
            job = inbox.queue.recv(), if queue_open && busy < slots => match job {
                None => queue_open = false,
                Some(mut job) => {
                    if job.scheduled_ns.is_none() {
                        let (scheduled, ready) = waves.take(freed_at.pop_front(), ctx.clock.now_ns());
                        job.scheduled_ns = Some(scheduled);
                        job.ready_ns = ready;
                    }
                    if capped {
                        // A request due while the cap was reached could leave no earlier than
                        // the slot that freed for it.
                        job.ready_ns = job.scheduled_ns.map(|s| s.max(last_freed_ns)).filter(|r| Some(*r) != job.scheduled_ns);
                    }
                    if start(ctx, &mut tasks, job, deadline) {
                        busy += 1;
                    }
                }
            },
            // Nothing can come any more (no task runs, no slot is free, no control message
            // can arrive): the run is over.
            else => break,
        }
    }
    // Everything was sent: wait for the requests in flight, still ending them as `cancelled`
    // when the run stops meanwhile (Ctrl-C after an open loop's last send).
    loop {
        tokio::select! {
            biased;
            () = &mut stopped, if !aborted => {
                aborted = true;
                tasks.abort_all();
            }
            ended = tasks.join_next() => if ended.is_none() { break },
        }
    }
}

/// Which of a closed loop's requests are due together, so that the self-check judges them as a
/// wave by how long sending them took: its slots open together (without a fill), and the
/// requests that first take them are one wave, due at the instant the first of them was taken.
/// Later, slots that free within [`LAG_LIMIT_NS`] of each other (a server that ends a batch of
/// streams together) are refilled one after another just as a first wave is, and form a wave
/// due at the instant the first of them freed. Their `scheduled_ns` stay the instants each slot
/// freed (or was taken); only the instant the self-check judges them from (`ready_ns`) is the
/// wave's. A client short of CPU, which falls behind on every refill, is caught by its threads'
/// wait for a CPU (docs/fire/self-check.md), not by these lags.
#[derive(Default)]
struct Waves {
    /// Requests of the first wave still to be taken: the limit's slots, once it is set.
    first_left: u64,
    /// When the first request of the first wave was taken.
    first_at: Option<u64>,
    /// When the first slot of the latest cluster of freed slots freed.
    cluster_at: Option<u64>,
}

impl Waves {
    /// A request taken at `now` for a slot that freed at `freed` (`None`: a slot never used):
    /// its `scheduled_ns`, and the instant the self-check judges it from when that differs.
    fn take(&mut self, freed: Option<u64>, now: u64) -> (u64, Option<u64>) {
        let ready = match freed {
            None if self.first_left > 0 => {
                self.first_left -= 1;
                Some(*self.first_at.get_or_insert(now))
            }
            None => None,
            Some(at) => match self.cluster_at {
                Some(first) if at >= first && at - first <= LAG_LIMIT_NS => {
                    (first != at).then_some(first)
                }
                _ => {
                    self.cluster_at = Some(at);
                    None
                }
            },
        };
        (freed.unwrap_or(now), ready)
    }
}

/// Starts `job` unless the run stopped (then it ends `not_sent`) or its deadline passed (then
/// it was never reached and leaves no record); true when it started.
fn start(
    ctx: &Arc<Ctx>,
    tasks: &mut tokio::task::JoinSet<(Ended, Flow)>,
    mut job: Job,
    deadline: Option<u64>,
) -> bool {
    drop(job.credit.take());
    if ctx.stop.is_stopped() {
        not_sent(ctx, job.id, job.echo);
        return false;
    }
    if deadline.is_some_and(|d| ctx.clock.now_ns() >= d) {
        return false;
    }
    let flow = job.flow;
    let request = exchange::Request::new(ctx.clone(), job);
    tasks.spawn(request.run(flow));
    true
}

#[cfg(test)]
mod tests {
    use super::Waves;
    use crate::live::LAG_LIMIT_NS;

    #[test]
    fn a_closed_loops_first_wave_is_due_together_and_the_rest_alone() {
        let mut w = Waves {
            first_left: 3,
            ..Waves::default()
        };
        // Three slots open together: taken at 10, 20 and 35, all due at 10.
        assert_eq!(w.take(None, 10), (10, Some(10)));
        assert_eq!(w.take(None, 20), (20, Some(10)));
        assert_eq!(w.take(None, 35), (35, Some(10)));
        // Slots freed at 100, 103 and 104 (within the limit of each other), taken at 105, 120
        // and 130: one wave, due when the first of them freed.
        assert_eq!(w.take(Some(100), 105), (100, None));
        assert_eq!(w.take(Some(103), 120), (103, Some(100)));
        assert_eq!(w.take(Some(104), 130), (104, Some(100)));
        // A slot that frees more than the limit later starts a cluster of its own.
        let later = 100 + LAG_LIMIT_NS + 1;
        assert_eq!(w.take(Some(later), later + 5), (later, None));
        assert_eq!(w.take(Some(later + 7), later + 9), (later + 7, Some(later)));
        // A slot with no instant after the first wave (a session's slot given back) is due
        // when taken.
        assert_eq!(w.take(None, 300), (300, None));
    }
}
