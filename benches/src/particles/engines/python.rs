//! The Python peers: `benches/python/peers.py` runs vesin, freud, scipy's cKDTree, matscipy and
//! hhg's own Python package (hhg-python) on a point file and answers with the JSON lines of
//! `hhg-bench --points FILE --radius R --json` (one per engine, plus
//! `{"engine": ..., "skipped": reason}` for a missing package).
//!
//! The bench writes the points of a case to a temporary raw `f32` file, runs the script with
//! `python3` (or `$HHG_BENCH_PYTHON`), and turns every JSON line into a [`Record`]. Without
//! Python, or without a package, the peer is skipped with a message; the bench goes on.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use serde::Deserialize;

use crate::pairs::PairStats;
use crate::particles::engines::{Engine, PyPeer};
use crate::particles::record::{Order, Record};
use crate::progress::Progress;
use crate::suite::Agreement;

/// The environment variable naming the Python interpreter (default `python3`).
pub const PYTHON_VAR: &str = "HHG_BENCH_PYTHON";

/// The environment variable naming the peers script (default: the one in this crate).
pub const SCRIPT_VAR: &str = "HHG_BENCH_PEERS_SCRIPT";

/// The one-liner that installs every Python peer.
pub const PIP_INSTALL: &str = "pip install vesin freud-analysis scipy matscipy";

/// The peers script of this crate.
pub fn default_script() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/python/peers.py"))
}

/// What one JSON line of the script says.
#[derive(Clone, Debug, PartialEq)]
pub enum PeerLine {
    /// A measurement: the engine, threads, build and query seconds, pairs and checksum.
    Result {
        /// The peer.
        peer: PyPeer,
        /// The threads the peer used.
        threads: usize,
        /// Build seconds (0 for peers that build and query in one call).
        build_s: f64,
        /// Query seconds.
        query_s: f64,
        /// Unordered pairs.
        pairs: u64,
        /// The pair checksum.
        checksum: u64,
    },
    /// A peer that could not run, and why.
    Skipped {
        /// The peer's name as the script gave it.
        engine: String,
        /// Why it was skipped.
        reason: String,
    },
}

/// The keys that every JSON line of the peers script has, and a skipped peer's reason.
#[derive(Deserialize)]
struct LineHead {
    engine: String,
    skipped: Option<String>,
}

/// The keys of a measurement's JSON line that a [`Record`] takes (the others are ignored).
#[derive(Deserialize)]
struct Measurement {
    threads: usize,
    build_s: f64,
    query_s: f64,
    pairs: u64,
    checksum: u64,
}

/// Parses one JSON line of the peers script.
pub fn parse_line(line: &str) -> Result<PeerLine, String> {
    let head: LineHead =
        serde_json::from_str(line).map_err(|e| format!("not a JSON line ({e}): {line}"))?;
    if let Some(reason) = head.skipped {
        return Ok(PeerLine::Skipped {
            engine: head.engine,
            reason,
        });
    }
    let peer = PyPeer::ALL
        .into_iter()
        .find(|p| p.name() == head.engine)
        .ok_or_else(|| format!("unknown Python peer `{}`", head.engine))?;
    let m: Measurement =
        serde_json::from_str(line).map_err(|e| format!("not a measurement ({e}): {line}"))?;
    Ok(PeerLine::Result {
        peer,
        threads: m.threads,
        build_s: m.build_s,
        query_s: m.query_s,
        pairs: m.pairs,
        checksum: m.checksum,
    })
}

/// Whether Python works, as far as this run has found out.
#[derive(Clone, Debug, PartialEq)]
enum Status {
    /// Not tried yet.
    Untried,
    /// The script ran.
    Works,
    /// The interpreter or the script cannot run; the peers are skipped for the whole run.
    Broken,
}

/// The Python peers of a run.
#[derive(Debug)]
pub struct PythonPeers {
    /// The peers asked for.
    peers: Vec<PyPeer>,
    status: Status,
    /// Peers (and, for reasons other than a missing package, inputs) whose skip message was
    /// shown already.
    announced: BTreeSet<String>,
}

impl PythonPeers {
    /// The Python peers among `engines`.
    pub fn new(engines: &[Engine]) -> Self {
        let mut peers: Vec<PyPeer> = engines
            .iter()
            .filter_map(|e| match e {
                Engine::Python(p) => Some(*p),
                _ => None,
            })
            .collect();
        peers.sort();
        peers.dedup();
        Self {
            peers,
            status: Status::Untried,
            announced: BTreeSet::new(),
        }
    }

    /// Whether any Python peer was asked for.
    pub fn wanted(&self) -> bool {
        !self.peers.is_empty()
    }

    /// Runs the peers on `points` within `radius`, in the periodic box `0..lengths` when
    /// `periodic` gives its lengths; returns a record per peer that ran.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        name: &str,
        order: Option<Order>,
        points: &[[f32; 3]],
        radius: f32,
        periodic: Option<[f32; 3]>,
        threads: usize,
        reps: usize,
        progress: &mut dyn Progress,
    ) -> Vec<Record> {
        if !self.wanted() {
            return Vec::new();
        }
        let done = |progress: &mut dyn Progress, peers: &[PyPeer]| {
            for peer in peers {
                progress.advance(&format!("{} {name}", peer.name()));
            }
        };
        if self.status == Status::Broken {
            done(progress, &self.peers);
            return Vec::new();
        }
        let file = std::env::temp_dir().join(format!(
            "hhg-bench-{}-{name}-{}.f32",
            std::process::id(),
            points.len()
        ));
        if let Err(e) = crate::io::write_points(&file, points) {
            progress.note(&format!(
                "  python peers: skipped: cannot write {}: {e}",
                file.display()
            ));
            done(progress, &self.peers);
            return Vec::new();
        }
        let python = std::env::var_os(PYTHON_VAR).unwrap_or_else(|| "python3".into());
        let script = std::env::var_os(SCRIPT_VAR).map_or_else(default_script, PathBuf::from);
        let names: Vec<&str> = self.peers.iter().map(|p| p.name()).collect();
        let mut command = Command::new(&python);
        command.arg(&script);
        if let Some([lx, ly, lz]) = periodic {
            // `{:?}` prints the shortest decimal that reads back as the same f32.
            command.args(["--box", &format!("{lx:?},{ly:?},{lz:?}")]);
        }
        let output = command
            .arg("--points")
            .arg(&file)
            .arg("--radius")
            .arg(format!("{radius:?}"))
            .args(["--threads", &threads.to_string()])
            .args(["--reps", &reps.to_string()])
            .args(["--engine", &names.join(",")])
            .args(["--case", name])
            .arg("--json")
            .output();
        let _ = std::fs::remove_file(&file);
        let output = match output {
            Ok(output) if output.status.success() => output,
            Ok(output) => {
                self.status = Status::Broken;
                progress.note(&format!(
                    "  python peers: SKIPPED for this run: {} {} failed ({}): {}",
                    python.to_string_lossy(),
                    script.display(),
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim()
                ));
                done(progress, &self.peers);
                return Vec::new();
            }
            Err(e) => {
                self.status = Status::Broken;
                progress.note(&format!(
                    "  python peers: SKIPPED for this run: cannot run `{}`: {e} (set {PYTHON_VAR} \
                     to the interpreter; the peers need `{PIP_INSTALL}`)",
                    python.to_string_lossy()
                ));
                done(progress, &self.peers);
                return Vec::new();
            }
        };
        self.status = Status::Works;
        let mut records = Vec::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            match parse_line(line) {
                Ok(PeerLine::Result {
                    peer,
                    threads,
                    build_s,
                    query_s,
                    pairs,
                    checksum,
                }) => {
                    let record = Record {
                        engine: Engine::Python(peer),
                        input: name.to_owned(),
                        order,
                        n: points.len(),
                        threads,
                        reps,
                        build_s,
                        query_s,
                        stats: PairStats {
                            pairs,
                            checksum,
                            directed: 2 * pairs,
                            self_refs: 0,
                        },
                        vs_kiddo: None,
                        over_sorted: None,
                        list_pass: None,
                        floor_s: None,
                        peak_bytes: None,
                        agree: Agreement::Reference,
                    };
                    progress.note(&format!(
                        "  {:<8} {:<20} n={:<8} threads={threads} best of {reps}: {:>10.3} ms, {} pairs",
                        peer.name(),
                        record.case(),
                        record.n,
                        record.total_s() * 1e3,
                        pairs
                    ));
                    records.push(record);
                }
                Ok(PeerLine::Skipped { engine, reason }) => {
                    // A missing package is said once per run, any other reason once per input.
                    let key = if reason.contains("not installed") {
                        engine.clone()
                    } else {
                        format!("{engine} {name}")
                    };
                    if self.announced.insert(key) {
                        progress.note(&format!("  {engine}: SKIPPED on {name}: {reason}"));
                    }
                }
                Err(e) => progress.note(&format!("  python peers: {e}")),
            }
        }
        done(progress, &self.peers);
        records
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_the_contract() {
        let line = "{\"engine\":\"scipy\",\"case\":\"uniform\",\"n\":10,\"threads\":1,\
                    \"build_s\":0.001,\"query_s\":0.002,\"total_s\":0.003,\"pairs\":7,\
                    \"checksum\":42}";
        assert_eq!(
            parse_line(line),
            Ok(PeerLine::Result {
                peer: PyPeer::Scipy,
                threads: 1,
                build_s: 0.001,
                query_s: 0.002,
                pairs: 7,
                checksum: 42
            })
        );
        assert_eq!(
            parse_line("{\"engine\":\"freud\",\"skipped\":\"freud-analysis is not installed\"}"),
            Ok(PeerLine::Skipped {
                engine: "freud".into(),
                reason: "freud-analysis is not installed".into()
            })
        );
        assert!(parse_line("{\"engine\":\"octree\",\"threads\":1}").is_err());
        assert!(parse_line("{\"engine\":\"vesin\"}").is_err());
        assert!(parse_line("not json").is_err());
    }

    #[test]
    fn a_missing_interpreter_skips_the_peers() {
        let mut peers = PythonPeers::new(&[Engine::Hhg, Engine::Python(PyPeer::Vesin)]);
        assert!(peers.wanted());
        assert!(!PythonPeers::new(&[Engine::Hhg]).wanted());
        // Once Python was found broken, the peers are skipped without running anything.
        peers.status = Status::Broken;
        let mut notes = Vec::new();
        let records = peers.run(
            "x",
            None,
            &[[0.0; 3]],
            1.0,
            None,
            1,
            1,
            &mut |line: &str| notes.push(line.to_owned()),
        );
        assert!(records.is_empty());
    }
}
