//! The sweep figures as the sweep command and phase diagrams call them.

use loadsim::plot::{self, Line, heatmap_svg, hex, scenario_color, sensitivity_svg, viridis};

use super::svg::inspect;

fn lines() -> Vec<Line> {
    vec![
        Line {
            scenario: "naive".into(),
            points: vec![
                (400.0, 0.0, 0.0, 0.0),
                (200.0, 0.6, 0.5, 0.7),
                (100.0, 1.0, 1.0, 1.0),
            ],
        },
        Line {
            scenario: "protected".into(),
            points: vec![
                (100.0, 1.0, 1.0, 1.0),
                (200.0, 0.98, 0.97, 0.99),
                (400.0, f64::NAN, f64::NAN, f64::NAN),
            ],
        },
    ]
}

#[test]
fn sensitivity_chart_has_a_line_and_band_per_scenario_and_its_labels() {
    let svg = sensitivity_svg(
        "Success after the window vs load",
        "arrival rate (req/s)",
        "success rate after the window",
        &lines(),
    )
    .unwrap();
    let (texts, strokes) = inspect(&svg);
    for (i, name) in ["naive", "protected"].iter().enumerate() {
        assert_eq!(texts.iter().filter(|t| t == name).count(), 1, "{name}");
        assert!(strokes.contains(&hex(scenario_color(i))), "{name} line");
    }
    assert!(texts.iter().any(|t| t == "arrival rate (req/s)"));
    assert!(texts.iter().any(|t| t == "success rate after the window"));
    assert!(texts.iter().any(|t| t.contains("min–max over seeds")));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let bands = doc
        .descendants()
        .filter(|n| n.has_tag_name("polygon") && n.attribute("opacity") == Some("0.18"))
        .count();
    assert_eq!(bands, 2, "one min–max band per line");
}

#[test]
fn sensitivity_chart_writes_a_file_and_refuses_empty_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("load.svg");
    plot::sensitivity_chart(&path, "t", "x (s)", "y", &lines()).unwrap();
    inspect(&std::fs::read_to_string(&path).unwrap());
    let empty = [Line {
        scenario: "a".into(),
        points: vec![],
    }];
    assert!(matches!(
        sensitivity_svg("t", "x", "y", &empty),
        Err(plot::PlotError::Input { .. })
    ));
}

fn grid() -> (Vec<String>, Vec<String>, Vec<Vec<Option<f64>>>) {
    let x: Vec<String> = ["10s", "20s", "30s"].map(String::from).to_vec();
    let y: Vec<String> = ["200/s", "400/s"].map(String::from).to_vec();
    let cells = vec![
        vec![Some(0.0), Some(1.0), Some(4.0)],
        vec![Some(2.0), None, None],
    ];
    (x, y, cells)
}

#[test]
fn heatmap_labels_every_cell_and_marks_never_distinctly() {
    let (x, y, cells) = grid();
    let svg = heatmap_svg(
        "Recovery time (s)",
        "fault window length",
        &x,
        "arrival rate",
        &y,
        &cells,
        "never",
    )
    .unwrap();
    let (texts, _) = inspect(&svg);
    for label in x.iter().chain(&y) {
        assert!(texts.iter().any(|t| t == label), "axis value {label}");
    }
    assert!(texts.iter().any(|t| t == "fault window length"));
    assert!(texts.iter().any(|t| t == "arrival rate"));
    for v in ["0", "1", "4", "2"] {
        assert!(texts.iter().any(|t| t == v), "cell value {v}");
    }
    // Two never cells plus the colour-bar key.
    assert_eq!(texts.iter().filter(|t| *t == "never").count(), 3);
    let fills: Vec<String> = roxmltree::Document::parse(&svg)
        .unwrap()
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .filter_map(|n| n.attribute("fill").map(str::to_uppercase))
        .collect();
    assert!(fills.contains(&hex(viridis(0.0))), "lowest value is dark");
    assert!(
        fills.contains(&hex(viridis(1.0))),
        "highest value is bright"
    );
    assert!(
        fills.contains(&"#E4E4E4".to_owned()),
        "never cells are grey"
    );
}

#[test]
fn heatmap_refuses_a_grid_of_the_wrong_shape() {
    let (x, y, mut cells) = grid();
    cells[1].pop();
    let err = heatmap_svg("t", "x", &x, "y", &y, &cells, "never").unwrap_err();
    assert!(err.to_string().contains("2 rows"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let (x, y, cells) = grid();
    let path = dir.path().join("h.svg");
    plot::heatmap(&path, "t", "x", &x, "y", &y, &cells, "never").unwrap();
    inspect(&std::fs::read_to_string(&path).unwrap());
}

/// A policy that never recovers is drawn: each of its points is a mark in a "never" row above
/// every plotted value, in its colour, not left out of the chart.
#[test]
fn sensitivity_chart_marks_a_policy_that_never_recovers() {
    let lines = vec![
        Line {
            scenario: "naive".into(),
            points: vec![
                (2.0, f64::INFINITY, f64::NAN, f64::NAN),
                (5.0, f64::INFINITY, f64::NAN, f64::NAN),
                (10.0, f64::INFINITY, f64::NAN, f64::NAN),
            ],
        },
        Line {
            scenario: "protected".into(),
            points: vec![
                (2.0, 0.0, 0.0, 0.0),
                (5.0, 1.0, 0.0, 2.0),
                (10.0, 3.0, 2.0, 4.0),
            ],
        },
    ];
    let svg = sensitivity_svg("Recovery", "window (s)", "recovery time (s)", &lines).unwrap();
    let (texts, _) = inspect(&svg);
    assert!(texts.iter().any(|t| t == "never"), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("no seed recovered")));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let naive = hex(scenario_color(0));
    let cy = |n: roxmltree::Node| n.attribute("cy").unwrap().parse::<f64>().unwrap();
    let marks: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("r") == Some("5"))
        .filter(|n| n.attribute("fill").map(str::to_uppercase) == Some(naive.clone()))
        .map(cy)
        .collect();
    assert_eq!(marks.len(), 3, "one mark per point of naive");
    // In SVG y grows downwards: the marks lie above protected's line, on one row.
    let line_top = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| n.attribute("stroke").map(str::to_uppercase) == Some(hex(scenario_color(1))))
        .flat_map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .filter_map(|p| p.split(',').nth(1)?.parse::<f64>().ok())
                .collect::<Vec<_>>()
        })
        .fold(f64::INFINITY, f64::min);
    assert!(
        marks.iter().all(|&y| y == marks[0] && y < line_top),
        "marks above the values: {marks:?} vs {line_top}"
    );

    // Every point never: still a chart with its marks, not an error.
    let all_never = &lines[..1];
    let svg = sensitivity_svg("Recovery", "window (s)", "recovery time (s)", all_never).unwrap();
    assert!(inspect(&svg).0.iter().any(|t| t == "never"));
}

/// Many series: the legend wraps into rows inside the 800 px canvas, every name shown once.
#[test]
fn sensitivity_legend_wraps_many_series_into_rows() {
    let names: Vec<String> = (0..12)
        .map(|i| format!("policy_with_a_long_name_{i}"))
        .collect();
    let lines: Vec<Line> = names
        .iter()
        .enumerate()
        .map(|(i, n)| Line {
            scenario: n.clone(),
            points: vec![
                (1.0, i as f64, i as f64, i as f64),
                (2.0, i as f64 + 1.0, i as f64, i as f64 + 1.0),
            ],
        })
        .collect();
    let svg = sensitivity_svg("Many", "x", "y", &lines).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let height: f64 = doc
        .root_element()
        .attribute("height")
        .unwrap()
        .parse()
        .unwrap();
    let mut rows = std::collections::BTreeSet::new();
    for name in &names {
        let found: Vec<roxmltree::Node> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(name.as_str()))
            .collect();
        assert_eq!(found.len(), 1, "{name} once in the legend");
        let x: f64 = found[0].attribute("x").unwrap().parse().unwrap();
        let y: f64 = found[0].attribute("y").unwrap().parse().unwrap();
        // 14-pt names are at most ~10 px a character.
        assert!(
            x >= 0.0 && x + 10.0 * name.len() as f64 <= 800.0 + 40.0,
            "{name} at x={x}"
        );
        assert!(y < height, "{name} inside the canvas");
        rows.insert(y as i64);
    }
    assert!(
        rows.len() >= 3,
        "twelve long names need several rows: {rows:?}"
    );
    assert!(height > 500.0, "the canvas grows with the legend");
}
