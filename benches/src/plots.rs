//! SVG plots of a run, drawn with plotters' SVG backend: time against size on log-log axes per
//! scene, engine comparison bars at the largest size, and thread scaling.
//!
//! plotters is built without its font crates: the SVG backend writes text as `<text>` elements
//! that the viewer lays out, so no system font (and no fontconfig) is needed to draw.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::particles::engines::Engine;
use crate::particles::record::Order;
use crate::report::{Results, scaling_rows};

/// Width and height of every plot, in pixels.
const SIZE: (u32, u32) = (960, 600);

/// Series colours: hhg first (blue), then well-separated hues.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of the `k`-th series.
fn color(k: usize) -> RGBColor {
    COLORS[k % COLORS.len()]
}

/// A named line of points `(x, y)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend text.
    pub label: String,
    /// The points, by ascending `x`.
    pub points: Vec<(f64, f64)>,
}

/// A group of bars: its label and one `(series, value)` per bar.
pub type BarGroup = (String, Vec<(String, f64)>);

/// Turns a plotters error into a message.
fn draw_error<E: std::fmt::Debug>(e: E) -> String {
    format!("cannot draw the plot: {e:?}")
}

/// The range of positive values in `values`, widened by `pad` (a factor) on both sides and
/// never empty.
fn log_range(values: impl Iterator<Item = f64>, pad: f64) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return 0.1..10.0;
    }
    (lo / pad)..(hi * pad)
}

/// `range` (of a logarithmic axis) with its top raised so that the data fill the lower 70 %
/// of the plot and the legend in a top corner covers none of them.
fn with_legend_room(range: std::ops::Range<f64>) -> std::ops::Range<f64> {
    let decades = (range.end / range.start).ln();
    range.start..range.end * (decades * 0.45).exp()
}

/// Formats an axis value: `1k`, `10k`, `1M` for sizes, else the shortest readable number.
fn short_number(v: f64) -> String {
    let abs = v.abs();
    if abs >= 1e6 && (v / 1e6).fract().abs() < 1e-9 {
        format!("{}M", v / 1e6)
    } else if abs >= 1e3 && (v / 1e3).fract().abs() < 1e-9 {
        format!("{}k", v / 1e3)
    } else if abs >= 100.0 {
        format!("{v:.0}")
    } else if abs >= 1.0 {
        format!("{v:.1}")
    } else if abs >= 0.01 {
        format!("{v:.2}")
    } else {
        format!("{v:.1e}")
    }
}

/// Formats a value axis tick: whole numbers without decimals (no `k` or `M`, so that `1000`
/// reads as milliseconds), small ones with up to two decimals.
fn value_label(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else if v >= 0.01 {
        let text = format!("{v:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("{v:.0e}")
    }
}

/// Draws lines with markers on log-log axes into an SVG file.
pub fn log_log_plot(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<(), String> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let x = log_range(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
        1.3,
    );
    let y = with_legend_room(log_range(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        1.6,
    ));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(x.log_scale(), y.log_scale())
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| short_number(*v))
        .y_label_formatter(&|v| value_label(*v))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(draw_error)?;
    for (k, s) in series.iter().enumerate() {
        let c = color(k);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(draw_error)?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3)));
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 4, c.filled())))
            .map_err(draw_error)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(draw_error)?;
    root.present().map_err(draw_error)
}

/// Draws grouped bars on a logarithmic value axis into an SVG file; each series (bar name) has
/// one colour and a legend entry.
pub fn bar_plot(path: &Path, title: &str, y_desc: &str, groups: &[BarGroup]) -> Result<(), String> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let mut names: Vec<String> = Vec::new();
    for (_, bars) in groups {
        for (name, _) in bars {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let y = with_legend_room(log_range(
        groups.iter().flat_map(|(_, b)| b.iter().map(|v| v.1)),
        2.0,
    ));
    let floor = y.start;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(85)
        .build_cartesian_2d(0f64..groups.len().max(1) as f64, y.log_scale())
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(y_desc)
        .y_label_formatter(&|v| value_label(*v))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(draw_error)?;
    let width = 0.8 / names.len().max(1) as f64;
    for (k, name) in names.iter().enumerate() {
        let c = color(k);
        let bars: Vec<Rectangle<(f64, f64)>> = groups
            .iter()
            .enumerate()
            .filter_map(|(g, (_, bars))| {
                bars.iter().find(|(n, _)| n == name).map(|&(_, v)| {
                    let x0 = g as f64 + 0.1 + k as f64 * width;
                    Rectangle::new([(x0, floor), (x0 + width * 0.9, v)], c.filled())
                })
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(draw_error)?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
    }
    // Each group's label under the middle of its bars.
    let style =
        TextStyle::from(("sans-serif", 16).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (g, (label, _)) in groups.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(g as f64 + 0.5, floor));
        root.draw(&Text::new(label.as_str(), (px, py + 10), style.clone()))
            .map_err(draw_error)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(draw_error)?;
    root.present().map_err(draw_error)
}

/// Draws speedup against threads, one line per series, with the ideal `speedup = threads`.
pub fn scaling_plot(path: &Path, title: &str, series: &[Series]) -> Result<(), String> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let max_threads = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let max_speedup = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(max_threads, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(70)
        .build_cartesian_2d(0.5f64..max_threads + 0.5, 0f64..max_speedup * 1.15)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc("worker threads")
        .y_desc("speedup over 1 thread (x)")
        .x_labels((max_threads as usize + 1).min(17))
        .x_label_formatter(&|v| {
            if v.fract().abs() < 1e-9 {
                format!("{v:.0}")
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| format!("{v:.1}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(draw_error)?;
    chart
        .draw_series(LineSeries::new(
            [(1.0, 1.0), (max_threads, max_threads)],
            BLACK.mix(0.5).stroke_width(1),
        ))
        .map_err(draw_error)?
        .label("ideal (speedup = threads)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.mix(0.5)));
    for (k, s) in series.iter().enumerate() {
        let c = color(k);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(draw_error)?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3)));
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 4, c.filled())))
            .map_err(draw_error)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(draw_error)?;
    root.present().map_err(draw_error)
}

/// Adds `(x, y)` to the series named `label`, creating it if needed.
fn push_point(series: &mut Vec<Series>, label: String, point: (f64, f64)) {
    match series.iter_mut().find(|s| s.label == label) {
        Some(s) => s.points.push(point),
        None => series.push(Series {
            label,
            points: vec![point],
        }),
    }
}

/// Sorts every series by `x`.
fn sort_series(series: &mut [Series]) {
    for s in series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
}

/// Draws every plot of `results` into `dir` and returns the file names written.
///
/// Per particle scene: total time against points (random order, plus hhg and kiddo on the
/// cell order; the drift, Z and solver orders are left to the tables); per scheme scene: build plus search against points; per broad-phase scene:
/// median step against boxes; bars of ns per point (per box) per engine at the largest size;
/// and the thread scaling.
pub fn write_plots(dir: &Path, results: &Results) -> Result<Vec<String>, String> {
    let mut written = Vec::new();
    let main_threads = |threads: usize| {
        results
            .particles
            .iter()
            .map(|r| r.threads)
            .chain(results.broad.iter().map(|r| r.threads))
            .next()
            .is_none_or(|t| t == threads)
    };

    // Particle scenes.
    let mut scenes: Vec<String> = Vec::new();
    for r in &results.particles {
        if !scenes.contains(&r.input) {
            scenes.push(r.input.clone());
        }
    }
    for scene in &scenes {
        let mut series: Vec<Series> = Vec::new();
        for r in results.particles.iter().filter(|r| &r.input == scene) {
            let label = match r.order {
                Some(Order::Sorted) if matches!(r.engine, Engine::Hhg | Engine::Kiddo) => {
                    format!("{} (cell order)", r.engine)
                }
                Some(Order::Random) | None => r.engine.name().to_owned(),
                Some(
                    Order::Sorted | Order::Drift | Order::Step | Order::Zorder | Order::Solver,
                ) => continue,
            };
            push_point(&mut series, label, (r.n as f64, r.total_s() * 1e3));
        }
        sort_series(&mut series);
        let name = format!("time-{scene}.svg");
        log_log_plot(
            &dir.join(&name),
            &format!("{scene}: build + neighbour lists of all points"),
            "points (n)",
            "time (ms), best of several runs",
            &series,
        )?;
        written.push(name);
    }

    // Scheme scenes.
    let mut scheme_scenes: Vec<String> = Vec::new();
    for r in &results.schemes {
        if !scheme_scenes.contains(&r.input) {
            scheme_scenes.push(r.input.clone());
        }
    }
    for scene in &scheme_scenes {
        let mut series: Vec<Series> = Vec::new();
        for r in results.schemes.iter().filter(|r| &r.input == scene) {
            push_point(
                &mut series,
                r.scheme.name().to_owned(),
                (r.n as f64, r.total_s() * 1e3),
            );
        }
        sort_series(&mut series);
        let name = format!("time-schemes-{scene}.svg");
        log_log_plot(
            &dir.join(&name),
            &format!("hashing schemes on {scene}: build + unique pairs"),
            "points (n)",
            "time (ms), best of several runs",
            &series,
        )?;
        written.push(name);
    }

    // Broad-phase scenes.
    let mut broad_scenes = Vec::new();
    for r in &results.broad {
        if !broad_scenes.contains(&r.scene) {
            broad_scenes.push(r.scene);
        }
    }
    for &scene in &broad_scenes {
        let mut series: Vec<Series> = Vec::new();
        for r in results.broad.iter().filter(|r| r.scene == scene) {
            push_point(
                &mut series,
                r.engine.name().to_owned(),
                (r.n as f64, r.step_s * 1e3),
            );
        }
        sort_series(&mut series);
        let name = format!("time-broad-{scene}.svg");
        log_log_plot(
            &dir.join(&name),
            &format!("broad phase, {scene}: one step (update + all pairs)"),
            "boxes (n)",
            "time (ms), median step",
            &series,
        )?;
        written.push(name);
    }

    // Engine comparison bars at the largest size of each scene.
    let mut particle_groups: Vec<BarGroup> = Vec::new();
    for scene in &scenes {
        let of_scene = || {
            results.particles.iter().filter(|r| {
                &r.input == scene
                    && matches!(r.order, Some(Order::Random) | None)
                    && main_threads(r.threads)
            })
        };
        let Some(n) = of_scene().map(|r| r.n).max() else {
            continue;
        };
        let bars = of_scene()
            .filter(|r| r.n == n)
            .map(|r| (r.engine.name().to_owned(), r.ns_per_point()))
            .collect();
        particle_groups.push((format!("{scene} ({})", short_number(n as f64)), bars));
    }
    if !particle_groups.is_empty() {
        let name = "bars-particles.svg".to_owned();
        bar_plot(
            &dir.join(&name),
            "particles: build + lists at the largest size (random order)",
            "time per point (ns), log scale",
            &particle_groups,
        )?;
        written.push(name);
    }
    let mut scheme_groups: Vec<BarGroup> = Vec::new();
    for scene in &scheme_scenes {
        let of_scene = || results.schemes.iter().filter(|r| &r.input == scene);
        let Some(n) = of_scene().map(|r| r.n).max() else {
            continue;
        };
        let bars = of_scene()
            .filter(|r| r.n == n)
            .map(|r| {
                (
                    r.scheme.name().to_owned(),
                    r.total_s() * 1e9 / r.n.max(1) as f64,
                )
            })
            .collect();
        scheme_groups.push((format!("{scene} ({})", short_number(n as f64)), bars));
    }
    if !scheme_groups.is_empty() {
        let name = "bars-schemes.svg".to_owned();
        bar_plot(
            &dir.join(&name),
            "hashing schemes: build + unique pairs at the largest size",
            "time per point (ns), log scale",
            &scheme_groups,
        )?;
        written.push(name);
    }
    let mut broad_groups: Vec<BarGroup> = Vec::new();
    for &scene in &broad_scenes {
        let of_scene = || results.broad.iter().filter(|r| r.scene == scene);
        let Some(n) = of_scene().map(|r| r.n).max() else {
            continue;
        };
        let bars = of_scene()
            .filter(|r| r.n == n)
            .map(|r| (r.engine.name().to_owned(), r.ns_per_box()))
            .collect();
        broad_groups.push((format!("{scene} ({})", short_number(n as f64)), bars));
    }
    if !broad_groups.is_empty() {
        let name = "bars-broadphase.svg".to_owned();
        bar_plot(
            &dir.join(&name),
            "broad phase: median step at the largest size",
            "time per box and step (ns), log scale",
            &broad_groups,
        )?;
        written.push(name);
    }

    // Thread scaling.
    let rows = scaling_rows(results);
    if !rows.is_empty() {
        let mut series: Vec<Series> = Vec::new();
        for row in rows.iter().filter(|r| r.speedup.is_some()) {
            let label = format!(
                "{} on {} ({})",
                row.engine,
                row.case,
                short_number(row.n as f64)
            );
            push_point(
                &mut series,
                label,
                (row.threads as f64, row.speedup.unwrap_or(f64::NAN)),
            );
        }
        sort_series(&mut series);
        if !series.is_empty() {
            let name = "scaling.svg".to_owned();
            scaling_plot(&dir.join(&name), "thread scaling", &series)?;
            written.push(name);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_svg_with_labels() {
        let dir = std::env::temp_dir().join(format!("hhg-benches-plots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let series = vec![
            Series {
                label: "hhg".into(),
                points: vec![(1e3, 0.1), (1e4, 1.0), (1e5, 11.0)],
            },
            Series {
                label: "kiddo".into(),
                points: vec![(1e3, 0.5), (1e5, 80.0)],
            },
        ];
        let path = dir.join("line.svg");
        log_log_plot(&path, "a title", "points (n)", "time (ms)", &series).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") || svg.contains("<svg"));
        for text in ["a title", "points (n)", "time (ms)", "kiddo", "10k"] {
            assert!(svg.contains(text), "{text} missing");
        }
        let bars = dir.join("bars.svg");
        let groups = vec![
            (
                "uniform".to_owned(),
                vec![("hhg".to_owned(), 20.0), ("kiddo".to_owned(), 300.0)],
            ),
            ("sheet".to_owned(), vec![("hhg".to_owned(), 25.0)]),
        ];
        bar_plot(&bars, "bars", "ns per point", &groups).unwrap();
        let svg = std::fs::read_to_string(&bars).unwrap();
        assert!(svg.contains("uniform") && svg.contains("sheet") && svg.contains("<rect"));
        let scaling = dir.join("scaling.svg");
        let speedups = [Series {
            label: "hhg on uniform-random (100k)".into(),
            points: vec![(1.0, 1.0), (2.0, 1.6)],
        }];
        scaling_plot(&scaling, "scaling", &speedups).unwrap();
        assert!(std::fs::read_to_string(&scaling).unwrap().contains("ideal"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(short_number(1e6), "1M");
        assert_eq!(short_number(3e5), "300k");
        assert_eq!(value_label(1e6), "1000000");
        assert_eq!(value_label(0.25), "0.25");
        assert_eq!(value_label(0.1), "0.1");
        assert_eq!(log_range([].into_iter(), 2.0), 0.1..10.0);
    }
}
