//! Progress reporting of the runners: log lines and finished measurements, shown on the
//! terminal as an indicatif progress bar with the lines printed above it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Where the runners report what they are doing (from any thread of the pool, hence `Send`).
pub trait Progress: Send {
    /// A line of log: what is being run, a result, a skipped engine.
    fn note(&mut self, line: &str);

    /// One planned measurement is done (`what` names it).
    fn advance(&mut self, what: &str) {
        let _ = what;
    }
}

/// A closure taking log lines is a progress sink that ignores the measurement count.
impl<F: FnMut(&str) + Send> Progress for F {
    fn note(&mut self, line: &str) {
        self(line);
    }
}

/// A progress bar on standard error for a known number of measurements; the log lines go
/// above it. When standard error is not a terminal the bar is hidden and lines are printed
/// plainly.
#[derive(Debug)]
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar for `total` measurements.
    pub fn new(total: u64) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:36} {pos}/{len} measurements (eta {eta}) {wide_msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Self { bar }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn note(&mut self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    fn advance(&mut self, what: &str) {
        self.bar.set_message(what.to_owned());
        self.bar.inc(1);
    }
}
