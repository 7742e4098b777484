//! The `engram` binary: [`cli`] parses the command line and runs the
//! command; [`app`] builds what the running modes are made of.

mod app;
mod cli;

// glibc's allocator was a quarter of an access event's CPU (its free lists
// consolidating after each batch's maps drop): see
// docs/2026-12-05-cpu-per-event.md.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    if let Err(error) = cli::main() {
        if stdout_closed(&error) {
            // `engram … | head`: the reader has what it wanted.
            return;
        }
        eprintln!("engram: error: {error:#}");
        std::process::exit(1);
    }
}

/// A command's own print failed because its reader went away. Only a
/// bare write error counts: a run whose event output (`--output -`)
/// breaks loses events, and says so through its sink error.
fn stdout_closed(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
