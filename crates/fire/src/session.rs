//! Multi-turn sessions: what `fire` keeps of a conversation between its turns.
//!
//! A session starts with a request that has a `session` and `turns` > 1; each later turn (a
//! request with `think_time_ns`) is sent `think_time_ns` after the turn before it ended, with
//! the conversation so far as its history: every earlier prompt as sent (the first one salted)
//! and the answer actually received. The history lives only while the session does: it is
//! dropped when the last turn is sent, or when a turn fails. A failed turn ends its session:
//! its later turns are not sent, and each ends in a `not_sent` done that names the failed turn.

use crate::api::PastTurn;
use crate::job::Line;
use std::collections::{HashMap, VecDeque};

/// One conversation in progress.
pub struct Session {
    /// Turns in all (`turns`).
    pub turns: u32,
    /// The turn index the schedule should give next.
    pub next_turn: u32,
    /// Earlier turns, oldest first.
    pub history: Vec<PastTurn>,
    /// The prompt of the turn in flight, which joins the history when it ends well.
    pub sent_prompt: Option<String>,
    /// When the last turn ended, while its successor has not been read yet.
    pub ended_at: Option<u64>,
    /// Later turns read and waiting for the turn before them to end.
    pub parked: VecDeque<Line>,
}

/// A session whose turn failed, while some of its turns are still to be read.
pub struct Failed {
    /// Turns in all.
    pub turns: u32,
    /// Why its remaining turns are not sent.
    pub reason: String,
}

/// Every session in progress, by name, and which request is the turn each waits on.
#[derive(Default)]
pub struct Sessions {
    /// Sessions in progress.
    pub live: HashMap<String, Session>,
    /// Failed sessions with turns still to be read.
    pub failed: HashMap<String, Failed>,
    /// Session of each request whose end a session waits for.
    pub waiting_on: HashMap<u64, String>,
}

impl Sessions {
    /// Whether no session needs anything more.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}
