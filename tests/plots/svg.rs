//! The run figures: well-formed SVG, one series per scenario, the labels asked for, the fault
//! window shaded, text as SVG text (no font needed).

use std::collections::BTreeSet;

use loadsim::metrics::{RunSummary, TimeSeries};
use loadsim::plot::{
    self, amplification_svg, hex, queue_length_svg, scenario_color, service_color, success_rate_svg,
};

use super::common::{POLICIES, short_runs};

fn pairs(runs: &[(RunSummary, TimeSeries)]) -> Vec<(&RunSummary, &TimeSeries)> {
    runs.iter().map(|(s, t)| (s, t)).collect()
}

/// Parses `svg` (panics if it is not well-formed XML) and returns every text and the stroke
/// colours of every polyline.
pub fn inspect(svg: &str) -> (Vec<String>, BTreeSet<String>) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("width"), Some("800"), "800 px wide");
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_owned())
        .collect();
    let strokes = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter_map(|n| n.attribute("stroke").map(str::to_uppercase))
        .collect();
    (texts, strokes)
}

fn has_text(texts: &[String], needle: &str) -> bool {
    texts.iter().any(|t| t.contains(needle))
}

#[test]
fn success_rate_has_one_line_per_scenario_axis_units_and_the_window() {
    let runs = short_runs();
    let svg = success_rate_svg(&pairs(&runs)).unwrap();
    let (texts, strokes) = inspect(&svg);
    for (i, policy) in POLICIES.iter().enumerate() {
        assert_eq!(
            texts.iter().filter(|t| t == policy).count(),
            1,
            "one legend entry for {policy}"
        );
        assert!(
            strokes.contains(&hex(scenario_color(i))),
            "a line in {policy}'s colour"
        );
    }
    // Black is also the axes' colour; every other palette colour marks a series.
    let line_colours: BTreeSet<_> = strokes
        .iter()
        .filter(|c| *c != "#000000" && (0..8).any(|i| **c == hex(scenario_color(i))))
        .collect();
    assert_eq!(
        line_colours.len(),
        POLICIES.len(),
        "one series per scenario"
    );
    assert!(has_text(&texts, "arrival time of the user request (s"));
    assert!(has_text(&texts, "requests that succeeded (%)"));
    assert!(has_text(&texts, "fault window"));
    assert!(svg.contains("font-family=\"sans-serif\""));
    assert!(!svg.contains("<image"), "no embedded bitmaps");
}

#[test]
fn queue_length_has_a_panel_per_scenario_and_a_line_per_service() {
    let runs = short_runs();
    let svg = queue_length_svg(&pairs(&runs)).unwrap();
    let (texts, strokes) = inspect(&svg);
    for policy in POLICIES {
        assert!(texts.iter().any(|t| t == policy), "a panel titled {policy}");
    }
    for (k, s) in ["gateway", "svc_a", "svc_b"].iter().enumerate() {
        assert!(texts.iter().any(|t| t == s), "legend entry {s}");
        assert!(strokes.contains(&hex(service_color(k))), "a line for {s}");
    }
    assert_eq!(
        texts.iter().filter(|t| t.starts_with("queued")).count(),
        POLICIES.len(),
        "a y label per panel"
    );
    assert!(has_text(&texts, "simulated time (s"));
}

#[test]
fn amplification_has_a_panel_per_service_and_a_line_per_scenario() {
    let runs = short_runs();
    let svg = amplification_svg(&pairs(&runs)).unwrap();
    let (texts, strokes) = inspect(&svg);
    for s in ["gateway", "svc_a", "svc_b"] {
        assert!(texts.iter().any(|t| t == &format!("at {s}")), "panel {s}");
    }
    for (i, policy) in POLICIES.iter().enumerate() {
        assert!(texts.iter().any(|t| t == policy), "legend {policy}");
        assert!(strokes.contains(&hex(scenario_color(i))), "line {policy}");
    }
    assert!(has_text(&texts, "attempts / request"));
}

#[test]
fn run_figures_are_three_without_a_limiter_and_deterministic() {
    let runs = short_runs();
    let figures = plot::run_figures(&pairs(&runs)).unwrap();
    assert!(
        figures.concurrency_limit.is_none(),
        "no limiter, no limit figure"
    );
    for svg in [
        &figures.success_rate,
        &figures.queue_length,
        &figures.amplification,
    ] {
        inspect(svg);
    }
    let again = short_runs();
    assert_eq!(
        success_rate_svg(&pairs(&runs)).unwrap(),
        success_rate_svg(&pairs(&again)).unwrap()
    );
    assert!(matches!(
        success_rate_svg(&[]),
        Err(plot::PlotError::Input { .. })
    ));
}

/// The tick labels of the time axis titled `desc`. plotters writes a chart's axis titles, then
/// its y tick labels, then its x tick labels; both start at 0, so the x labels are the numbers
/// after the title from the last `0` on.
fn time_ticks(texts: &[String], desc: &str) -> Vec<String> {
    let title = texts
        .iter()
        .position(|t| t == desc)
        .unwrap_or_else(|| panic!("an axis titled `{desc}` in {texts:?}"));
    let numbers: Vec<String> = texts[title + 1..]
        .iter()
        .take_while(|t| t.parse::<f64>().is_ok())
        .cloned()
        .collect();
    let start = numbers.iter().rposition(|t| t == "0").expect("a tick at 0");
    numbers[start..].to_vec()
}

#[test]
fn time_axes_are_in_hours_for_a_day_and_in_seconds_for_a_minute_over_the_offered_load() {
    use super::common::run;
    use loadsim::time::SimDuration;
    let day = run(
        "protected",
        &[
            "duration=24h",
            "arrivals.rate=1",
            "faults.slow_b.from=6h",
            "faults.slow_b.duration=1h",
        ],
        SimDuration::from_secs(600),
    );
    let minute = run("protected", &[], SimDuration::from_secs(1));
    for (runs, unit, span) in [(&day, "h", 24.0), (&minute, "s", 60.0)] {
        let runs = [(&runs.0, &runs.1)];
        for svg in [
            success_rate_svg(&runs).unwrap(),
            queue_length_svg(&runs).unwrap(),
            amplification_svg(&runs).unwrap(),
        ] {
            let (texts, _) = inspect(&svg);
            assert!(
                has_text(&texts, plot::run::STRIP_LABEL),
                "the offered-load strip: {texts:?}"
            );
            assert!(has_text(&texts, "arrivals/s"));
            let desc = texts
                .iter()
                .find(|t| t.contains(&format!("({unit}; ")))
                .unwrap_or_else(|| panic!("an axis in {unit}: {texts:?}"));
            let ticks: Vec<f64> = time_ticks(&texts, desc)
                .iter()
                .map(|t| t.parse().unwrap())
                .collect();
            assert!(ticks.len() >= 4, "{unit}: ticks {ticks:?}");
            // Round values of the unit, evenly spaced (1, 2 or 5 × 10ⁿ apart), within the span.
            let step = ticks[1] - ticks[0];
            let decade = 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].contains(&(step / decade)),
                "{unit}: step {step}"
            );
            for (i, t) in ticks.iter().enumerate() {
                assert_eq!(*t, ticks[0] + step * i as f64, "{unit}: ticks {ticks:?}");
                assert_eq!(t % step, 0.0, "{unit}: tick {t} is a multiple of the step");
                assert!(*t <= span, "{unit}: tick {t} beyond {span}");
            }
        }
    }
}
