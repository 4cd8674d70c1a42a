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
