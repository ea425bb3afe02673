//! Unit tests of the plan: the suites, scenes, sizes and engines that the options ask for,
//! the point-file runs, and the combinations of options that are refused.

use super::*;
use crate::cli::{parse, parse_count};
use crate::particles::record::Order;

fn parse_str(s: &str) -> Result<Command, clap::Error> {
    parse(s.split_whitespace().map(str::to_owned))
}

/// The suites of a scenes command.
fn suites(
    command: Command,
) -> (
    Option<SceneRun>,
    Option<SchemeRun>,
    Option<BroadRun>,
    Option<ScalingPlan>,
) {
    let Command::Scenes(ScenePlan {
        run,
        schemes,
        broad,
        scaling,
        ..
    }) = command
    else {
        panic!("expected scenes");
    };
    (run, schemes, broad, scaling)
}

#[test]
fn defaults_run_everything_quickly() {
    let Command::Scenes(ScenePlan {
        run,
        schemes,
        broad,
        scaling,
        full,
        out,
        compare,
        json,
    }) = parse_str("").unwrap()
    else {
        panic!("expected scenes");
    };
    let run = run.expect("the particle suite runs by default");
    assert_eq!(run, SceneRun::default());
    assert_eq!(run.engines, Engine::QUICK);
    assert_eq!(run.sizes, [10_000, 100_000]);
    assert_eq!(run.scenes, Scene::ALL);
    assert_eq!(run.threads, default_threads());
    assert_eq!(schemes, Some(SchemeRun::default()));
    assert_eq!(broad, Some(BroadRun::default()));
    assert_eq!(broad.unwrap().sizes, [1_000, 10_000, 100_000]);
    if default_threads() > 1 {
        let scaling = scaling.expect("scaling runs by default");
        assert_eq!(scaling.particles, [(Scene::Uniform, 100_000)]);
        assert_eq!(scaling.broad, [(BroadScene::Cuboids, 100_000)]);
        assert_eq!(scaling.threads, scaling_threads(default_threads()));
    }
    assert!(!full && !json);
    assert_eq!((out, compare), (None, None));
}

#[test]
fn the_full_matrix() {
    let (run, schemes, broad, scaling) =
        suites(parse_str("--full --max-n 300000 --scaling-threads 1,2 --threads 2").unwrap());
    let run = run.unwrap();
    assert_eq!(run.sizes, [1_000, 10_000, 100_000, 300_000]);
    assert_eq!(run.engines, Engine::ALL);
    assert_eq!(run.scenes, Scene::ALL);
    assert_eq!(
        schemes.unwrap().scenes,
        Scene::ALL
            .into_iter()
            .filter(|s| s.is_plain())
            .collect::<Vec<_>>()
    );
    assert_eq!(broad.unwrap().sizes, [1_000, 10_000, 100_000, 300_000]);
    let scaling = scaling.unwrap();
    assert_eq!(scaling.threads, [1, 2]);
    assert_eq!(scaling.particles.len(), Scene::ALL.len());
    assert_eq!(scaling.broad.len(), BroadScene::ALL.len());
    let (run, ..) = suites(parse_str("--full").unwrap());
    assert_eq!(run.unwrap().sizes, [1_000, 10_000, 100_000, 1_000_000]);
    let (.., scaling) = suites(parse_str("--no-scaling").unwrap());
    assert_eq!(scaling, None);
    let (.., scaling) = suites(parse_str("--threads 1 --scaling-threads 1").unwrap());
    assert_eq!(scaling, None, "no thread count other than the main run's");
}

#[test]
fn filters_and_limits() {
    let (run, schemes, broad, _) = suites(
        parse_str(
            "--max-n 100000 --scene dambreak --scene=uniform --engine hhg,kiddo --threads 1 --reps 5 --seed 0x10 --out x",
        )
        .unwrap(),
    );
    let run = run.unwrap();
    // Only particle scenes are named, so the broad-phase suite is skipped; no scheme is
    // named among the engines, so the scheme suite is too.
    assert_eq!(broad, None);
    assert_eq!(schemes, None);
    assert_eq!(run.sizes, [10_000, 100_000]);
    assert_eq!(run.scenes, [Scene::Dambreak, Scene::Uniform]);
    assert_eq!(run.engines, [Engine::Hhg, Engine::Kiddo]);
    assert_eq!((run.threads, run.reps, run.seed), (1, Some(5), 16));

    let (run, schemes, broad, _) = suites(parse_str("--n 3k --n 1_500").unwrap());
    assert_eq!(run.unwrap().sizes, [3000, 1500]);
    assert_eq!(schemes.unwrap().sizes, [3000, 1500]);
    assert_eq!(broad.unwrap().sizes, [3000, 1500]);
    assert!(parse_str("--suite particles --max-n 5000").is_err());
    assert!(parse_str("--n 0").is_err());

    let (run, schemes, broad, _) =
        suites(parse_str("--scene long,static --engine hhg,sap --steps 2").unwrap());
    assert_eq!((run, schemes), (None, None));
    let broad = broad.unwrap();
    assert_eq!(broad.scenes, [BroadScene::Long, BroadScene::StaticHeavy]);
    assert_eq!(broad.engines, [BroadEngine::Hhg, BroadEngine::Sap]);
    assert_eq!(broad.steps, Some(2));

    // The 2-D scenes of both suites, by name only.
    let (run, _, broad, _) = suites(
        parse_str(
            "--scene uniform2d,dambreak2d,variable2d,variable100-2d,cuboids2d,static2d \
             --engine hhg,kiddo,parry",
        )
        .unwrap(),
    );
    assert_eq!(run.unwrap().scenes, Scene::PLANE);
    assert_eq!(broad.unwrap().scenes, BroadScene::PLANE);

    // The sph scene alone.
    let (run, schemes, broad, _) =
        suites(parse_str("--suite particles --scene sph --n 20000").unwrap());
    assert_eq!((schemes, broad), (None, None));
    let run = run.unwrap();
    assert_eq!((run.scenes, run.sizes), (vec![Scene::Sph], vec![20_000]));
}

#[test]
fn schemes_and_python_peers() {
    let (run, schemes, broad, _) = suites(parse_str("--scheme xor,core --scene sheet").unwrap());
    assert_eq!((run, broad), (None, None));
    let schemes = schemes.unwrap();
    assert_eq!(schemes.schemes, [SchemeKind::Core, SchemeKind::Xor]);
    assert_eq!(schemes.scenes, [Scene::Sheet]);
    assert!(parse_str("--scheme octree").is_err());
    assert!(parse_str("--suite broadphase --scheme core").is_err());
    assert!(parse_str("--suite schemes --scene variable").is_err());

    let (run, ..) = suites(parse_str("--peers python --suite particles").unwrap());
    let engines = run.unwrap().engines;
    assert!(engines.contains(&Engine::Hhg) && engines.contains(&Engine::Python(PyPeer::Vesin)));
    assert_eq!(engines.len(), Engine::ALL.len() + PyPeer::ALL.len());
    let (run, ..) = suites(parse_str("--engine hhg,scipy").unwrap());
    assert_eq!(
        run.unwrap().engines,
        [Engine::Hhg, Engine::Python(PyPeer::Scipy)]
    );
    assert!(parse_str("--peers rust").is_err());
}

#[test]
fn suites_and_their_filters() {
    // Only the broad-phase suite has a count below 10k by default.
    let (run, schemes, broad, _) = suites(parse_str("--max-n 5000").unwrap());
    assert_eq!((run, schemes), (None, None));
    assert_eq!(broad.unwrap().sizes, [1_000]);

    let (run, _, broad, _) = suites(
        parse_str("--suite broadphase --max-n 100000 --steps 4 --engine sap,brute").unwrap(),
    );
    let broad = broad.unwrap();
    assert_eq!(run, None);
    assert_eq!(broad.sizes, [1_000, 10_000, 100_000]);
    assert_eq!(broad.steps, Some(4));
    assert_eq!(broad.engines, [BroadEngine::Sap, BroadEngine::Brute]);

    let (run, schemes, broad, _) = suites(parse_str("--suite=particles").unwrap());
    assert_eq!(
        (run, schemes, broad),
        (Some(SceneRun::default()), None, None)
    );

    // With all suites, an engine of one suite only skips the others.
    let (run, schemes, broad, _) = suites(parse_str("--engine kiddo").unwrap());
    assert_eq!(run.unwrap().engines, [Engine::Kiddo]);
    assert_eq!((schemes, broad), (None, None));
    // parry is in the engine list only when the build holds it; otherwise naming it is
    // an error that says how to build it.
    let parsed = parse_str("--engine parry");
    if cfg!(feature = "parry") {
        let (run, _, broad, _) = suites(parsed.unwrap());
        assert_eq!(
            (run, broad.unwrap().engines),
            (None, vec![BroadEngine::Parry])
        );
        assert!(BroadRun::default().engines.contains(&BroadEngine::Parry));
    } else {
        let err = parsed.unwrap_err().to_string();
        assert!(err.contains("`parry` feature"), "{err}");
        assert!(!BroadRun::default().engines.contains(&BroadEngine::Parry));
    }

    assert!(parse_str("--suite broadphase --engine kiddo").is_err());
    assert!(parse_str("--suite particles --engine sap").is_err());
    assert!(parse_str("--suite broadphase --scene uniform").is_err());
    assert!(parse_str("--suite particles --scene huge").is_err());
    assert!(parse_str("--suite broadphase --reps 2").is_err());
    assert!(parse_str("--suite particles --steps 2").is_err());
    assert!(parse_str("--suite everything").is_err());
    assert!(parse_str("--steps 0").is_err());
    assert!(parse_str("--points a.f32 --radius 1 --suite particles").is_err());
    assert!(parse_str("--points a.f32 --radius 1 --engine sap").is_err());
    assert!(parse_str("--points a.f32 --radius 1 --full").is_err());
}

#[test]
fn point_files() {
    let Command::Points { file, run, json } =
        parse_str("--points a/b.f32 --radius 0.5 --json --threads 2").unwrap()
    else {
        panic!("expected points");
    };
    assert_eq!(file, PathBuf::from("a/b.f32"));
    assert_eq!((run.radius, run.threads, json), (0.5, 2, true));
    assert_eq!(run.engines, [Engine::Hhg, Engine::Kiddo]);
    assert_eq!((run.orders, run.seed), (vec![None], DEFAULT_SEED));
    assert!(run.schemes.is_empty());
    let Command::Points { run, .. } =
        parse_str("--points a.ply --radius 1 --peers python").unwrap()
    else {
        panic!("expected points");
    };
    assert!(run.engines.contains(&Engine::Python(PyPeer::Freud)));
    assert!(parse_str("--points a.f32").is_err());
    assert!(parse_str("--points a.f32 --radius 1 --scene uniform").is_err());
    assert!(parse_str("--radius 1").is_err());
    assert!(parse_str("--points a.f32 --radius -1").is_err());
}

/// The run of a `--points` command.
fn point_run(s: &str) -> PointRun {
    match parse_str(s) {
        Ok(Command::Points { run, .. }) => run,
        other => panic!("expected points, got {other:?}"),
    }
}

#[test]
fn point_files_in_any_order_with_any_scheme() {
    let run = point_run("--points a.xyz --radius 1 --order zorder,drift --order file,cell");
    assert_eq!(
        run.orders,
        [
            None,
            Some(Order::Sorted),
            Some(Order::Drift),
            Some(Order::Zorder)
        ]
    );
    let run = point_run("--points a.xyz --radius 1 --order=random,random --seed 7");
    assert_eq!((run.orders, run.seed), (vec![Some(Order::Random)], 7));
    assert!(parse_str("--points a.xyz --radius 1 --order hilbert").is_err());
    assert!(
        parse_str("--order drift").is_err(),
        "scenes run every order"
    );

    // --scheme alone runs the schemes only; with --engine, both.
    let run = point_run("--points a.xyz --radius 1 --scheme xor,core");
    assert_eq!(run.schemes, [SchemeKind::Core, SchemeKind::Xor]);
    assert!(run.engines.is_empty());
    let run = point_run("--points a.xyz --radius 1 --scheme group --engine hhg-cellorder");
    assert_eq!(run.schemes, [SchemeKind::Group]);
    assert_eq!(run.engines, [Engine::HhgCellOrder]);
    assert!(parse_str("--points a.xyz --radius 1 --scheme octree").is_err());
}

#[test]
fn bad_arguments_are_errors() {
    let help = parse_str("--help").unwrap_err();
    assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
    assert_eq!(help.exit_code(), 0);
    assert_eq!(parse_str("--frobnicate").unwrap_err().exit_code(), 2);
    assert_eq!(parse_str("--points a.f32").unwrap_err().exit_code(), 2);
    assert!(parse_str("--frobnicate").is_err());
    assert!(parse_str("--scene cube").is_err());
    assert!(parse_str("--engine octree").is_err());
    let (run, ..) = suites(parse_str("--engine hhg,hhg-cellorder").unwrap());
    assert_eq!(run.unwrap().engines, [Engine::Hhg, Engine::HhgCellOrder]);
    assert!(parse_str("--threads 0").is_err());
    assert!(parse_str("--threads").is_err());
    assert!(parse_str("--scaling-threads 0").is_err());
    assert!(parse_count("12x").is_err());
    assert_eq!(parse_count("1M"), Ok(1_000_000));
    let Command::Scenes(ScenePlan { compare, .. }) = parse_str("--compare old.json").unwrap()
    else {
        panic!("expected scenes");
    };
    assert_eq!(compare, Some(PathBuf::from("old.json")));
}
