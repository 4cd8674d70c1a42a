//! The sweep figures as the sweep command and phase diagrams call them.

use loadsim::plot::{
    self, AxisKind, Band, ChartStyle, Line, heatmap_svg, hex, scenario_color, sensitivity_svg,
    sensitivity_svg_styled, viridis,
};

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
fn sensitivity_chart_draws_and_refuses_empty_input() {
    inspect(&sensitivity_svg("t", "x (s)", "y", &lines()).unwrap());
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
    let (x, y, cells) = grid();
    inspect(&heatmap_svg("t", "x", &x, "y", &y, &cells, "never").unwrap());
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

fn styled(x_kind: AxisKind, y_kind: AxisKind, band: Band) -> ChartStyle {
    ChartStyle {
        x_label: "fault slow_b duration (s)".into(),
        y_label: "success after the fault window (%)".into(),
        x_kind,
        y_kind,
        band,
    }
}

/// The y tick labels of a chart: the texts right-aligned left of the plot (`text-anchor="end"`).
fn y_ticks(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("text-anchor") == Some("end"))
        .map(|n| n.text().unwrap_or("").trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The x tick labels: centred texts just under the plot, above the axis label.
fn x_ticks(svg: &str, x_label: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let label_y: f64 = doc
        .descendants()
        .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(x_label))
        .and_then(|n| n.attribute("y")?.parse().ok())
        .unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("text-anchor") == Some("middle"))
        .filter(|n| {
            let y: f64 = n.attribute("y").unwrap().parse().unwrap();
            y < label_y && y > label_y - 40.0
        })
        .map(|n| n.text().unwrap_or("").trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

/// A share axis runs from 0 to exactly 100 %, ticks in per cent, even when every value is low;
/// a value outside [0, 1] makes it a plain number axis again.
#[test]
fn share_axes_end_at_100_percent() {
    let low = vec![Line {
        scenario: "a".into(),
        points: vec![(2.0, 0.1, 0.05, 0.15), (5.0, 0.2, 0.1, 0.3)],
    }];
    let svg = sensitivity_svg_styled(
        "t",
        &styled(AxisKind::Number, AxisKind::Share, Band::MinMax),
        &low,
    )
    .unwrap();
    let ticks = y_ticks(&svg);
    assert_eq!(ticks.first().map(String::as_str), Some("0 %"), "{ticks:?}");
    assert_eq!(ticks.last().map(String::as_str), Some("100 %"), "{ticks:?}");
    assert!(ticks.iter().all(|t| t.ends_with(" %")), "{ticks:?}");
    // The same values as a plain number: the axis stops near the data (0.3), not at 1.
    let plain = sensitivity_svg("t", "x", "y", &low).unwrap();
    let ticks = y_ticks(&plain);
    assert!(!ticks.iter().any(|t| t == "1"), "{ticks:?}");
    // A mean past 1 is no share: numbers again.
    let over = vec![Line {
        scenario: "a".into(),
        points: vec![(2.0, 1.5, 1.0, 2.0)],
    }];
    let svg = sensitivity_svg_styled(
        "t",
        &styled(AxisKind::Number, AxisKind::Share, Band::MinMax),
        &over,
    )
    .unwrap();
    assert!(!y_ticks(&svg).iter().any(|t| t.contains('%')));
}

/// Integer axes (a queue capacity on x, a count on y) have ticks only at integers, where a plain
/// axis over the same small range has fractional ones.
#[test]
fn integer_axes_get_integer_ticks() {
    let lines = vec![Line {
        scenario: "a".into(),
        points: vec![
            (1.0, 0.0, 0.0, 1.0),
            (2.0, 1.0, 0.0, 2.0),
            (3.0, 2.0, 1.0, 3.0),
        ],
    }];
    let style = styled(AxisKind::Integer, AxisKind::Integer, Band::MinMax);
    let svg = sensitivity_svg_styled("t", &style, &lines).unwrap();
    let (xs, ys) = (x_ticks(&svg, &style.x_label), y_ticks(&svg));
    assert_eq!(xs, ["1", "2", "3"]);
    assert!(ys.len() >= 3, "{ys:?}");
    for t in xs.iter().chain(&ys) {
        assert!(
            t.parse::<i64>().is_ok(),
            "integer tick {t} in {xs:?} {ys:?}"
        );
    }
    let plain = sensitivity_svg_styled(
        "t",
        &styled(AxisKind::Number, AxisKind::Number, Band::MinMax),
        &lines,
    )
    .unwrap();
    let xs = x_ticks(&plain, &style.x_label);
    assert!(xs.iter().any(|t| t.contains('.')), "{xs:?}");
}

/// A categorical axis labels its positions with the values' names.
#[test]
fn categorical_axes_are_labelled_with_their_values() {
    let lines = vec![Line {
        scenario: "a".into(),
        points: vec![
            (0.0, 0.5, 0.4, 0.6),
            (1.0, 0.7, 0.6, 0.8),
            (2.0, 0.9, 0.9, 0.9),
        ],
    }];
    let names = vec!["fifo".to_owned(), "lifo".to_owned(), "codel".to_owned()];
    let style = styled(
        AxisKind::Categories(names.clone()),
        AxisKind::Share,
        Band::MinMax,
    );
    let svg = sensitivity_svg_styled("t", &style, &lines).unwrap();
    assert_eq!(x_ticks(&svg, &style.x_label), names);
}

/// A title longer than the figure is wide wraps onto lines that each fit, above the plot: no
/// title text runs past the right edge or reaches down to the y axis label.
#[test]
fn long_titles_wrap_and_never_overlap_the_axis_label() {
    let title = "svc_b arrivals per user request in the window (amplification), by svc_a's attempt timeout — `services.svc_b.queue_cap` = 16";
    let long_y = "svc_a→svc_b retries refused by the retry budget of the edge per user request";
    let mut style = styled(AxisKind::Number, AxisKind::Number, Band::MinMax);
    style.y_label = long_y.into();
    let svg = sensitivity_svg_styled("t", &style, &lines())
        .and_then(|_| sensitivity_svg_styled(title, &style, &lines()))
        .unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let words: Vec<&str> = title.split_whitespace().collect();
    let title_texts: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter(|n| {
            n.text()
                .is_some_and(|t| t.trim().starts_with(words[0]) || t.contains("16"))
        })
        .filter(|n| {
            n.attribute("font-size")
                .is_some_and(|s| s.starts_with("18"))
        })
        .collect();
    assert!(title_texts.len() >= 2, "the title wraps");
    let joined: Vec<String> = title_texts
        .iter()
        .map(|n| n.text().unwrap().trim().to_owned())
        .collect();
    assert_eq!(joined.join(" "), title);
    for n in &title_texts {
        let x: f64 = n.attribute("x").unwrap().parse().unwrap();
        // 18 px text is at most 11 px a character.
        assert!(x + 11.0 * n.text().unwrap().chars().count() as f64 <= 800.0);
    }
    let title_bottom = title_texts
        .iter()
        .map(|n| n.attribute("y").unwrap().parse::<f64>().unwrap())
        .fold(0.0, f64::max)
        + 12.0;
    // The long y label is drawn on two rotated lines, both below the title.
    let y_parts: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("transform").is_some())
        .filter(|n| n.text().is_some_and(|t| long_y.contains(t.trim())))
        .collect();
    assert_eq!(y_parts.len(), 2, "a long y label wraps");
    for n in &y_parts {
        let y: f64 = n.attribute("y").unwrap().parse().unwrap();
        let half = 8.5 * n.text().unwrap().chars().count() as f64 / 2.0;
        assert!(y - half > title_bottom, "y label clear of the title");
    }
}

/// `band: ci95`: the note says the band is the mean's 95 % confidence interval.
#[test]
fn the_band_can_be_a_confidence_interval() {
    let svg = sensitivity_svg_styled(
        "t",
        &styled(AxisKind::Number, AxisKind::Number, Band::Ci95),
        &lines(),
    )
    .unwrap();
    let (texts, _) = inspect(&svg);
    assert!(
        texts
            .iter()
            .any(|t| t.contains("95 % confidence interval of the mean")),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("min–max")));
}
