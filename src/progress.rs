//! Progress bars for long command-line work (`engram run` on a file,
//! `consolidate --all-users`, `migrate`): drawn on stderr with rate and ETA
//! when stderr is a terminal, and nothing at all when it is not, so piped
//! and logged output stays clean.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

fn visible(total: u64, template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// A bar over `total` bytes of input.
pub fn bytes(total: u64, message: &str) -> ProgressBar {
    let bar = visible(
        total,
        "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, ETA {eta})",
    );
    bar.set_message(message.to_owned());
    bar
}

/// A bar over `total` items, e.g. users or statements.
pub fn items(total: u64, unit: &str, message: &str) -> ProgressBar {
    let bar = visible(
        total,
        &format!("{{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{per_sec}}, ETA {{eta}})"),
    );
    bar.set_message(message.to_owned());
    bar
}
