//! Output of a whole run: `results.json`, the Markdown report, and the pieces they are made
//! of (the environment, the summary, the thread-scaling table); each suite's own tables are
//! in its `report` module.
//!
//! The JSON is serde's: every record has a `Serialize` struct next to its tables, whose fields
//! are the documented keys in their order.

pub mod environment;
pub mod results;
pub mod scaling;
pub mod summary;

use std::fmt::Write as _;

use serde::Serialize;

pub use environment::{Environment, utc_timestamp};
pub use results::{Results, exit_code};
pub use scaling::{ScalingRow, scaling_rows, scaling_table};
pub use summary::{SummaryRow, summary};

use crate::broadphase::report as broad_report;
use crate::broadphase::runner as broad_runner;
use crate::particles::report as particle_report;
use crate::schemes::report as scheme_report;

/// `results.json`: the tool's name, the environment, then every record.
#[derive(Serialize)]
struct ResultsFile<'a> {
    /// `hhg-bench`, by which `--compare` knows the file.
    tool: &'static str,
    #[serde(flatten)]
    env: &'a Environment,
    /// The particle suite's records.
    results: Vec<particle_report::JsonRecord<'a>>,
    schemes: Vec<scheme_report::JsonScheme>,
    broadphase: Vec<broad_report::JsonRecord>,
    scaling: Vec<particle_report::JsonRecord<'a>>,
    broadphase_scaling: Vec<broad_report::JsonRecord>,
}

/// The contents of `results.json`: the environment, then every record: the particle suite
/// under `results`, then `schemes`, `broadphase`, `scaling` and `broadphase_scaling`.
pub fn results_json(env: &Environment, results: &Results) -> String {
    let file = ResultsFile {
        tool: "hhg-bench",
        env,
        results: results.particles.iter().map(Into::into).collect(),
        schemes: results.schemes.iter().map(Into::into).collect(),
        broadphase: results.broad.iter().map(Into::into).collect(),
        scaling: results.scaling.iter().map(Into::into).collect(),
        broadphase_scaling: results.broad_scaling.iter().map(Into::into).collect(),
    };
    let mut json = serde_json::to_string_pretty(&file)
        .expect("serde_json writes any struct of strings and numbers");
    json.push('\n');
    json
}

/// What the report says besides the records: how the run was made and what goes with it.
#[derive(Clone, Debug, Default)]
pub struct ReportExtras {
    /// `quick` or `full`.
    pub mode: String,
    /// Wall-clock seconds of the run (generation, measurements and checks).
    pub run_s: f64,
    /// The SVG plots written next to the report, by file name.
    pub plots: Vec<String>,
    /// The comparison with an earlier run, as a Markdown section, if asked for.
    pub compare: Option<String>,
}

/// The Markdown report: how the numbers were made, the summary, any disagreement, then the
/// section of every suite that ran, the thread scaling, the plots and the comparison.
pub fn markdown_report(env: &Environment, results: &Results, extras: &ReportExtras) -> String {
    let mut out = String::from("# hhg benchmark report\n\n");
    let _ = writeln!(out, "- When: {}", utc_timestamp(env.unix_time));
    let _ = writeln!(
        out,
        "- CPU: {} ({} logical CPUs; {})",
        env.cpu, env.logical_cpus, env.simd
    );
    if let Some(gib) = env.memory_gib {
        let _ = writeln!(out, "- Memory: {gib:.1} GiB");
    }
    let _ = writeln!(out, "- Worker threads: {}", env.threads);
    let flags = match env.rustflags.as_deref().map(str::trim) {
        Some("") => "none (portable build)".to_owned(),
        Some(flags) if flags.contains("target-cpu=native") => {
            format!("`{flags}` (native build)")
        }
        Some(flags) => format!("`{flags}`"),
        None => env.rustflags_text(),
    };
    let _ = writeln!(out, "- Build flags (RUSTFLAGS): {flags}");
    let _ = writeln!(
        out,
        "- Build: {}",
        if env.debug_assertions {
            "with debug assertions (not a release build: the timings are not meaningful)".to_owned()
        } else {
            environment::profile_text(env.profile.as_deref())
        }
    );
    if let Some(build_s) = env.build_s {
        let _ = writeln!(out, "- Build time of the bench binary: {build_s:.0} s");
    }
    if !extras.mode.is_empty() {
        let _ = writeln!(
            out,
            "- Run: {} ({:.0} s wall clock)",
            extras.mode, extras.run_s
        );
    }
    let _ = writeln!(
        out,
        "- Peak memory: {}",
        if env.peak_memory {
            "measured by a counting global allocator in the bench binary (heap only: the most \
             bytes allocated at once during an engine's measurement, above what was allocated \
             before it; memory that bypasses Rust's allocator is not seen)"
        } else {
            "not measured (the counting allocator is not installed)"
        }
    );
    let _ = writeln!(out, "- Scene seed: {:#x}", env.seed);
    out.push('\n');

    let problems = results.problems();
    if problems.is_empty() {
        out.push_str("All engines agree on every case (pair counts and checksums).\n\n");
    } else {
        out.push_str("**THE ENGINES DISAGREE:**\n\n");
        for problem in &problems {
            let _ = writeln!(out, "- {problem}");
        }
        out.push('\n');
    }
    if !results.particles.is_empty() || !results.schemes.is_empty() || !results.broad.is_empty() {
        out.push_str("## Summary\n\n");
        out.push_str(&summary(results, true));
    }
    if !results.particles.is_empty() {
        particle_report::particle_section(&mut out, &results.particles);
    }
    if !results.schemes.is_empty() {
        scheme_report::scheme_section(&mut out, &results.schemes);
    }
    if !results.broad.is_empty() {
        out.push('\n');
        out.push_str(&broad_report::markdown_section(
            &results.broad,
            &broad_runner::disagreements(&results.broad),
        ));
    }
    let scaling = scaling_rows(results);
    if !scaling.is_empty() {
        out.push_str("\n## Thread scaling\n\n");
        out.push_str(
            "The same case with every thread count, each in a rayon pool of its own (the main \
             run's records give its thread count). `ms` is the total (particles) or the median \
             step (broad phase); `speedup` is the one-thread time over this time, `efficiency` \
             the speedup over the thread count. Brute force and the Python peers are not \
             scaled.\n\n",
        );
        out.push_str(&scaling_table(&scaling, true));
    }
    if !extras.plots.is_empty() {
        out.push_str("\n## Plots\n\n");
        for plot in &extras.plots {
            let _ = writeln!(out, "![{plot}]({plot})\n");
        }
    }
    if let Some(compare) = &extras.compare {
        out.push('\n');
        out.push_str(compare);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hhg_core::ListPass;

    use crate::pairs::PairStats;
    use crate::particles::engines::Engine;
    use crate::particles::record::{Order, Record};
    use crate::particles::report::{
        COLUMNS, json_line, markdown_table, order_rows, order_table, text_table,
    };
    use crate::report::summary::{particle_summary, summary_text};
    use crate::suite::Agreement;

    fn sample() -> Record {
        Record {
            engine: Engine::Hhg,
            input: "uniform".into(),
            order: Some(Order::Sorted),
            n: 10_000,
            threads: 2,
            reps: 3,
            build_s: 0.001,
            query_s: 0.002,
            stats: PairStats {
                pairs: 200_000,
                checksum: 123,
                directed: 400_000,
                self_refs: 0,
            },
            vs_kiddo: Some(4.5),
            over_sorted: Some(1.0),
            list_pass: Some(ListPass::InCellOrder),
            floor_s: Some(0.01),
            peak_bytes: Some(7 << 20),
            agree: Agreement::Agrees,
        }
    }

    #[test]
    fn json_line_has_the_documented_keys() {
        let line = json_line(&sample());
        assert_eq!(
            line,
            "{\"engine\":\"hhg\",\"case\":\"uniform-sorted\",\"n\":10000,\"threads\":2,\
             \"build_s\":0.001,\"query_s\":0.002,\"total_s\":0.003,\"pairs\":200000,\"checksum\":123}"
        );
    }

    #[test]
    fn tables_have_every_column() {
        let records = [sample()];
        let text = text_table(&records);
        assert!(text.lines().next().unwrap().starts_with("engine"));
        assert!(
            text.contains("uniform-sorted") && text.contains("4.50x") && text.contains("15.00")
        );
        assert!(text.contains("7.00") && text.contains("300.0"), "{text}");
        let md = markdown_table(&records);
        assert_eq!(md.lines().count(), 3);
        assert_eq!(
            md.lines().next().unwrap().matches('|').count(),
            COLUMNS.len() + 1
        );
        let env = Environment::current(2, 1);
        let results = Results {
            particles: records.to_vec(),
            ..Results::default()
        };
        let json = results_json(&env, &results);
        assert!(json.starts_with("{\n  \"tool\": \"hhg-bench\",\n  \"unix_time\": "));
        assert!(json.ends_with("  \"broadphase_scaling\": []\n}\n"));
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        let record = &parsed["results"][0];
        assert_eq!(record["peak_bytes"], 7 << 20);
        assert_eq!(record["agree"], "yes");
        assert_eq!(record["order"], "sorted");
        assert_eq!(record["over_sorted"], 1.0);
        assert_eq!(record["list_pass"], "in cell order");
        assert!((record["ns_per_pair"].as_f64().unwrap() - 15.0).abs() < 1e-9);
        assert!((record["vs_floor"].as_f64().unwrap() - 0.3).abs() < 1e-12);
        let report = markdown_report(&env, &results, &ReportExtras::default());
        assert!(!report.contains("Broad phase"));
        assert!(report.contains("Worker threads: 2") && report.contains("## Summary"));
    }

    #[test]
    fn disagreements_decide_the_exit_code() {
        let mut results = Results {
            particles: vec![sample()],
            ..Results::default()
        };
        assert_eq!(exit_code(&results.problems()), 0);
        results.particles[0].agree = Agreement::Differs;
        let problems = results.problems();
        assert_eq!(problems.len(), 1);
        assert_eq!(exit_code(&problems), 1);
        let env = Environment::current(2, 1);
        let report = markdown_report(&env, &results, &ReportExtras::default());
        assert!(
            report.contains("THE ENGINES DISAGREE") && report.contains("hhg on uniform-sorted")
        );
    }

    #[test]
    fn summary_and_scaling() {
        let mut kiddo = sample();
        kiddo.engine = Engine::Kiddo;
        kiddo.build_s = 0.01;
        kiddo.query_s = 0.02;
        let mut small = sample();
        small.n = 1000;
        let rows = particle_summary(&[sample(), kiddo.clone(), small]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].n, 10_000);
        let text = summary_text(&rows, "hhg");
        assert!(text.contains("hhg ms") && text.contains("kiddo ms") && text.contains("10.00x"));

        let mut main = sample();
        main.order = Some(Order::Random);
        let mut one = main.clone();
        one.threads = 1;
        one.build_s = 0.002;
        one.query_s = 0.004;
        let results = Results {
            particles: vec![main],
            scaling: vec![one],
            ..Results::default()
        };
        let rows = scaling_rows(&results);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].threads, rows[1].threads), (1, 2));
        assert!((rows[1].speedup.unwrap() - 2.0).abs() < 1e-9);
        assert!((rows[1].efficiency().unwrap() - 1.0).abs() < 1e-9);
        assert!(scaling_table(&rows, false).contains("2.00x"));
    }

    #[test]
    fn order_table_divides_by_the_sorted_time() {
        let sorted = sample();
        let at = |engine: Engine, order: Option<Order>, total: f64, pass: Option<ListPass>| {
            let mut r = sample();
            (r.engine, r.order, r.list_pass) = (engine, order, pass);
            (r.build_s, r.query_s) = (0.0, total);
            r
        };
        let records = [
            at(
                Engine::Hhg,
                Some(Order::Random),
                0.006,
                Some(ListPass::General),
            ),
            sorted.clone(),
            at(
                Engine::Hhg,
                Some(Order::Drift),
                0.0045,
                Some(ListPass::NearCellOrder),
            ),
            at(Engine::Kiddo, Some(Order::Random), 0.05, None),
            at(Engine::Kiddo, Some(Order::Sorted), 0.02, None),
            at(Engine::Kiddo, Some(Order::Zorder), 0.025, None),
        ];
        let rows = order_rows(&records);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].engine, "hhg");
        assert_eq!(rows[0].others.len(), 2);
        assert!((rows[0].others[0].1 - 2.0).abs() < 1e-9);
        assert_eq!(rows[0].others[1].0, Some(Order::Drift));
        assert_eq!(rows[1].others[1].0, Some(Order::Zorder));
        let text = order_table(&rows, false);
        let header = text.lines().next().unwrap();
        assert!(
            header.contains("random / sorted")
                && header.contains("drift / sorted")
                && header.contains("zorder / sorted"),
            "{text}"
        );
        assert!(text.contains("2.00x (general)") && text.contains("1.50x (near cell order)"));
        assert!(
            text.contains("3.000 (in cell order)") && text.contains("1.25x"),
            "{text}"
        );
        let kiddo = text.lines().nth(3).unwrap();
        assert!(kiddo.starts_with("kiddo") && kiddo.contains("2.50x") && kiddo.contains(" - "));
        assert_eq!(order_table(&rows, true).lines().count(), 4);
        // A point file's own order gets a column of its own.
        let file = at(Engine::Hhg, None, 0.009, Some(ListPass::General));
        let rows = order_rows(&[file, sorted]);
        assert!(order_table(&rows, false).contains("file / sorted"));

        let env = Environment::current(2, 1);
        let results = Results {
            particles: records.to_vec(),
            ..Results::default()
        };
        let report = markdown_report(&env, &results, &ReportExtras::default());
        assert!(report.contains("### Point orders") && report.contains("| drift / sorted |"));
    }

    #[test]
    fn variants_of_our_engine_are_not_the_best_other() {
        let mut cellorder = sample();
        cellorder.engine = Engine::HhgCellOrder;
        cellorder.query_s = 0.0001;
        let mut kiddo = sample();
        kiddo.engine = Engine::Kiddo;
        kiddo.query_s = 0.029;
        let rows = particle_summary(&[sample(), cellorder, kiddo]);
        let text = summary_text(&rows, "hhg");
        assert!(
            text.contains("hhg-cellorder ms") && text.contains("10.00x"),
            "{text}"
        );
    }

    #[test]
    fn timestamps_are_civil_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            utc_timestamp(951_782_400 + 3_661),
            "2000-02-29 01:01:01 UTC"
        );
        assert_eq!(utc_timestamp(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }
}
