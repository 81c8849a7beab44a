//! `--plot FILE.svg`: scheduled and HTTP latency over the run's time, and the percentile
//! distribution of the three latencies, drawn with plotters' SVG backend.

use std::path::Path;

use plotters::prelude::*;

use crate::BenchError;
use crate::stats::{Latency, Record};

/// Most points drawn over time; beyond, each point is the slowest request of its group, so
/// spikes stay visible.
const MAX_POINTS: usize = 6000;

const NINES: [(f64, &str); 6] = [
    (0.0, "0%"),
    (1.0, "90%"),
    (2.0, "99%"),
    (3.0, "99.9%"),
    (4.0, "99.99%"),
    (5.0, "99.999%"),
];

/// Draws the SVG for one phase's records.
pub fn draw(path: &Path, title: &str, records: &[Record]) -> Result<(), BenchError> {
    let err = |e: &dyn std::fmt::Display| BenchError::Plot(e.to_string());
    let root = SVGBackend::new(path, (1100, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (upper, lower) = root.split_vertically(450);

    // Latency over time.
    let group = records.len().div_ceil(MAX_POINTS).max(1);
    let points: Vec<(f64, f64, f64)> = records
        .chunks(group)
        .filter_map(|chunk| {
            chunk.iter().max_by_key(|r| r.scheduled_ns()).map(|r| {
                (
                    r.due_ns as f64 / 1e9,
                    r.scheduled_ns() as f64 / 1e6,
                    r.http_ns as f64 / 1e6,
                )
            })
        })
        .collect();
    let span = points.iter().map(|p| p.0).fold(0.0, f64::max).max(0.001);
    let top = points.iter().map(|p| p.1).fold(0.0, f64::max).max(0.001) * 1.05;
    let caption = if group > 1 {
        format!("{title}: latency over time (slowest of each {group} requests)")
    } else {
        format!("{title}: latency over time")
    };
    let mut chart = ChartBuilder::on(&upper)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..span, 0f64..top)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("time since the first scheduled request (s)")
        .y_desc("latency (ms)")
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.0, p.1), 2, RED.mix(0.5).filled())),
        )
        .map_err(|e| err(&e))?
        .label("scheduled (queue + http)")
        .legend(|(x, y)| Circle::new((x, y), 3, RED.filled()));
    chart
        .draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.0, p.2), 1, BLUE.mix(0.6).filled())),
        )
        .map_err(|e| err(&e))?
        .label("http")
        .legend(|(x, y)| Circle::new((x, y), 3, BLUE.filled()));
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(|e| err(&e))?;

    // Percentile distribution, x in "nines": -log10(1 - q).
    let (mut http, mut queue, mut scheduled) =
        (Latency::default(), Latency::default(), Latency::default());
    for r in records {
        http.record(r.http_ns);
        queue.record(r.queue_ns);
        scheduled.record(r.scheduled_ns());
    }
    let max_nines = if records.len() > 1 {
        (records.len() as f64).log10().clamp(1.0, 5.0)
    } else {
        1.0
    };
    let curve = |l: &Latency| -> Vec<(f64, f64)> {
        (0..=200)
            .map(|i| {
                let x = max_nines * f64::from(i) / 200.0;
                let q = 1.0 - 10f64.powf(-x);
                (x, l.quantile_ms(q.min(1.0)))
            })
            .collect()
    };
    let curves = [
        ("scheduled", curve(&scheduled), RED),
        ("http", curve(&http), BLUE),
        ("queue", curve(&queue), GREEN),
    ];
    let top = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        .max(0.001)
        * 1.05;
    let mut chart = ChartBuilder::on(&lower)
        .caption(
            format!("{title}: latency by percentile"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..max_nines, 0f64..top)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .y_desc("latency (ms)")
        .x_labels(6)
        .x_label_formatter(&|x| {
            NINES
                .iter()
                .find(|(n, _)| (n - x).abs() < 0.05)
                .map_or_else(String::new, |(_, l)| (*l).to_string())
        })
        .draw()
        .map_err(|e| err(&e))?;
    for (name, points, color) in curves {
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
