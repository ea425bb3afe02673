//! Everything one run measured ([`Results`]), its disagreements and the exit code they make.

use crate::broadphase::runner::{self as broad_runner, BroadRecord};
use crate::particles::record::{self as particle_record, Record};
use crate::schemes::{self, SchemeRecord};

/// Everything one run measured.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// The particle suite (Python peers included).
    pub particles: Vec<Record>,
    /// The scheme suite.
    pub schemes: Vec<SchemeRecord>,
    /// The broad-phase suite.
    pub broad: Vec<BroadRecord>,
    /// Particle records of the thread-scaling measurement at thread counts other than the
    /// main run's.
    pub scaling: Vec<Record>,
    /// Broad-phase records of the thread-scaling measurement at other thread counts.
    pub broad_scaling: Vec<BroadRecord>,
}

impl Results {
    /// Every disagreement of every section, one line each.
    pub fn problems(&self) -> Vec<String> {
        let mut lines = particle_record::disagreements(&self.particles);
        lines.extend(schemes::disagreements(&self.schemes));
        lines.extend(broad_runner::disagreements(&self.broad));
        lines.extend(
            particle_record::disagreements(&self.scaling)
                .into_iter()
                .map(|l| format!("thread scaling: {l}")),
        );
        lines.extend(
            broad_runner::disagreements(&self.broad_scaling)
                .into_iter()
                .map(|l| format!("thread scaling: {l}")),
        );
        lines
    }
}

/// The exit code of a finished run: 0 when every engine agrees with its reference, 1 when any
/// disagreement was found (a run that fails outright also exits with 1, a usage error with 2).
pub fn exit_code(problems: &[String]) -> u8 {
    u8::from(!problems.is_empty())
}
