//! Free loopback ports for the servers tests start (Apache Kafka, Apache
//! Cassandra): each handed out once per process.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::sync::Mutex;

/// The ports this test process has handed out. A chosen port is released
/// before the broker's JVM binds it, seconds later, and the system may
/// hand it out again meanwhile: two brokers of concurrent tests then
/// shared a port, and one test's clients reached the other's broker (its
/// topics "already existed"). A port is handed out once per process.
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// `N` distinct free ports, none of them in `taken` nor handed out before
/// ([`HANDED_OUT`]): every listener is held until all are chosen.
pub fn free_ports_except<const N: usize>(taken: &[u16]) -> [u16; N] {
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    let mut held: Vec<TcpListener> = Vec::new();
    let mut ports: Vec<u16> = Vec::new();
    while ports.len() < N {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if !taken.contains(&port) && !ports.contains(&port) && !handed_out.contains(&port) {
            ports.push(port);
        }
        held.push(listener);
    }
    handed_out.extend(&ports);
    std::array::from_fn(|i| ports[i])
}

/// A free port not handed out before ([`HANDED_OUT`]).
pub fn free_port() -> u16 {
    let [port] = free_ports_except(&[]);
    port
}
