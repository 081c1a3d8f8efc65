//! A generic two-axis plot: a titled frame with labelled axes and ticks, a legend, and
//! layers of marks (grouped or stacked bars with whiskers, lines with markers, horizontal
//! reference levels). The y axis always starts at zero; the x axis is either categories
//! (one band per bar group) or a linear scale.
use super::svg::{Anchor, Rect, Stroke, Svg};

const WIDTH: f64 = 820.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 58.0;
/// Most category labels written under the x axis; the rest are skipped evenly.
const MAX_CATEGORY_LABELS: usize = 17;

/// Colours for series, in order.
pub const PALETTE: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1",
];

/// What the x axis shows.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// One band per label; line points use the band index as x.
    Categories(Vec<String>),
    /// A continuous scale over the lines' x values.
    Linear,
}

/// One bar per category, optionally with a min–max whisker.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub color: &'static str,
    pub values: Vec<f64>,
    /// `(low, high)` per category.
    pub whiskers: Option<Vec<(f64, f64)>>,
}

/// A polyline through points, with a dot on each.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub stroke: Stroke,
    pub points: Vec<(f64, f64)>,
    pub markers: bool,
}

/// A horizontal reference line across the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub name: String,
    pub stroke: Stroke,
    pub y: f64,
}

/// Everything one chart shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x: XAxis,
    pub bars: Vec<BarSeries>,
    /// Stack the bar series instead of placing them side by side.
    pub stacked: bool,
    pub lines: Vec<Line>,
    pub levels: Vec<Level>,
}

/// Maps data to pixels inside the plot area.
#[derive(Debug, Clone, Copy)]
struct Frame {
    x_min: f64,
    x_max: f64,
    y_max: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        let span = (self.x_max - self.x_min).max(f64::MIN_POSITIVE);
        LEFT + (x - self.x_min) / span * (WIDTH - LEFT - RIGHT)
    }

    fn py(&self, y: f64) -> f64 {
        HEIGHT - BOTTOM - y / self.y_max * (HEIGHT - TOP - BOTTOM)
    }
}

/// A round step (1, 2 or 5 × 10^k) that cuts `span` into about five parts.
fn tick_step(span: f64) -> f64 {
    let raw = span / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// About five round tick values covering `min..=max`.
pub fn ticks(min: f64, max: f64) -> Vec<f64> {
    let span = max - min;
    if !span.is_finite() || span <= 0.0 {
        return vec![min];
    }
    let step = tick_step(span);
    let first = (min / step).ceil() as i64;
    let last = (max / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// The first round tick at or above `max` (> 0), so an axis can end on a labelled tick.
pub fn round_up(max: f64) -> f64 {
    if !max.is_finite() || max <= 0.0 {
        return 1.0;
    }
    let step = tick_step(max);
    (max / step - 1e-9).ceil() * step
}

/// A tick value without needless decimals.
pub fn tick_label(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// The top of the y axis: a round number above every value drawn.
fn y_top(plot: &Plot) -> f64 {
    let mut values: Vec<f64> = Vec::new();
    if plot.stacked {
        let n = plot.bars.iter().map(|b| b.values.len()).max().unwrap_or(0);
        values.extend((0..n).map(|i| stack_height(&plot.bars, i)));
    } else {
        for b in &plot.bars {
            values.extend(&b.values);
            values.extend(b.whiskers.iter().flatten().map(|w| w.1));
        }
    }
    values.extend(plot.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
    values.extend(plot.levels.iter().map(|l| l.y));
    let max = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    round_up(max * 1.05)
}

fn stack_height(bars: &[BarSeries], i: usize) -> f64 {
    bars.iter()
        .filter_map(|b| b.values.get(i))
        .filter(|v| v.is_finite())
        .sum()
}

fn frame(plot: &Plot) -> Frame {
    let y_max = y_top(plot);
    match &plot.x {
        XAxis::Categories(labels) => Frame {
            x_min: -0.5,
            x_max: labels.len() as f64 - 0.5,
            y_max,
        },
        XAxis::Linear => {
            let xs = || plot.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
            let x_min = xs().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
            let x_max = xs()
                .filter(|x| x.is_finite())
                .fold(f64::NEG_INFINITY, f64::max);
            if x_min < x_max {
                Frame {
                    x_min,
                    x_max,
                    y_max,
                }
            } else {
                Frame {
                    x_min: 0.0,
                    x_max: 1.0,
                    y_max,
                }
            }
        }
    }
}

/// Draw `plot` as an SVG document.
pub fn render(plot: &Plot) -> String {
    let mut svg = Svg::new(WIDTH, HEIGHT, &plot.title);
    let f = frame(plot);
    svg.text((WIDTH / 2.0, 24.0), &plot.title, Anchor::Middle, 16.0);
    y_axis(&mut svg, &f, &plot.y_label);
    x_axis(&mut svg, &f, plot);
    bars(&mut svg, &f, plot);
    for level in &plot.levels {
        let y = f.py(level.y);
        svg.level(y, (LEFT, WIDTH - RIGHT), level.stroke, "level", level.y);
    }
    for line in &plot.lines {
        draw_line(&mut svg, &f, line);
    }
    legend(&mut svg, plot);
    svg.finish()
}

fn y_axis(svg: &mut Svg, f: &Frame, label: &str) {
    let grid = Stroke::solid("#e3e3e3", 1.0);
    for t in ticks(0.0, f.y_max) {
        let y = f.py(t);
        svg.line((LEFT, y), (WIDTH - RIGHT, y), grid, "grid");
        svg.text((LEFT - 6.0, y + 4.0), &tick_label(t), Anchor::End, 11.0);
    }
    let axis = Stroke::solid("#444", 1.0);
    svg.line((LEFT, TOP), (LEFT, HEIGHT - BOTTOM), axis, "axis");
    svg.vertical_text((18.0, (TOP + HEIGHT - BOTTOM) / 2.0), label, 13.0);
}

fn x_axis(svg: &mut Svg, f: &Frame, plot: &Plot) {
    let base = HEIGHT - BOTTOM;
    let axis = Stroke::solid("#444", 1.0);
    svg.line((LEFT, base), (WIDTH - RIGHT, base), axis, "axis");
    match &plot.x {
        XAxis::Categories(labels) => {
            let every = labels.len().div_ceil(MAX_CATEGORY_LABELS).max(1);
            for (i, label) in labels.iter().enumerate().step_by(every) {
                svg.text((f.px(i as f64), base + 16.0), label, Anchor::Middle, 11.0);
            }
        }
        XAxis::Linear => {
            for t in ticks(f.x_min, f.x_max) {
                let x = f.px(t);
                svg.line((x, base), (x, base + 4.0), axis, "tick");
                svg.text((x, base + 16.0), &tick_label(t), Anchor::Middle, 11.0);
            }
        }
    }
    svg.text(
        ((LEFT + WIDTH - RIGHT) / 2.0, HEIGHT - 14.0),
        &plot.x_label,
        Anchor::Middle,
        13.0,
    );
}

/// Width of one category band in pixels.
fn band(f: &Frame) -> f64 {
    f.px(1.0) - f.px(0.0)
}

fn bars(svg: &mut Svg, f: &Frame, plot: &Plot) {
    if plot.stacked {
        stacked_bars(svg, f, &plot.bars);
    } else {
        grouped_bars(svg, f, &plot.bars);
    }
}

fn grouped_bars(svg: &mut Svg, f: &Frame, series: &[BarSeries]) {
    let group = band(f) * 0.8;
    let width = group / series.len().max(1) as f64;
    for (k, s) in series.iter().enumerate() {
        for (i, &v) in s.values.iter().enumerate() {
            let x = f.px(i as f64) - group / 2.0 + k as f64 * width;
            let top = f.py(v.max(0.0));
            let r = Rect {
                x,
                y: top,
                width: width * 0.92,
                height: f.py(0.0) - top,
            };
            svg.rect(r, s.color, "bar", Some(v));
            if let Some((low, high)) = s.whiskers.as_ref().and_then(|w| w.get(i)) {
                whisker(svg, f, x + width * 0.46, (*low, *high));
            }
        }
    }
}

fn whisker(svg: &mut Svg, f: &Frame, x: f64, (low, high): (f64, f64)) {
    let stroke = Stroke::solid("#222", 1.2);
    let cap = 4.0;
    let (y_low, y_high) = (f.py(low), f.py(high));
    svg.line((x, y_low), (x, y_high), stroke, "whisker");
    svg.line((x - cap, y_low), (x + cap, y_low), stroke, "whisker-cap");
    svg.line((x - cap, y_high), (x + cap, y_high), stroke, "whisker-cap");
}

fn stacked_bars(svg: &mut Svg, f: &Frame, series: &[BarSeries]) {
    let width = band(f) * 0.8;
    let n = series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    for i in 0..n {
        let mut bottom = 0.0;
        for s in series {
            let Some(&v) = s.values.get(i).filter(|v| v.is_finite()) else {
                continue;
            };
            let r = Rect {
                x: f.px(i as f64) - width / 2.0,
                y: f.py(bottom + v),
                width,
                height: f.py(bottom) - f.py(bottom + v),
            };
            svg.rect(r, s.color, "bar", Some(v));
            bottom += v;
        }
    }
}

fn draw_line(svg: &mut Svg, f: &Frame, line: &Line) {
    let points: Vec<(f64, f64)> = line
        .points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|&(x, y)| (f.px(x), f.py(y)))
        .collect();
    svg.polyline(&points, line.stroke, "series");
    if line.markers {
        for &p in &points {
            svg.circle(p, 3.5, line.stroke.color, "marker");
        }
    }
}

/// One legend entry per bar series, line and level, in a row under the title.
fn legend(svg: &mut Svg, plot: &Plot) {
    let mut x = LEFT;
    let y = 48.0;
    for b in &plot.bars {
        let swatch = Rect {
            x,
            y: y - 10.0,
            width: 12.0,
            height: 12.0,
        };
        svg.rect(swatch, b.color, "legend-swatch", None);
        x = legend_label(svg, x, y, &b.name);
    }
    let strokes = plot
        .lines
        .iter()
        .map(|l| (l.stroke, l.name.as_str()))
        .chain(plot.levels.iter().map(|l| (l.stroke, l.name.as_str())));
    for (stroke, name) in strokes {
        svg.line(
            (x - 4.0, y - 4.0),
            (x + 16.0, y - 4.0),
            stroke,
            "legend-line",
        );
        x = legend_label(svg, x + 4.0, y, name);
    }
}

/// Write a legend label after its swatch at `x`; the x of the next entry.
fn legend_label(svg: &mut Svg, x: f64, y: f64, name: &str) -> f64 {
    svg.text((x + 16.0, y), name, Anchor::Start, 12.0);
    x + 16.0 + 7.0 * name.chars().count() as f64 + 18.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0, 0.9).last().copied(), Some(0.8));
        assert_eq!(ticks(3.0, 3.0), vec![3.0]);
        assert_eq!(ticks(0.0, f64::NAN), vec![0.0]);
        assert_eq!(round_up(5.36), 6.0);
        assert_eq!(round_up(14.5), 15.0);
        assert_eq!(round_up(10.0), 10.0);
        assert_eq!(round_up(0.0), 1.0);
        assert_eq!(tick_label(2.5), "2.5");
        assert_eq!(tick_label(40.0), "40");
    }

    #[test]
    fn an_empty_plot_still_draws_axes() {
        let plot = Plot {
            title: "empty".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x: XAxis::Linear,
            bars: vec![],
            stacked: false,
            lines: vec![],
            levels: vec![],
        };
        let svg = render(&plot);
        assert!(svg.contains("class=\"axis\"") && !svg.contains("class=\"bar\""));
    }
}
