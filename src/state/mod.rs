//! Applying decoded events to per-user state.
//!
//! A [`StateBatch`] collects the effects of a run of events (created memories,
//! accesses, consolidation requests) on top of what the store holds, then
//! commits them in one atomic write together with each user's applied-offset
//! watermark. Replays are harmless: an event at or below its user's watermark
//! for its stream is skipped, and memories are upserted by id.

mod key;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::{Deref, DerefMut};

use hashbrown::hash_map::EntryRef;

use crate::cycle::CycleSettings;
use crate::embed::usable_embedding;
use crate::event::Limits;
use crate::event::{
    ConsolidationRequested, Event, EventType, MemoryAccessed, MemoryCreated, MemoryDeleted,
    MemoryRevised, MemoryUpdated, RevisedText, RevisionCause, TriggerReason, UserErased,
    UserErasureCompleted,
};
use crate::index::{Neighbour, UserIndexes, VectorIndex};
use crate::model::{Admission, Memory, MemoryStatus, Millis, ParkedRead, PendingRun, UserState};
use crate::plan::tokens;
use crate::revise::{self, Rebuilt};
use crate::salience::SalienceState;
use crate::store::{Store, StoreError, Write, WriteBatch};
use crate::text::{content_hash, normalise_tags};
use crate::trigger::{self, automatic_run, requested_run};
pub use key::MemoryKey;
use key::{Hashed, by};

/// Where an event came from: its stream and position in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position<'a> {
    /// The watermark key: `topic/partition`, or the embedded source id.
    pub stream: &'a str,
    pub offset: i64,
    /// The input partition (service mode); `None` for files and stdin.
    pub partition: Option<i32>,
}

/// A read applied by [`StateBatch::apply_common_read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommonRead {
    /// The user had no change since their last cycle before it: when their
    /// next cycle is due changes with this read.
    pub first_change: bool,
}

/// What happened to one event.
#[derive(Debug, Clone, PartialEq)]
pub enum Disposition {
    Applied(EventType),
    /// A read of a memory the user does not have yet, kept with the user's
    /// state until the memory is created (then applied) or the read ages
    /// out (then dead-lettered as `unknown_memory`).
    Parked,
    /// At or below the user's watermark: already applied by an earlier run.
    Replayed,
    /// Valid but not applicable (e.g. an access to an unknown memory).
    Rejected {
        kind: &'static str,
        reason: String,
    },
    /// Valid, nothing to do, and nothing the platform needs back: an edit
    /// or deletion of a memory engram does not have, an edit older than
    /// the memory's last, an erasure repeated. Counted, not dead-lettered.
    Ignored {
        kind: &'static str,
        reason: String,
    },
}

/// How long and how many reads that overtook their memory's creation wait
/// for it, per user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parking {
    pub max_per_user: usize,
    pub max_bytes_per_user: usize,
    pub max_age_ms: Millis,
    /// Record when each read was parked by the wall clock (a service ages
    /// them by it once caught up; a replay's state stays deterministic).
    pub wall_clock: bool,
}

impl Parking {
    pub const OFF: Parking = Parking {
        max_per_user: 0,
        max_bytes_per_user: 0,
        max_age_ms: 0,
        wall_clock: false,
    };

    pub fn from_limits(limits: &Limits, wall_clock: bool) -> Self {
        Self {
            max_per_user: limits.max_parked_reads_per_user,
            max_bytes_per_user: limits.max_parked_read_bytes_per_user,
            max_age_ms: crate::duration::millis(limits.max_parked_read_age),
            wall_clock,
        }
    }

    fn is_on(&self) -> bool {
        self.max_per_user > 0 && self.max_age_ms > 0
    }
}

/// The clocks a parked read ages by. Stream time always (how far the
/// input has got: without one, no event read yet since a restart, nothing
/// has waited, as the memories' creations may be in the backlog); the wall
/// clock only once a service has read all the input there is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaitClock {
    pub stream: Option<Millis>,
    pub wall: Option<Millis>,
}

impl WaitClock {
    pub fn stream(stream: Option<Millis>) -> Self {
        Self { stream, wall: None }
    }

    pub fn is_stopped(&self) -> bool {
        self.stream.is_none() && self.wall.is_none()
    }

    /// Whether a read parked at `parked_at` (stream time) and `parked_wall_at`
    /// has waited `max_age` by either clock.
    pub fn waited(&self, parked_at: Millis, parked_wall_at: Millis, max_age: Millis) -> bool {
        let waited = |now: Option<Millis>, since: Millis| {
            now.is_some_and(|now| since <= now.saturating_sub(max_age))
        };
        waited(self.stream, parked_at) || waited(self.wall, parked_wall_at)
    }
}

/// A user's state in a batch, and whether the batch writes it.
struct BatchUser {
    state: UserState,
    /// Changed by the batch: written when it commits.
    dirty: bool,
}

impl Deref for BatchUser {
    type Target = UserState;

    fn deref(&self) -> &UserState {
        &self.state
    }
}

impl DerefMut for BatchUser {
    fn deref_mut(&mut self) -> &mut UserState {
        &mut self.state
    }
}

/// The salience of a memory a batch only reads, and whether it wrote it.
struct ReadSalience {
    state: SalienceState,
    /// A read of this batch changed it: written when the batch commits.
    written: bool,
}

impl ReadSalience {
    /// Records a read at `at`; the batch's first of `key` marks it written
    /// and lists it in `read_writes`, once.
    fn record_access(&mut self, at: Millis, key: (&str, &str), read_writes: &mut Vec<MemoryKey>) {
        self.state.record_access(at);
        if !self.written {
            self.written = true;
            read_writes.push((key.0.to_owned(), key.1.to_owned()));
        }
    }

    fn stored(state: SalienceState) -> Self {
        Self {
            state,
            written: false,
        }
    }
}

/// The saliences a partition's pipeline keeps from one batch to the next,
/// as its last batch committed them: a memory read again in the next batch
/// is found here instead of being read from the store again.
///
/// Sound only where that pipeline is its users' one writer: a service's
/// partition worker (its users' cycles run through it, and the command
/// line refuses to write while the group has members). Cycles change
/// saliences (a merge absorbs its members' reads), so the pipeline forgets
/// a user's before each of their runs.
#[derive(Default)]
pub struct CarriedSaliences {
    saliences: HashMap<MemoryKey, ReadSalience, Hashed>,
}

impl CarriedSaliences {
    /// The most memories kept: a batch that ends with more hands none on,
    /// and the next one reads from the store (about 170 bytes a memory).
    pub const MOST: usize = 25_000;

    /// Forgets a user's saliences (before anything else writes them).
    pub fn forget_user(&mut self, user_id: &str) {
        if !self.saliences.is_empty() {
            self.saliences.retain(|key, _| key.0 != user_id);
        }
    }
}

/// What a committed batch leaves.
pub struct Committed {
    /// Its output events, to emit now.
    pub outputs: Vec<Event>,
    /// The saliences the next batch starts from, where this one carried
    /// them.
    pub carried: Option<CarriedSaliences>,
}

/// Pending effects of a batch of events.
pub struct StateBatch<'a> {
    store: &'a dyn Store,
    settings: &'a CycleSettings,
    /// Found or loaded with one lookup: every event asks for its user.
    users: hashbrown::HashMap<String, BatchUser, Hashed>,
    /// Users with stored state or a memory created in this batch.
    known_users: HashSet<String, Hashed>,
    // Hashed: every access event looks its memory up here, and a string
    // pair's hash costs less than a search among the batch's keys.
    memories: HashMap<MemoryKey, Memory, Hashed>,
    /// Salience of memories that were only read (not loaded whole). A key
    /// is never both here and in `memories`: loading a memory whole moves
    /// its salience there. So a read finds its memory here with one lookup.
    saliences: HashMap<MemoryKey, ReadSalience, Hashed>,
    full_writes: BTreeSet<MemoryKey>,
    /// Memories loaded whole whose salience changed (those only read mark
    /// their entry in `saliences`). Sorted when the batch commits, so its
    /// writes keep one order.
    salience_writes: HashSet<MemoryKey, Hashed>,
    /// The entries of `saliences` this batch marked written, each once: a
    /// carried map holds many more than a batch touches.
    read_writes: Vec<MemoryKey>,
    /// `saliences` came from the last batch and goes on to the next.
    carrying: bool,
    other_writes: Vec<Write>,
    outputs: Vec<Event>,
    events: usize,
    indexes: Option<&'a mut UserIndexes>,
    near_duplicates: u64,
    /// Users with a cycle triggered in this batch.
    triggered: BTreeSet<String>,
    parking: Parking,
    /// Parked reads that aged out in this batch, for the dead-letter output.
    expired: Vec<ParkedRead>,
    /// Parked reads applied because their memory was created in this batch.
    unparked: u64,
    /// Memories whose text engram rebuilt in this batch and that wait for
    /// their new vector.
    rebuilt: Vec<MemoryKey>,
    /// Memories deleted in this batch (and not created again since): what
    /// the store still holds of them is gone for the rest of the batch.
    deleted: BTreeSet<MemoryKey>,
    /// Their deletions, written before any other write of the batch's
    /// memories, so one created again with the same id lands after.
    deletions: Vec<Write>,
    /// Memories the prefetch asked the store for and it did not have: a
    /// creation looks its id up, and asking again found nothing again.
    absent: HashSet<MemoryKey, Hashed>,
    /// Users erased in this batch and when: their erasure is written
    /// before anything else of theirs (a user may come back later in it).
    erasures: Vec<(String, Millis)>,
    /// Confirmations of deletions and erasures, emitted before the batch
    /// commits (like dead letters), so a crash cannot lose them.
    notices: Vec<Event>,
}

impl<'a> StateBatch<'a> {
    pub fn new(store: &'a dyn Store, settings: &'a CycleSettings) -> Self {
        Self {
            store,
            settings,
            users: hashbrown::HashMap::default(),
            known_users: HashSet::default(),
            memories: HashMap::default(),
            saliences: HashMap::default(),
            full_writes: BTreeSet::new(),
            salience_writes: HashSet::default(),
            read_writes: Vec::new(),
            carrying: false,
            other_writes: Vec::new(),
            outputs: Vec::new(),
            events: 0,
            indexes: None,
            near_duplicates: 0,
            triggered: BTreeSet::new(),
            parking: Parking::OFF,
            expired: Vec::new(),
            unparked: 0,
            rebuilt: Vec::new(),
            deleted: BTreeSet::new(),
            absent: HashSet::default(),
            deletions: Vec::new(),
            erasures: Vec::new(),
            notices: Vec::new(),
        }
    }

    /// The memories whose text engram rebuilt since the last call, with the
    /// text, for the caller to embed ([`StateBatch::set_vector`]).
    pub fn rebuilt_without_vectors(&mut self) -> Vec<(MemoryKey, String)> {
        std::mem::take(&mut self.rebuilt)
            .into_iter()
            .filter_map(|key| {
                let memory = self.memories.get(&key)?;
                memory
                    .embedding
                    .is_none()
                    .then(|| (key.clone(), memory.content.clone()))
            })
            .collect()
    }

    /// Gives a rebuilt memory the vector of its new text.
    pub fn set_vector(&mut self, key: &MemoryKey, vector: Vec<f32>) {
        if let Some(memory) = self.memories.get_mut(key) {
            memory.embedding = usable_embedding(&vector);
        }
    }

    /// Confirmations of the deletions, edits and erasures applied since the
    /// last call: to emit before the batch commits.
    pub fn take_notices(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.notices)
    }

    /// Parks reads of memories a known user does not have yet instead of
    /// rejecting them.
    pub fn with_parking(mut self, parking: Parking) -> Self {
        self.parking = parking;
        self
    }

    /// Parked reads that aged out since the last call, oldest first: each
    /// is dead-lettered as `unknown_memory` before the batch commits.
    pub fn take_expired(&mut self) -> Vec<ParkedRead> {
        std::mem::take(&mut self.expired)
    }

    /// Parked reads applied in this batch because their memory appeared.
    pub fn unparked(&self) -> u64 {
        self.unparked
    }

    /// Ages out a user's parked reads that waited `max_age` by `waits`
    /// (all of them when parking is off).
    pub fn expire_parked(&mut self, user_id: &str, waits: WaitClock) -> Result<(), StoreError> {
        let max_age = self.parking.max_age_ms;
        let parking_on = self.parking.is_on();
        let user = self.loaded_user(user_id)?;
        let waiting = user.parked_reads.len();
        let (expired, kept): (Vec<ParkedRead>, Vec<ParkedRead>) =
            std::mem::take(&mut user.parked_reads)
                .into_iter()
                .partition(|read| {
                    !parking_on || waits.waited(read.parked_at, read.wall_parked_at(), max_age)
                });
        user.parked_reads = kept;
        let changed = user.parked_reads.len() != waiting;
        user.dirty |= changed;
        if changed {
            self.expired.extend(expired);
        }
        Ok(())
    }

    /// Starts from the saliences the last batch of this pipeline committed
    /// (see [`CarriedSaliences`]); [`StateBatch::commit`] hands them on.
    pub fn with_carried(mut self, carried: CarriedSaliences) -> Self {
        self.saliences = carried.saliences;
        self.carrying = true;
        self
    }

    /// Looks up every new memory's near-duplicates in the users' vector
    /// indexes (and adds it there). If the commit fails, the caller must
    /// [`UserIndexes::clear`] them: they hold this batch's memories.
    pub fn with_indexes(mut self, indexes: &'a mut UserIndexes) -> Self {
        self.indexes = Some(indexes);
        self
    }

    /// New memories in this batch that arrived with a near-duplicate.
    pub fn near_duplicates(&self) -> u64 {
        self.near_duplicates
    }

    /// A user's state as this batch has it (`None`: no event of theirs yet).
    pub fn user_state(&self, user_id: &str) -> Option<&UserState> {
        self.users.get(user_id).map(|user| &user.state)
    }

    /// Events seen by this batch (applied, replayed or rejected).
    pub fn len(&self) -> usize {
        self.events
    }

    /// Whether there is nothing to commit.
    pub fn is_empty(&self) -> bool {
        self.events == 0 && !self.users.values().any(|user| user.dirty)
    }

    /// Whether [`StateBatch::apply`] would take the event rather than
    /// reject it (an access to a memory that does not exist, an output
    /// event); replays count as applicable.
    pub fn is_applicable(
        &mut self,
        position: &Position<'_>,
        event: &Event,
    ) -> Result<bool, StoreError> {
        if let (Some(user_id), Some(partition)) = (event.user_id(), position.partition)
            && self
                .loaded_user(user_id)?
                .owner_other_than(position.stream, partition)
                .is_some()
        {
            return Ok(false);
        }
        Ok(match event {
            Event::MemoryCreated(_)
            | Event::ConsolidationRequested(_)
            | Event::MemoryUpdated(_)
            | Event::MemoryDeleted(_)
            | Event::UserErased(_) => true,
            Event::MemoryAccessed(read) => self.has_salience(&read.user_id, &read.memory_id)?,
            _ => false,
        })
    }

    /// Applies the read most events are with one lookup each of its user,
    /// its memory's salience and its watermark, where
    /// [`StateBatch::is_applicable`] and [`StateBatch::apply`] take three,
    /// two and three: a read of a memory whose salience alone this batch
    /// holds, by a user it has loaded and who has no reads parked, that is
    /// neither a replay nor from before an erasure, from a source that
    /// already feeds the user (so no other partition does). Once the read
    /// is known to apply, `now` gives the pipeline's time (the caller moves
    /// its clock to the read's first), or declines: `None`, a cycle is due
    /// before it.
    ///
    /// `None` for any other read, or where `now` declined: nothing has
    /// changed, and the caller applies the event the general way.
    pub fn apply_common_read(
        &mut self,
        position: &Position<'_>,
        read: &MemoryAccessed,
        now: impl FnOnce() -> Option<Millis>,
    ) -> Option<CommonRead> {
        let user = self.users.get_mut(read.user_id.as_str())?;
        let at = read.accessed_at.timestamp_millis();
        // Parked reads may age out at any of their user's events (by the
        // wall clock, with a broker): those users take the general way.
        if !user.state.parked_reads.is_empty() || user.state.was_erased_after(at) {
            return None;
        }
        let watermark = user.state.applied_offsets.get_mut(position.stream)?;
        if position.offset <= *watermark {
            return None;
        }
        // A memory deleted in this batch has left `saliences`
        // (`forget_memory`), as the general path's `access` relies on too.
        let key = (read.user_id.as_str(), read.memory_id.as_str());
        let salience = self.saliences.get_mut(by(&key))?;
        let now = now()?;
        *watermark = position.offset;
        salience.record_access(at, key, &mut self.read_writes);
        let changed = &mut user.state.cycle.changed_since;
        let first_change = changed.is_none();
        changed.get_or_insert(now);
        user.dirty = true;
        self.events += 1;
        Some(CommonRead { first_change })
    }

    /// Whether the event is neither a replay (at or below its user's
    /// watermark) nor one an erasure refuses: what is worth embedding.
    pub fn is_new(&mut self, position: &Position<'_>, event: &Event) -> Result<bool, StoreError> {
        let Some(user_id) = event.user_id() else {
            return Ok(false);
        };
        let user = self.loaded_user(user_id)?;
        let time = event.occurred_at().timestamp_millis();
        Ok(!user.already_applied(position.stream, position.offset) && !user.was_erased_after(time))
    }

    /// Applies one input event. `now` is the pipeline clock's time;
    /// `stream_time` how far the input has got, by which parked reads age.
    pub fn apply(
        &mut self,
        position: &Position<'_>,
        event: &Event,
        now: Millis,
        stream_time: Option<Millis>,
    ) -> Result<Disposition, StoreError> {
        self.events += 1;
        let Some(user_id) = event.user_id() else {
            return Ok(Disposition::Rejected {
                kind: "not_an_input",
                reason: "dead letters are not input".to_owned(),
            });
        };
        // One lookup of the user for what every event asks of it, and
        // another only after parked reads expired.
        let mut user = self.loaded_user(user_id)?;
        if !user.parked_reads.is_empty() {
            self.expire_parked(user_id, WaitClock::stream(stream_time))?;
            user = self.loaded_user(user_id)?;
        }
        let before_erasure = user.was_erased_after(event.occurred_at().timestamp_millis());
        match user.admission(position.stream, position.offset, position.partition) {
            Admission::Replayed => return Ok(Disposition::Replayed),
            // Another partition feeds this user (a producer with another
            // partitioner): applying it would make a second writer. Not
            // marked applied, so the owner's watermark stays the only one.
            Admission::FedBy(owner) => {
                return Ok(Disposition::Rejected {
                    kind: "wrong_partition",
                    reason: format!(
                        "user {user_id} is fed by partition {owner}; its events must all go \
                         there (the producers' partitioner must match, see kafka.partitioner)"
                    ),
                });
            }
            Admission::New => {}
        }
        // An erased user's events from before the erasure never come back,
        // whatever replays them; a repeated erasure is confirmed again.
        if before_erasure {
            if let Event::UserErased(erased) = event {
                self.notices.push(erasure_completed(erased));
                return Ok(Disposition::Ignored {
                    kind: "already_erased",
                    reason: format!("user {user_id} was erased at or after this time"),
                });
            }
            return Ok(Disposition::Rejected {
                kind: "erased_user",
                reason: "the user was erased after this event's time; it is not applied \
                         (its content is not kept in this dead letter)"
                    .to_owned(),
            });
        }
        if let Event::UserErased(erased) = event {
            return Ok(self.erase(erased));
        }
        let disposition = match event {
            Event::MemoryCreated(created) => self.create(created, now)?,
            Event::MemoryAccessed(accessed) => self.access(accessed, position, stream_time)?,
            Event::ConsolidationRequested(requested) => self.request(requested, now),
            Event::MemoryUpdated(updated) => self.update(updated)?,
            Event::MemoryDeleted(deleted) => self.delete(deleted)?,
            other => Disposition::Rejected {
                kind: "not_an_input",
                reason: format!("`{}` is an output event", other.event_type().name()),
            },
        };
        // A read for a user engram has never seen leaves no trace: a row
        // per stray user id would grow the store without bound.
        let unknown = match &disposition {
            Disposition::Rejected { kind, .. } => *kind == "unknown_user",
            Disposition::Ignored { .. } => !self.known_users.contains(user_id),
            _ => false,
        };
        if unknown {
            return Ok(disposition);
        }
        if let Some(user) = self.users.get_mut(user_id) {
            user.mark_applied(position.stream, position.offset);
            if matches!(disposition, Disposition::Applied(_)) {
                user.cycle.changed_since.get_or_insert(now);
            }
            user.dirty = true;
        }
        Ok(disposition)
    }

    /// Loads, in one read per user and kind, what `events` will need: whole
    /// memories for upserts, salience alone for reads.
    pub fn prefetch<'e>(
        &mut self,
        events: impl IntoIterator<Item = &'e Event>,
    ) -> Result<(), StoreError> {
        // Each memory once, grouped by user: a batch's events name the same
        // memories many times over, and a hashed set drops the repeats for
        // less than sorting them did.
        let mut whole = Wanted::default();
        let mut read = Wanted::default();
        for event in events {
            let (wanted, user_id, memory_id) = match event {
                Event::MemoryCreated(e) => (&mut whole, e.user_id.as_str(), e.memory_id.as_str()),
                Event::MemoryUpdated(e) => (&mut whole, e.user_id.as_str(), e.memory_id.as_str()),
                Event::MemoryDeleted(e) => (&mut whole, e.user_id.as_str(), e.memory_id.as_str()),
                Event::MemoryAccessed(e) => (&mut read, e.user_id.as_str(), e.memory_id.as_str()),
                _ => continue,
            };
            let key = (user_id, memory_id);
            if !self.memories.contains_key(by(&key)) && !self.saliences.contains_key(by(&key)) {
                wanted.add(key);
            }
        }
        for (user_id, ids) in whole.by_user {
            for memory in self.store.memories_by_id(user_id, &ids)? {
                self.memories
                    .insert((memory.user_id.clone(), memory.id.clone()), memory);
            }
            for id in ids {
                if !self.memories.contains_key(by(&(user_id, id))) {
                    self.absent.insert((user_id.to_owned(), id.to_owned()));
                }
            }
        }
        for (user_id, ids) in read.by_user {
            let ids: Vec<&str> = ids
                .into_iter()
                .filter(|id| !self.memories.contains_key(by(&(user_id, id))))
                .collect();
            for (id, salience) in self.store.saliences_by_id(user_id, &ids)? {
                self.saliences
                    .insert((user_id.to_owned(), id), ReadSalience::stored(salience));
            }
        }
        Ok(())
    }

    /// Whether an event of this batch triggered a cycle. The caller commits
    /// the batch there (the pending run is stored with the event that
    /// triggered it) and then runs the cycle in its own transaction.
    pub fn cycle_due(&self) -> bool {
        !self.triggered.is_empty()
    }

    /// Users with a cycle triggered in this batch.
    pub fn triggered_users(&self) -> impl Iterator<Item = String> + '_ {
        self.triggered.iter().cloned()
    }

    /// Queues a cycle for a user, once per run id and batch.
    fn trigger(&mut self, user_id: &str, run: PendingRun) {
        let Some(user) = self.users.get_mut(user_id) else {
            return;
        };
        if trigger::queue(user, run) {
            self.triggered.insert(user_id.to_owned());
        }
    }

    /// The threshold and capacity triggers, after a memory was created.
    fn check_triggers(&mut self, user_id: &str, now: Millis) {
        let Some(user) = self.users.get_mut(user_id) else {
            return;
        };
        let config = &self.settings.consolidation;
        let tier = self.settings.tier(user.cycle.tokens);
        let previous_run = user.last_run_id.clone().unwrap_or_default();
        let automatic = |trigger| automatic_run(user_id, trigger, now, &previous_run);
        if tier != user.cycle.tier {
            user.cycle.tier = tier;
            if !trigger::is_queued(user, TriggerReason::Capacity) {
                let run = automatic(TriggerReason::Capacity);
                self.trigger(user_id, run);
                return;
            }
        }
        let Some(user) = self.users.get(user_id) else {
            return;
        };
        if config.trigger.trigger_new_memories > 0
            && user.new_since_cycle >= config.trigger.trigger_new_memories
            && !trigger::is_queued(user, TriggerReason::Threshold)
            && !trigger::is_queued(user, TriggerReason::Capacity)
        {
            let run = automatic(TriggerReason::Threshold);
            self.trigger(user_id, run);
        }
    }

    /// The saliences to carry on from a batch that has nothing to commit
    /// (it wrote none: what it read is what the store holds).
    pub fn uncommitted(self) -> Option<CarriedSaliences> {
        let saliences = if self.read_writes.is_empty() {
            self.saliences
        } else {
            HashMap::default()
        };
        self.carrying.then_some(CarriedSaliences { saliences })
    }

    /// Commits every effect atomically and returns the output events, which
    /// must only be emitted after this returns, and the saliences to carry
    /// into the next batch (where this one carried them).
    pub fn commit(self) -> Result<Committed, StoreError> {
        let mut batch = WriteBatch::default();
        // Erasures first: whatever of the user is left in this batch came
        // after the erasure.
        for (user_id, erased_at) in &self.erasures {
            batch.push(Write::EraseUser {
                user_id: user_id.clone(),
                erased_at: *erased_at,
            });
        }
        batch.writes.extend(self.deletions);
        for key in &self.full_writes {
            if let Some(memory) = self.memories.get(key) {
                batch.push(Write::PutMemory(memory.clone()));
            }
        }
        let whole = self
            .salience_writes
            .iter()
            .filter(|key| !self.full_writes.contains(*key))
            .filter_map(|key| Some((key, &self.memories.get(key)?.salience)));
        // A key marked written may have left since (loaded whole, deleted,
        // erased): only what is still here and marked is written.
        let read = self.read_writes.iter().filter_map(|key| {
            let read = self.saliences.get(key)?;
            read.written.then_some((key, &read.state))
        });
        let mut salience_writes: Vec<(&MemoryKey, &SalienceState)> = whole.chain(read).collect();
        salience_writes.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (key, salience) in salience_writes {
            batch.push(Write::PutSalience {
                user_id: key.0.clone(),
                memory_id: key.1.clone(),
                salience: salience.clone(),
            });
        }
        // A hash entry to forget that the memory holds again (its text
        // changed back within the batch) stays.
        let memories = &self.memories;
        batch
            .writes
            .extend(self.other_writes.into_iter().filter(|write| {
                match write {
                    Write::ForgetHash {
                        user_id,
                        memory_id,
                        content_hash,
                    } => memories
                        .get(&(user_id.clone(), memory_id.clone()))
                        .is_none_or(|m| &m.content_hash != content_hash),
                    _ => true,
                }
            }));
        let mut dirty_users: Vec<(&String, &BatchUser)> =
            self.users.iter().filter(|(_, user)| user.dirty).collect();
        dirty_users.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (_, user) in dirty_users {
            batch.push(Write::PutUserState(user.state.clone()));
        }
        self.store.commit(&batch)?;
        crate::faults::crash_point("flush.stored");
        // What is committed is what the next batch starts from.
        let carried = self.carrying.then(|| {
            let mut saliences = self.saliences;
            if saliences.len() > CarriedSaliences::MOST {
                saliences = HashMap::default();
            }
            for key in &self.read_writes {
                if let Some(read) = saliences.get_mut(key) {
                    read.written = false;
                }
            }
            CarriedSaliences { saliences }
        });
        Ok(Committed {
            outputs: self.outputs,
            carried,
        })
    }

    /// A user's state, loaded once per batch.
    fn loaded_user(&mut self, user_id: &str) -> Result<&mut BatchUser, StoreError> {
        let slot = match self.users.entry_ref(user_id) {
            EntryRef::Occupied(user) => return Ok(user.into_mut()),
            EntryRef::Vacant(slot) => slot,
        };
        let state = match self.store.user_state(user_id)? {
            Some(state) => {
                self.known_users.insert(user_id.to_owned());
                state
            }
            // A user engram does not know may be one it was asked to forget.
            None => UserState {
                erased_at: self.store.erased_at(user_id)?,
                ..UserState::new(user_id)
            },
        };
        Ok(slot.insert(BatchUser {
            state,
            dirty: false,
        }))
    }

    fn memory(
        &mut self,
        user_id: &str,
        memory_id: &str,
    ) -> Result<Option<&mut Memory>, StoreError> {
        let key = (user_id, memory_id);
        let key = by(&key);
        if self.deleted.contains(key) {
            return Ok(None);
        }
        if !self.memories.contains_key(key) {
            // The store had no such memory when this batch began, and
            // nothing is written to it before the batch commits.
            if self.absent.contains(key) {
                return Ok(None);
            }
            match self.store.memory(user_id, memory_id)? {
                Some(mut memory) => {
                    // Reads this batch already applied travel with it.
                    if let Some(read) = self.saliences.remove(key) {
                        memory.salience = read.state;
                        if read.written {
                            self.salience_writes
                                .insert((user_id.to_owned(), memory_id.to_owned()));
                        }
                    }
                    self.memories
                        .insert((user_id.to_owned(), memory_id.to_owned()), memory);
                }
                None => return Ok(None),
            }
        }
        Ok(self.memories.get_mut(key))
    }

    /// Whether the memory has a salience ([`StateBatch::salience`] is
    /// `Some`), with one lookup when the batch already holds it.
    fn has_salience(&mut self, user_id: &str, memory_id: &str) -> Result<bool, StoreError> {
        let key = (user_id, memory_id);
        if !self.deleted.contains(by(&key)) && self.saliences.contains_key(by(&key)) {
            return Ok(true);
        }
        Ok(self.salience(user_id, memory_id)?.is_some())
    }

    /// A memory's salience as this batch has it, read alone when the memory
    /// is not loaded whole.
    fn salience(
        &mut self,
        user_id: &str,
        memory_id: &str,
    ) -> Result<Option<&mut SalienceState>, StoreError> {
        let key = (user_id, memory_id);
        let key = by(&key);
        if self.deleted.contains(key) {
            return Ok(None);
        }
        if self.memories.contains_key(key) {
            return Ok(self.memories.get_mut(key).map(|m| &mut m.salience));
        }
        if !self.saliences.contains_key(key) {
            let Some((_, salience)) = self
                .store
                .saliences_by_id(user_id, &[memory_id])?
                .into_iter()
                .next()
            else {
                return Ok(None);
            };
            self.saliences.insert(
                (user_id.to_owned(), memory_id.to_owned()),
                ReadSalience::stored(salience),
            );
        }
        Ok(self.saliences.get_mut(key).map(|read| &mut read.state))
    }

    fn create(&mut self, event: &MemoryCreated, now: Millis) -> Result<Disposition, StoreError> {
        let key = (event.user_id.clone(), event.memory_id.clone());
        let tags = normalise_tags(event.tags.iter().flatten());
        let embedding = event.embedding.as_deref().and_then(usable_embedding);
        let importance = event.importance_or_default();
        let hash = content_hash(&event.content);
        let mut embedding_replaced = false;
        let mut edited = false;
        let mut token_delta: i64 = tokens(&event.content) as i64;
        let changed = match self.memory(&event.user_id, &event.memory_id)? {
            // An upsert keeps everything engram derived (salience, status,
            // provenance) and takes the platform's latest content.
            Some(existing) => {
                let before = existing.clone();
                token_delta = 0;
                if existing.status == MemoryStatus::Active {
                    token_delta = tokens(&event.content) as i64 - tokens(&existing.content) as i64;
                }
                existing.kind = event.kind;
                existing.category.clone_from(&event.category);
                existing.tags = tags;
                existing.content.clone_from(&event.content);
                existing.importance = importance;
                existing.source.clone_from(&event.source);
                if existing.content_hash != hash || embedding.is_some() {
                    embedding_replaced = existing.embedding != embedding;
                    edited = true;
                    existing.embedding = embedding;
                }
                existing.content_hash = hash;
                *existing != before
            }
            None => {
                let memory = Memory {
                    user_id: event.user_id.clone(),
                    id: event.memory_id.clone(),
                    kind: event.kind,
                    category: event.category.clone(),
                    tags,
                    content: event.content.clone(),
                    importance,
                    source: event.source.clone(),
                    content_hash: hash,
                    embedding,
                    status: MemoryStatus::Active,
                    salience: SalienceState::new(event.created_at.timestamp_millis()),
                    merged_from: Vec::new(),
                    derived_from: Vec::new(),
                    last_run_id: None,
                    updated_at: None,
                };
                // An id deleted earlier in the batch is a new memory now.
                self.deleted.remove(&key);
                let memory = self.memories.entry(key.clone()).or_insert(memory);
                self.known_users.insert(event.user_id.clone());
                if let Some(user) = self.users.get_mut(&event.user_id) {
                    user.new_since_cycle += 1;
                    // Reads that arrived first count now, at their own times.
                    let (waited, others): (Vec<ParkedRead>, Vec<ParkedRead>) =
                        std::mem::take(&mut user.parked_reads)
                            .into_iter()
                            .partition(|parked| parked.read.memory_id == event.memory_id);
                    user.parked_reads = others;
                    for parked in &waited {
                        memory
                            .salience
                            .record_access(parked.read.accessed_at.timestamp_millis());
                    }
                    self.unparked += waited.len() as u64;
                }
                embedding_replaced = true;
                true
            }
        };
        if changed {
            self.full_writes.insert(key.clone());
        }
        if let Some(user) = self.users.get_mut(&event.user_id) {
            user.cycle.tokens = user.cycle.tokens.saturating_add_signed(token_delta);
        }
        self.check_triggers(&event.user_id, now);
        if embedding_replaced {
            let found = self.near_duplicates_of(&key, edited)?;
            if let Some(nearest) = found.first() {
                tracing::debug!(
                    user_id = %event.user_id,
                    memory_id = %event.memory_id,
                    duplicate_of = %nearest.id,
                    similarity = nearest.similarity,
                    "near-duplicate candidate at ingest"
                );
                self.near_duplicates += 1;
                if let Some(user) = self.users.get_mut(&event.user_id) {
                    user.duplicate_candidates += 1;
                }
            }
        }
        Ok(Disposition::Applied(EventType::MemoryCreated))
    }

    fn access(
        &mut self,
        event: &MemoryAccessed,
        position: &Position<'_>,
        stream_time: Option<Millis>,
    ) -> Result<Disposition, StoreError> {
        let at = event.accessed_at.timestamp_millis();
        let key = (event.user_id.as_str(), event.memory_id.as_str());
        // Most reads: a memory read before (in this batch, or carried from
        // the last), or prefetched.
        if let Some(read) = self.saliences.get_mut(by(&key)) {
            read.record_access(at, key, &mut self.read_writes);
            return Ok(Disposition::Applied(EventType::MemoryAccessed));
        }
        let Some(salience) = self.salience(&event.user_id, &event.memory_id)? else {
            if !self.known_users.contains(event.user_id.as_str()) {
                // No row for a user id engram has never seen: stray ids
                // would grow the store without bound.
                return Ok(Disposition::Rejected {
                    kind: "unknown_user",
                    reason: format!("user {} has no memories", event.user_id),
                });
            }
            // It waits from where the input has got (or its own time, if
            // later): ageing is measured in the same stream time.
            let parked_at = stream_time.map_or(at, |time| time.max(at));
            return Ok(self.park(event, position, parked_at));
        };
        salience.record_access(at);
        // Read alone just now, or loaded whole.
        if let Some(read) = self.saliences.get_mut(by(&key)) {
            read.written = true;
            self.read_writes.push((key.0.to_owned(), key.1.to_owned()));
        } else if !self.salience_writes.contains(by(&key)) {
            self.salience_writes
                .insert((key.0.to_owned(), key.1.to_owned()));
        }
        Ok(Disposition::Applied(EventType::MemoryAccessed))
    }

    /// Keeps a read of a memory the user does not have (yet) with the
    /// user's state, while there is room.
    fn park(
        &mut self,
        event: &MemoryAccessed,
        position: &Position<'_>,
        parked_at: Millis,
    ) -> Disposition {
        let parking = self.parking;
        let Some(user) = self.users.get_mut(event.user_id.as_str()) else {
            return unknown_memory(event, None);
        };
        if !parking.is_on() {
            return unknown_memory(event, None);
        }
        let parked = ParkedRead {
            read: event.detached(),
            stream: source_stream(position).to_owned(),
            partition: position.partition,
            offset: position.offset,
            parked_at,
            parked_wall_at: parking
                .wall_clock
                .then(|| chrono::Utc::now().timestamp_millis()),
        };
        if user.parked_reads.len() >= parking.max_per_user {
            let full = format!(
                "{} reads already wait for their memories (limits.max_parked_reads_per_user)",
                user.parked_reads.len()
            );
            return unknown_memory(event, Some(full));
        }
        // Parking is the rare path (a read that overtook its memory): the
        // waiting reads are measured as stored rather than kept in a tally.
        let bytes = user
            .parked_reads
            .iter()
            .fold(0usize, |sum, read| sum.saturating_add(read.stored_bytes()));
        if bytes.saturating_add(parked.stored_bytes()) > parking.max_bytes_per_user {
            let full = format!(
                "the {} reads waiting for their memories hold {bytes} bytes, and this one \
                 would pass limits.max_parked_read_bytes_per_user ({})",
                user.parked_reads.len(),
                parking.max_bytes_per_user
            );
            return unknown_memory(event, Some(full));
        }
        user.parked_reads.push(parked);
        Disposition::Parked
    }

    fn request(&mut self, event: &ConsolidationRequested, now: Millis) -> Disposition {
        // Anyone who reaches the API or the topic can name a user id: a
        // row (and a partition claim) per stray id would grow without bound.
        if !self.known_users.contains(&event.user_id) {
            return Disposition::Rejected {
                kind: "unknown_user",
                reason: format!("user {} has no memories to consolidate", event.user_id),
            };
        }
        self.trigger(&event.user_id, requested_run(event, now));
        Disposition::Applied(EventType::ConsolidationRequested)
    }

    /// Applies a platform edit: the fields it carries replace the stored
    /// ones; salience, status and provenance stay. A new text gets its new
    /// vector (filled in by the pipeline, or supplied), and what engram
    /// built from the old text is rebuilt.
    fn update(&mut self, event: &MemoryUpdated) -> Result<Disposition, StoreError> {
        let at = event.updated_at.timestamp_millis();
        let key = (event.user_id.clone(), event.memory_id.clone());
        let Some(memory) = self.memory(&event.user_id, &event.memory_id)? else {
            return Ok(no_such_memory(&event.memory_id));
        };
        if memory.updated_at.is_some_and(|last| at <= last) || at < memory.created_at() {
            return Ok(Disposition::Ignored {
                kind: "stale_update",
                reason: format!(
                    "memory {} has a later update (or was created after this one)",
                    event.memory_id
                ),
            });
        }
        let before = memory.clone();
        memory.updated_at = Some(at);
        if let Some(kind) = event.kind {
            memory.kind = kind;
        }
        if let Some(category) = &event.category {
            memory.category = Some(category.clone());
        }
        if let Some(tags) = &event.tags {
            memory.tags = normalise_tags(tags.iter());
        }
        if let Some(importance) = event.importance {
            memory.importance = importance;
        }
        if let Some(content) = &event.content {
            memory.content.clone_from(content);
            let hash = content_hash(content);
            if hash != memory.content_hash {
                memory.content_hash = hash;
                memory.embedding = event.embedding.as_deref().and_then(usable_embedding);
            }
        }
        let text_changed = memory.content_hash != before.content_hash;
        let token_delta = match memory.status {
            MemoryStatus::Active => tokens(&memory.content) as i64 - tokens(&before.content) as i64,
            _ => 0,
        };
        self.full_writes.insert(key.clone());
        if let Some(user) = self.users.get_mut(&event.user_id) {
            user.cycle.tokens = user.cycle.tokens.saturating_add_signed(token_delta);
        }
        if text_changed {
            self.other_writes.push(Write::ForgetHash {
                user_id: before.user_id.clone(),
                memory_id: before.id.clone(),
                content_hash: before.content_hash.clone(),
            });
            // Its old vector is in the user's index under its id.
            self.near_duplicates_of(&key, true)?;
            let (rewritten, removed) = self.revise_dependents(&before, event.content.as_deref())?;
            if !rewritten.is_empty() || !removed.is_empty() {
                let source = (event.event_id.as_str(), &before, event.updated_at);
                self.notices
                    .push(revised(source, RevisionCause::Updated, rewritten, removed));
            }
        }
        Ok(Disposition::Applied(EventType::MemoryUpdated))
    }

    /// Applies a platform deletion: the memory, its salience, vector,
    /// links, hash entry and parked reads go; what engram built from it is
    /// rebuilt without it, and stored reports lose what only it said.
    fn delete(&mut self, event: &MemoryDeleted) -> Result<Disposition, StoreError> {
        let Some(memory) = self
            .memory(&event.user_id, &event.memory_id)?
            .map(|m| m.clone())
        else {
            return Ok(no_such_memory(&event.memory_id));
        };
        self.forget_memory(&memory);
        if let Some(user) = self.users.get_mut(&event.user_id) {
            user.parked_reads
                .retain(|parked| parked.read.memory_id != event.memory_id);
        }
        let (rewritten, removed) = self.revise_dependents(&memory, None)?;
        self.scrub_reports(&memory)?;
        self.scrub_links(&memory)?;
        let source = (event.event_id.as_str(), &memory, event.deleted_at);
        self.notices
            .push(revised(source, RevisionCause::Deleted, rewritten, removed));
        Ok(Disposition::Applied(EventType::MemoryDeleted))
    }

    /// Removes a memory from the batch and the store, with its hash entry
    /// and its vector in the user's index.
    fn forget_memory(&mut self, memory: &Memory) {
        let key = (memory.user_id.clone(), memory.id.clone());
        self.memories.remove(&key);
        self.saliences.remove(&key);
        self.full_writes.remove(&key);
        self.salience_writes.remove(&key);
        self.deleted.insert(key);
        self.deletions.push(Write::DeleteMemory {
            user_id: memory.user_id.clone(),
            memory_id: memory.id.clone(),
        });
        self.deletions.push(Write::ForgetHash {
            user_id: memory.user_id.clone(),
            memory_id: memory.id.clone(),
            content_hash: memory.content_hash.clone(),
        });
        if memory.status == MemoryStatus::Active
            && let Some(user) = self.users.get_mut(&memory.user_id)
        {
            let used = tokens(&memory.content);
            user.cycle.tokens = user.cycle.tokens.saturating_sub(used);
        }
        if let Some(indexes) = self.indexes.as_deref_mut() {
            indexes.forget(&memory.user_id);
        }
    }

    /// Rebuilds the memories engram made from `source` (fused canonicals
    /// that merged it, patterns it is an episode of; its links lead to
    /// them) after its deletion (`source_now` `None`) or edit. Returns the
    /// texts rewritten and the ids removed.
    fn revise_dependents(
        &mut self,
        source: &Memory,
        source_now: Option<&str>,
    ) -> Result<(Vec<RevisedText>, Vec<String>), StoreError> {
        let user_id = source.user_id.as_str();
        let lexicon = self.settings.lexicon.clone();
        let mut linked: BTreeSet<String> = BTreeSet::new();
        for link in self.store.links_of(user_id, &source.id)? {
            linked.insert(link.from_id);
            linked.insert(link.to_id);
        }
        linked.remove(&source.id);
        let (mut rewritten, mut removed) = (Vec::new(), Vec::new());
        for id in linked {
            let Some(built) = self.memory(user_id, &id)?.map(|m| m.clone()) else {
                continue;
            };
            let sources = if built.merged_from.contains(&source.id) {
                &built.merged_from
            } else if built.derived_from.contains(&source.id) {
                &built.derived_from
            } else {
                continue;
            };
            let mut others = BTreeMap::new();
            for other in sources.iter().filter(|other| **other != source.id) {
                if let Some(memory) = self.memory(user_id, other)? {
                    others.insert(other.clone(), memory.content.clone());
                }
            }
            let mut revised = built.clone();
            if source_now.is_none() {
                revised.merged_from.retain(|other| *other != source.id);
                revised.derived_from.retain(|other| *other != source.id);
            }
            match revise::rebuild(&built, &source.id, source_now, &others, &lexicon) {
                Rebuilt::Removed => {
                    self.forget_memory(&built);
                    removed.push(id);
                    continue;
                }
                Rebuilt::Text(text) => {
                    self.other_writes.push(Write::ForgetHash {
                        user_id: built.user_id.clone(),
                        memory_id: built.id.clone(),
                        content_hash: built.content_hash.clone(),
                    });
                    revised.content_hash = content_hash(&text);
                    revised.content.clone_from(&text);
                    // Its vector follows its text (the pipeline embeds it).
                    revised.embedding = None;
                    self.rebuilt.push((built.user_id.clone(), built.id.clone()));
                    if let Some(indexes) = self.indexes.as_deref_mut() {
                        indexes.forget(user_id);
                    }
                    rewritten.push(RevisedText {
                        memory_id: id.clone(),
                        content: text,
                    });
                }
                Rebuilt::Unchanged => {}
            }
            if revised != built {
                let key = (built.user_id.clone(), built.id.clone());
                self.memories.insert(key.clone(), revised);
                self.full_writes.insert(key);
            }
        }
        Ok((rewritten, removed))
    }

    /// Takes a deleted memory out of the user's stored run reports: its
    /// whole text, and its own words (those no memory the reports may
    /// also name holds).
    fn scrub_reports(&mut self, deleted: &Memory) -> Result<(), StoreError> {
        let user_id = deleted.user_id.as_str();
        let reports = self.store.run_reports(user_id)?;
        let mentioning: Vec<_> = reports
            .into_iter()
            .filter(|r| {
                r.report
                    .to_string()
                    .contains(&format!("\"{}\"", deleted.id))
            })
            .collect();
        if mentioning.is_empty() {
            return Ok(());
        }
        // The memories these reports name, as they stand now.
        let mut named: BTreeSet<String> = BTreeSet::new();
        for report in &mentioning {
            collect_strings(&report.report, &mut named);
        }
        let kept = self.texts_now(user_id, named.iter().map(String::as_str))?;
        let own = revise::own_words(
            &deleted.content,
            kept.iter().map(String::as_str),
            &self.settings.lexicon,
        );
        for mut report in mentioning {
            if revise::scrub(&mut report.report, &deleted.content, &own) {
                self.other_writes.push(Write::PutRunReport(report));
            }
        }
        Ok(())
    }

    /// Takes what only a deleted memory said out of the reasons of the
    /// links that stay: a link a merge moved to the canonical keeps the
    /// reason it was made with, which may quote the deleted memory.
    fn scrub_links(&mut self, deleted: &Memory) -> Result<(), StoreError> {
        let user_id = deleted.user_id.as_str();
        let said = revise::own_words(&deleted.content, [], &self.settings.lexicon);
        for mut link in self.store.links(user_id)? {
            let ends = [link.from_id.clone(), link.to_id.clone()];
            let going = ends
                .iter()
                .any(|id| self.deleted.contains(&(user_id.to_owned(), id.clone())));
            if going || said.is_disjoint(&revise::words(&link.reason)) {
                continue;
            }
            let kept: BTreeSet<String> = self
                .texts_now(user_id, ends.iter().map(String::as_str))?
                .iter()
                .flat_map(|text| revise::words(text))
                .collect();
            let own: BTreeSet<String> = said.difference(&kept).cloned().collect();
            let mut reason = serde_json::Value::String(std::mem::take(&mut link.reason));
            let changed = revise::scrub(&mut reason, &deleted.content, &own);
            link.reason = reason.as_str().unwrap_or_default().to_owned();
            if changed {
                self.other_writes.push(Write::PutLink(link));
            }
        }
        Ok(())
    }

    /// The texts of those of `ids` that are memories of the user, as this
    /// batch has them (none deleted in it), the rest read in one call.
    fn texts_now<'i>(
        &self,
        user_id: &str,
        ids: impl IntoIterator<Item = &'i str>,
    ) -> Result<Vec<String>, StoreError> {
        let mut texts = Vec::new();
        let mut unread = Vec::new();
        for id in ids {
            let key = (user_id.to_owned(), id.to_owned());
            if self.deleted.contains(&key) {
                continue;
            }
            match self.memories.get(&key) {
                Some(memory) => texts.push(memory.content.clone()),
                None => unread.push(id),
            }
        }
        let stored = self.store.memories_by_id(user_id, &unread)?;
        texts.extend(stored.into_iter().map(|m| m.content));
        Ok(texts)
    }

    /// Forgets a user: everything of theirs this batch holds, and (at
    /// commit, before anything else of theirs) every stored row, leaving
    /// only the tombstone.
    fn erase(&mut self, event: &UserErased) -> Disposition {
        let user_id = event.user_id.as_str();
        let at = event.erased_at.timestamp_millis();
        let theirs = |key: &MemoryKey| key.0 == user_id;
        self.memories.retain(|key, _| !theirs(key));
        self.saliences.retain(|key, _| !theirs(key));
        self.full_writes.retain(|key| !theirs(key));
        self.salience_writes.retain(|key| !theirs(key));
        self.other_writes.retain(|write| write.user_id() != user_id);
        self.deletions.retain(|write| write.user_id() != user_id);
        self.deleted.retain(|key| !theirs(key));
        self.known_users.remove(user_id);
        self.triggered.remove(user_id);
        // Later than any earlier erasure: `apply` refuses the others.
        self.users.insert(
            user_id.to_owned(),
            BatchUser {
                state: UserState {
                    erased_at: Some(at),
                    ..UserState::new(user_id)
                },
                dirty: false,
            },
        );
        if let Some(indexes) = self.indexes.as_deref_mut() {
            indexes.forget(user_id);
        }
        self.erasures.push((user_id.to_owned(), at));
        self.notices.push(erasure_completed(event));
        Disposition::Applied(EventType::UserErased)
    }

    /// Active memories of the user at or above the duplicate threshold to the
    /// memory at `key`, whose vector then joins the user's index. Finds
    /// nothing without indexes or an embedding.
    fn near_duplicates_of(
        &mut self,
        key: &MemoryKey,
        edited: bool,
    ) -> Result<Vec<Neighbour>, StoreError> {
        let Some(vector) = self.memories.get(key).and_then(|m| m.embedding.clone()) else {
            return Ok(Vec::new());
        };
        let Some(indexes) = self.indexes.take() else {
            return Ok(Vec::new());
        };
        let (user_id, memory_id) = key;
        // An edited memory's old vector sits in the index under its id: reload.
        if edited {
            indexes.forget(user_id);
        }
        let k = indexes.config().candidates;
        let threshold = self.settings.consolidation.detect.duplicate_threshold as f32;
        let mut loaded_now = false;
        let result = indexes
            .get_or_load(user_id, || {
                loaded_now = true;
                let memories = self.user_memories(user_id)?;
                Ok::<_, StoreError>(
                    memories
                        .into_iter()
                        .filter(|m| m.status == MemoryStatus::Active)
                        .filter_map(|m| Some((m.id, m.embedding?)))
                        .collect(),
                )
            })
            .map(|index| {
                let found: Vec<Neighbour> = index
                    .search(&vector, k + 1)
                    .into_iter()
                    .filter(|n| &n.id != memory_id && n.similarity >= threshold)
                    .take(k)
                    .collect();
                // A fresh load already holds this batch's memories, this one included.
                if !loaded_now {
                    index.add(memory_id.clone(), &vector);
                }
                found
            });
        self.indexes = Some(indexes);
        result
    }

    /// The user's memories as they stand in this batch: stored values
    /// overlaid with this batch's changes, ordered by `(created_at, id)`.
    fn user_memories(&self, user_id: &str) -> Result<Vec<Memory>, StoreError> {
        let mut by_id: BTreeMap<String, Memory> = self
            .store
            .memories(user_id)?
            .into_iter()
            .map(|m| (m.id.clone(), m))
            .collect();
        for ((owner, id), memory) in &self.memories {
            if owner == user_id {
                by_id.insert(id.clone(), memory.clone());
            }
        }
        let mut memories: Vec<Memory> = by_id.into_values().collect();
        memories.sort_by(|a, b| (a.created_at(), &a.id).cmp(&(b.created_at(), &b.id)));
        Ok(memories)
    }
}

/// The stream a position's record came from: its topic without the
/// partition suffix of the watermark key.
/// The memories a batch will read, each once, by user.
#[derive(Default)]
struct Wanted<'e> {
    seen: HashSet<(&'e str, &'e str), Hashed>,
    by_user: HashMap<&'e str, Vec<&'e str>, Hashed>,
}

impl<'e> Wanted<'e> {
    fn add(&mut self, key: (&'e str, &'e str)) {
        if self.seen.insert(key) {
            self.by_user.entry(key.0).or_default().push(key.1);
        }
    }
}

fn source_stream<'a>(position: &Position<'a>) -> &'a str {
    position
        .partition
        .and_then(|partition| position.stream.strip_suffix(&format!("/{partition}")))
        .unwrap_or(position.stream)
}

/// An edit or deletion of a memory engram does not have: no row is made.
fn no_such_memory(memory_id: &str) -> Disposition {
    Disposition::Ignored {
        kind: "unknown_memory",
        reason: format!("memory {memory_id} does not exist for this user"),
    }
}

/// What engram changed because of the platform's event `source` (its id,
/// the memory it edited or deleted, its time); the id derives from the
/// event's, so a replay sends the same event.
fn revised(
    source: (&str, &Memory, crate::event::Timestamp),
    cause: RevisionCause,
    rewritten: Vec<RevisedText>,
    removed_memory_ids: Vec<String>,
) -> Event {
    let (event_id, memory, at) = source;
    Event::MemoryRevised(MemoryRevised {
        event_id: format!("{event_id}/revised"),
        user_id: memory.user_id.clone(),
        memory_id: memory.id.clone(),
        cause,
        rewritten,
        removed_memory_ids,
        revised_at: at,
    })
}

/// The confirmation of an erasure (the same event, same id, when repeated).
fn erasure_completed(event: &UserErased) -> Event {
    Event::UserErasureCompleted(UserErasureCompleted {
        event_id: format!("{}/completed", event.event_id),
        user_id: event.user_id.clone(),
        erased_at: event.erased_at,
        completed_at: event.erased_at,
    })
}

/// Every string in a JSON value (ids among them).
fn collect_strings(value: &serde_json::Value, into: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::String(text) => {
            into.insert(text.clone());
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_strings(v, into)),
        serde_json::Value::Object(fields) => {
            fields.values().for_each(|v| collect_strings(v, into));
        }
        _ => {}
    }
}

/// A read of a memory the user does not have, and could not wait for it
/// (`full` says why, where parking is on).
fn unknown_memory(event: &MemoryAccessed, full: Option<String>) -> Disposition {
    let reason = match full {
        Some(full) => format!(
            "memory {} does not exist for this user, and {full}",
            event.memory_id
        ),
        None => format!("memory {} does not exist for this user", event.memory_id),
    };
    Disposition::Rejected {
        kind: "unknown_memory",
        reason,
    }
}
