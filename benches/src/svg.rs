//! Charts as hand-written SVG. [`log_log_chart`] draws lines on log-scale
//! axes (the amq-lsm hash-sharing curves). The space/FPR chart
//! ([`space_fpr_chart`]): bits per key on x, measured
//! FPR on a log-scale y, one numbered point per filter, and two reference
//! curves:
//!
//! * the information-theoretic bound: a filter with false-positive rate ε
//!   needs at least log2(1/ε) bits per key (Carter et al. 1978), so
//!   ε = 2^(-bits);
//! * the standard Bloom filter at its optimal k needs log2(e) · log2(1/ε)
//!   ≈ 1.44 · log2(1/ε) bits per key, so ε = 2^(-bits / 1.44).
//!
//! A filter with no false positive among the absent keys is drawn hollow at
//! 1/absent, the resolution of the measurement (its true FPR is below).

use std::fmt::Write as _;

use crate::report::Row;

/// One filter on the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The filter's name.
    pub label: String,
    /// Bits per key (x).
    pub bits_per_key: f64,
    /// Measured FPR (y), or the measurement's resolution when `below`.
    pub fpr: f64,
    /// No false positive was seen: the true FPR is below `fpr`.
    pub below: bool,
    /// One of amq's filters (drawn in a different colour).
    pub ours: bool,
}

impl Point {
    /// The point for a report row.
    pub fn from_row(row: &Row) -> Self {
        let below = row.false_positives == 0;
        Point {
            label: row.name.to_string(),
            bits_per_key: row.bits_per_key,
            fpr: if below {
                1.0 / row.absent.max(1) as f64
            } else {
                row.fpr()
            },
            below,
            ours: row.ours,
        }
    }
}

const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 600.0;
const LEFT: f64 = 80.0;
const TOP: f64 = 50.0;
const PLOT_W: f64 = 560.0;
const PLOT_H: f64 = 480.0;
const OURS: &str = "#c0392b";
const THEIRS: &str = "#2471a3";
/// log2(e): the standard Bloom filter's space factor over the bound.
const BLOOM_FACTOR: f64 = std::f64::consts::LOG2_E;

/// `1234567` as `1,234,567`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// The chart for `points`, titled with `title`.
pub fn space_fpr_chart(title: &str, points: &[Point]) -> String {
    let max_bits = points.iter().map(|p| p.bits_per_key).fold(10.0, f64::max);
    let x_max = (max_bits / 5.0).ceil() * 5.0 + 5.0;
    let min_log = points.iter().map(|p| p.fpr.log10()).fold(-3.0, f64::min);
    let max_log = points.iter().map(|p| p.fpr.log10()).fold(-1.0, f64::max);
    // A little room below the lowest point so a hollow point is not on the axis.
    let (y_lo, y_hi) = ((min_log - 0.3).floor(), max_log.ceil().min(0.0));
    let x = |bits: f64| LEFT + bits / x_max * PLOT_W;
    let y = |fpr: f64| TOP + (y_hi - fpr.log10()) / (y_hi - y_lo) * PLOT_H;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<clipPath id="plot"><rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}"/></clipPath>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="28" font-size="16" text-anchor="middle">{}</text>"#,
        LEFT + PLOT_W / 2.0,
        escape(title)
    );

    // Grid and axes: a line per 5 bits/key and per decade of FPR.
    let mut bits = 0.0;
    while bits <= x_max {
        let px = x(bits);
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{}" stroke="#ddd"/><text x="{px:.1}" y="{}" text-anchor="middle">{bits}</text>"##,
            TOP + PLOT_H,
            TOP + PLOT_H + 18.0
        );
        bits += 5.0;
    }
    let mut decade = y_lo;
    while decade <= y_hi {
        let py = y(10f64.powf(decade));
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{py:.1}" x2="{}" y2="{py:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">10<tspan dy="-6" font-size="9">{decade}</tspan></text>"##,
            LEFT + PLOT_W,
            LEFT - 8.0,
            py + 4.0
        );
        decade += 1.0;
    }
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">bits per key</text>"#,
        LEFT + PLOT_W / 2.0,
        TOP + PLOT_H + 42.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(22 {}) rotate(-90)" text-anchor="middle">false-positive rate (log scale)</text>"#,
        TOP + PLOT_H / 2.0
    );

    // Reference curves, clipped to the plot.
    for (factor, dash, name) in [
        (1.0, "", "bound"),
        (BLOOM_FACTOR, r#" stroke-dasharray="6 4""#, "bloom"),
    ] {
        let path: Vec<String> = (0..=(x_max * 10.0) as usize)
            .map(|i| {
                let b = i as f64 / 10.0;
                format!("{:.1},{:.1}", x(b), y(2f64.powf(-b / factor)))
            })
            .collect();
        let _ = writeln!(
            s,
            r##"<polyline class="{name}" clip-path="url(#plot)" fill="none" stroke="#555"{dash} points="{}"/>"##,
            path.join(" ")
        );
    }

    // Points, numbered, with the legend on the right.
    let legend_x = LEFT + PLOT_W + 24.0;
    // Other crates' points first, so ours are drawn on top where they overlap.
    let numbered = || points.iter().enumerate().map(|(i, p)| (i + 1, p));
    // Points first (theirs, then ours on top), then one label per cluster of
    // points that (nearly) coincide, listing their numbers: "1,2,5".
    let theirs_then_ours = numbered()
        .filter(|(_, p)| !p.ours)
        .chain(numbered().filter(|(_, p)| p.ours));
    for (_, p) in theirs_then_ours {
        let colour = if p.ours { OURS } else { THEIRS };
        let fill = if p.below { "white" } else { colour };
        let (px, py) = (x(p.bits_per_key), y(p.fpr));
        let _ = writeln!(
            s,
            r#"<circle class="point" cx="{px:.1}" cy="{py:.1}" r="4.5" fill="{fill}" stroke="{colour}" stroke-width="1.5"/>"#
        );
    }
    // Clusters: a point joins the first cluster whose anchor is within 9 px.
    let mut clusters: Vec<((f64, f64), Vec<usize>)> = Vec::new();
    for (number, p) in numbered() {
        let (px, py) = (x(p.bits_per_key), y(p.fpr));
        match clusters
            .iter_mut()
            .find(|((cx, cy), _)| (cx - px).abs() < 9.0 && (cy - py).abs() < 9.0)
        {
            Some((_, members)) => members.push(number),
            None => clusters.push(((px, py), vec![number])),
        }
    }
    let mut placed: Vec<(f64, f64, f64)> = Vec::new(); // (x, y, width) of labels set so far
    for ((px, py), members) in &clusters {
        let text = members
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let width = 6.0 * text.len() as f64;
        let (lx, mut ly) = (px + 7.0, py - 5.0);
        // Move down past any label this one would overlap.
        while placed
            .iter()
            .any(|&(ox, oy, ow)| lx < ox + ow && ox < lx + width && (oy - ly).abs() < 11.0)
        {
            ly += 11.0;
        }
        placed.push((lx, ly, width));
        let all_ours = members.iter().all(|&n| points[n - 1].ours);
        let colour = if all_ours { OURS } else { "#333" };
        let _ = writeln!(
            s,
            r#"<text x="{lx:.1}" y="{ly:.1}" font-size="10" fill="{colour}">{text}</text>"#
        );
    }
    for (number, p) in numbered() {
        let colour = if p.ours { OURS } else { THEIRS };
        let fpr = match (p.below, p.fpr) {
            (true, fpr) => format!("&lt; {fpr:.1e}"),
            (false, fpr) if fpr >= 1e-3 => format!("{:.3}%", fpr * 100.0),
            (false, fpr) => format!("{fpr:.2e}"),
        };
        let _ = writeln!(
            s,
            r#"<text x="{legend_x}" y="{:.1}" fill="{colour}">{number}. {} — {:.2} b/key, {}</text>"#,
            TOP + 14.0 + (number - 1) as f64 * 17.0,
            escape(&p.label),
            p.bits_per_key,
            fpr
        );
    }
    let key_y = TOP + 14.0 + points.len() as f64 * 17.0 + 20.0;
    let _ = writeln!(
        s,
        r##"<line x1="{legend_x}" y1="{key_y}" x2="{}" y2="{key_y}" stroke="#555"/><text x="{}" y="{:.1}">bound: log2(1/FPR) bits/key</text>"##,
        legend_x + 30.0,
        legend_x + 36.0,
        key_y + 4.0
    );
    let _ = writeln!(
        s,
        r##"<line x1="{legend_x}" y1="{}" x2="{}" y2="{}" stroke="#555" stroke-dasharray="6 4"/><text x="{}" y="{:.1}">standard Bloom: 1.44·log2(1/FPR)</text>"##,
        key_y + 18.0,
        legend_x + 30.0,
        key_y + 18.0,
        legend_x + 36.0,
        key_y + 22.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{legend_x}" y="{:.1}" font-size="11">red: amq, blue: other crates, grey label: both;</text><text x="{legend_x}" y="{:.1}" font-size="11">hollow: no false positive seen, drawn at 1/(absent)</text>"#,
        key_y + 44.0,
        key_y + 58.0
    );
    s.push_str("</svg>\n");
    s
}

/// One line of a [`log_log_chart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's text.
    pub label: String,
    /// A CSS colour.
    pub colour: String,
    /// Drawn dashed (e.g. the variant compared against).
    pub dashed: bool,
    /// Drawn thin and dotted, without point markers (a reference line).
    pub reference: bool,
    /// (x, y) points, x increasing, all positive.
    pub points: Vec<(f64, f64)>,
}

/// A line chart with log-scale axes (a grid line per power of 2 on x, per
/// 1-2-5 step on y), one polyline per series and the legend on the right.
pub fn log_log_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let all = || series.iter().flat_map(|s| s.points.iter().copied());
    let x_lo = all().map(|p| p.0.log2()).fold(f64::INFINITY, f64::min).floor();
    let x_hi = all().map(|p| p.0.log2()).fold(f64::NEG_INFINITY, f64::max).ceil();
    let y_lo = all().map(|p| p.1.log10()).fold(f64::INFINITY, f64::min).floor();
    let y_hi = all()
        .map(|p| p.1.log10())
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil();
    let (x_hi, y_hi) = (x_hi.max(x_lo + 1.0), y_hi.max(y_lo + 1.0));
    let x = |v: f64| LEFT + (v.log2() - x_lo) / (x_hi - x_lo) * PLOT_W;
    let y = |v: f64| TOP + (y_hi - v.log10()) / (y_hi - y_lo) * PLOT_H;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="28" font-size="16" text-anchor="middle">{}</text>"#,
        LEFT + PLOT_W / 2.0,
        escape(title)
    );
    let mut e = x_lo;
    while e <= x_hi {
        let px = x(2f64.powf(e));
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{}" stroke="#ddd"/><text x="{px:.1}" y="{}" text-anchor="middle">{}</text>"##,
            TOP + PLOT_H,
            TOP + PLOT_H + 18.0,
            2f64.powf(e)
        );
        e += 1.0;
    }
    let mut decade = y_lo;
    while decade < y_hi + 0.5 {
        for step in [1.0, 2.0, 5.0] {
            let v = step * 10f64.powf(decade);
            if v.log10() > y_hi + 1e-9 {
                break;
            }
            let py = y(v);
            let colour = if step == 1.0 { "#bbb" } else { "#eee" };
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{py:.1}" x2="{}" y2="{py:.1}" stroke="{colour}"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + PLOT_W,
                LEFT - 8.0,
                py + 4.0,
                v
            );
        }
        decade += 1.0;
    }
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + PLOT_W / 2.0,
        TOP + PLOT_H + 42.0,
        escape(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(22 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + PLOT_H / 2.0,
        escape(y_label)
    );
    let legend_x = LEFT + PLOT_W + 24.0;
    for (i, line) in series.iter().enumerate() {
        let dash = match (line.reference, line.dashed) {
            (true, _) => r#" stroke-dasharray="2 3""#,
            (false, true) => r#" stroke-dasharray="7 4""#,
            (false, false) => "",
        };
        let width = if line.reference { 1.0 } else { 2.0 };
        let points: Vec<String> = line
            .points
            .iter()
            .map(|&(px, py)| format!("{:.1},{:.1}", x(px), y(py)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline class="series" fill="none" stroke="{}" stroke-width="{width}"{dash} points="{}"/>"#,
            line.colour,
            points.join(" ")
        );
        if !line.reference {
            for &(px, py) in &line.points {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                    x(px),
                    y(py),
                    line.colour
                );
            }
        }
        let ly = TOP + 14.0 + i as f64 * 18.0;
        let _ = writeln!(
            s,
            r#"<line x1="{legend_x}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="{}" stroke-width="{width}"{dash}/><text x="{}" y="{:.1}">{}</text>"#,
            ly - 4.0,
            legend_x + 30.0,
            ly - 4.0,
            line.colour,
            legend_x + 36.0,
            ly,
            escape(&line.label)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(label: &str, bits: f64, fpr: f64, below: bool) -> Point {
        Point {
            label: label.into(),
            bits_per_key: bits,
            fpr,
            below,
            ours: label.starts_with("amq"),
        }
    }

    #[test]
    fn chart_has_a_point_per_filter_and_both_curves() {
        let svg = space_fpr_chart(
            "n = 1000",
            &[
                point("amq-Xor8", 9.8, 0.0039, false),
                point("xorf-BinaryFuse32", 36.2, 1e-6, true),
            ],
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches(r#"class="point""#).count(), 2);
        assert!(svg.contains(r#"class="bound""#) && svg.contains(r#"class="bloom""#));
        assert!(svg.contains(OURS) && svg.contains(THEIRS));
        assert!(svg.contains("1. amq-Xor8 — 9.80 b/key, 0.390%"));
        assert!(svg.contains("2. xorf-BinaryFuse32 — 36.20 b/key, &lt; 1.0e-6"));
    }

    #[test]
    fn log_log_chart_draws_every_series() {
        let line = |label: &str, reference| Series {
            label: label.into(),
            colour: "#123456".into(),
            dashed: false,
            reference,
            points: vec![(1.0, 120.0), (4.0, 300.0), (256.0, 9_000.0)],
        };
        let svg = log_log_chart("t", "tables", "ns", &[line("shared", false), line("1.2x", true)]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches(r#"class="series""#).count(), 2);
        // Markers on the measured series only.
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains(">256</text>") && svg.contains(">10000</text>"));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(10_000_000), "10,000,000");
    }

    #[test]
    fn points_stay_inside_the_plot() {
        let svg = space_fpr_chart("t", &[point("a", 1.0, 0.5, false), point("b", 40.0, 1e-9, true)]);
        for circle in svg.split(r#"class="point" "#).skip(1) {
            let num = |attr: &str| -> f64 {
                let rest = &circle[circle.find(attr).unwrap() + attr.len()..];
                rest[..rest.find('"').unwrap()].parse().unwrap()
            };
            let (cx, cy) = (num("cx=\""), num("cy=\""));
            assert!((LEFT..=LEFT + PLOT_W).contains(&cx), "{cx}");
            assert!((TOP..=TOP + PLOT_H).contains(&cy), "{cy}");
        }
    }
}
