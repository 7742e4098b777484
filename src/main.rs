//! The `engram` binary: [`cli`] parses the command line and runs the
//! command; [`app`] builds what the running modes are made of.

mod app;
mod cli;

fn main() {
    if let Err(error) = cli::main() {
        eprintln!("engram: error: {error:#}");
        std::process::exit(1);
    }
}
