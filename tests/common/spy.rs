//! A store around another that records what passes through it, and can
//! refuse every commit: for tests of what the engine reads and writes.
#![allow(dead_code)]

use std::sync::Mutex;

use engram::model::{Link, Memory, RunReport, UserState};
use engram::store::{Store, StoreError, WriteBatch};

pub struct Spy<'a> {
    inner: &'a dyn Store,
    refuse_commits: bool,
    /// Every batch committed (or refused), in order.
    pub commits: Mutex<Vec<WriteBatch>>,
    /// Every user whose state was read, in order.
    pub states_read: Mutex<Vec<String>>,
}

impl<'a> Spy<'a> {
    pub fn new(inner: &'a dyn Store) -> Self {
        Self {
            inner,
            refuse_commits: false,
            commits: Mutex::default(),
            states_read: Mutex::default(),
        }
    }

    /// A spy whose commits all fail as an unavailable store's would.
    pub fn refusing(inner: &'a dyn Store) -> Self {
        Self {
            refuse_commits: true,
            ..Self::new(inner)
        }
    }
}

impl Store for Spy<'_> {
    fn commit(&self, batch: &WriteBatch) -> Result<(), StoreError> {
        self.commits.lock().unwrap().push(batch.clone());
        if self.refuse_commits {
            return Err(StoreError::unavailable("commit", "disk full (injected)"));
        }
        self.inner.commit(batch)
    }
    fn ping(&self) -> Result<(), StoreError> {
        self.inner.ping()
    }
    fn memory(&self, u: &str, m: &str) -> Result<Option<Memory>, StoreError> {
        self.inner.memory(u, m)
    }
    fn embedding_for_hash(&self, u: &str, h: &str) -> Result<Option<Vec<f32>>, StoreError> {
        self.inner.embedding_for_hash(u, h)
    }
    fn memories(&self, u: &str) -> Result<Vec<Memory>, StoreError> {
        self.inner.memories(u)
    }
    fn links_of(&self, u: &str, m: &str) -> Result<Vec<Link>, StoreError> {
        self.inner.links_of(u, m)
    }
    fn links(&self, u: &str) -> Result<Vec<Link>, StoreError> {
        self.inner.links(u)
    }
    fn user_state(&self, u: &str) -> Result<Option<UserState>, StoreError> {
        self.states_read.lock().unwrap().push(u.to_owned());
        self.inner.user_state(u)
    }
    fn users(&self) -> Result<Vec<String>, StoreError> {
        self.inner.users()
    }
    fn waiting_users(&self, sources: &[String]) -> Result<Vec<String>, StoreError> {
        self.inner.waiting_users(sources)
    }
    fn run_report(&self, u: &str, r: &str) -> Result<Option<RunReport>, StoreError> {
        self.inner.run_report(u, r)
    }
    fn find_run_report(&self, r: &str) -> Result<Option<RunReport>, StoreError> {
        self.inner.find_run_report(r)
    }
    fn run_reports(&self, u: &str) -> Result<Vec<RunReport>, StoreError> {
        self.inner.run_reports(u)
    }
    fn erased_at(&self, u: &str) -> Result<Option<i64>, StoreError> {
        self.inner.erased_at(u)
    }
}
