//! A generic two-axis plot: a titled frame with labelled axes and ticks, a legend, and
//! layers of marks (grouped or stacked bars with whiskers, lines with markers, horizontal
//! reference levels). The y axis is linear from zero, or logarithmic over whole decades
//! for values that span several; the x axis is either categories (one band per bar group)
//! or a linear scale.
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

/// How the y axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YScale {
    /// From zero to a round number above every value.
    Linear,
    /// Whole decades around every positive value; bars rise from the lowest decade.
    Log,
}

/// One bar per category, optionally with a whisker (e.g. min–max or quartiles).
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
    pub y_scale: YScale,
    pub bars: Vec<BarSeries>,
    /// Write each bar's value above it.
    pub bar_labels: bool,
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
    /// 0 on a linear axis, the lowest decade on a logarithmic one.
    y_min: f64,
    y_max: f64,
    y_scale: YScale,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        let span = (self.x_max - self.x_min).max(f64::MIN_POSITIVE);
        LEFT + (x - self.x_min) / span * (WIDTH - LEFT - RIGHT)
    }

    fn py(&self, y: f64) -> f64 {
        let share = match self.y_scale {
            YScale::Linear => y / self.y_max,
            YScale::Log => {
                let y = y.max(self.y_min);
                (y / self.y_min).log10() / (self.y_max / self.y_min).log10()
            }
        };
        HEIGHT - BOTTOM - share * (HEIGHT - TOP - BOTTOM)
    }

    /// The y ticks: round values on a linear axis, 1, 2 and 5 per decade on a log one.
    fn y_ticks(&self) -> Vec<f64> {
        match self.y_scale {
            YScale::Linear => ticks(0.0, self.y_max),
            YScale::Log => {
                let first = self.y_min.log10().round() as i32;
                let last = self.y_max.log10().round() as i32;
                (first..=last)
                    .flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k)))
                    .filter(|t| *t <= self.y_max * (1.0 + 1e-9))
                    .collect()
            }
        }
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
    trimmed(&format!("{value:.3}"))
}

/// A decimal number without trailing zeros after its point.
fn trimmed(text: &str) -> String {
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    };
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// A positive value with `digits` significant digits and no exponent.
pub fn significant(value: f64, digits: i32) -> String {
    if !value.is_finite() || value <= 0.0 {
        return tick_label(value);
    }
    let decimals = (digits - 1 - value.log10().floor() as i32).max(0) as usize;
    format!("{value:.decimals$}")
}

/// Every value the plot draws against the y axis.
fn y_values(plot: &Plot) -> Vec<f64> {
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
    values.extend(
        (plot.bars.iter())
            .flat_map(|b| b.whiskers.iter().flatten())
            .map(|w| w.0),
    );
    values.retain(|v| v.is_finite());
    values
}

/// The y range: from zero to a round number above every value, or the decades around
/// every positive value.
fn y_range(plot: &Plot) -> (f64, f64) {
    let values = y_values(plot);
    let max = values.iter().copied().fold(0.0, f64::max);
    match plot.y_scale {
        YScale::Linear => (0.0, round_up(max * 1.05)),
        YScale::Log => {
            let min = (values.iter().copied())
                .filter(|v| *v > 0.0)
                .fold(f64::INFINITY, f64::min);
            if min.is_finite() {
                let low = 10f64.powf(min.log10().floor());
                let high = 10f64.powf((max * 1.05).log10().ceil());
                (low, high.max(low * 10.0))
            } else {
                (1.0, 10.0)
            }
        }
    }
}

fn stack_height(bars: &[BarSeries], i: usize) -> f64 {
    bars.iter()
        .filter_map(|b| b.values.get(i))
        .filter(|v| v.is_finite())
        .sum()
}

fn frame(plot: &Plot) -> Frame {
    let (y_min, y_max) = y_range(plot);
    let (x_min, x_max) = match &plot.x {
        XAxis::Categories(labels) => (-0.5, labels.len() as f64 - 0.5),
        XAxis::Linear => {
            let xs = || plot.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
            let x_min = xs().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
            let x_max = xs()
                .filter(|x| x.is_finite())
                .fold(f64::NEG_INFINITY, f64::max);
            if x_min < x_max {
                (x_min, x_max)
            } else {
                (0.0, 1.0)
            }
        }
    };
    Frame {
        x_min,
        x_max,
        y_min,
        y_max,
        y_scale: plot.y_scale,
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
    for t in f.y_ticks() {
        let y = f.py(t);
        let label = match f.y_scale {
            YScale::Linear => tick_label(t),
            YScale::Log => trimmed(&significant(t, 2)),
        };
        svg.line((LEFT, y), (WIDTH - RIGHT, y), grid, "grid");
        svg.text((LEFT - 6.0, y + 4.0), &label, Anchor::End, 11.0);
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
        grouped_bars(svg, f, &plot.bars, plot.bar_labels);
    }
}

fn grouped_bars(svg: &mut Svg, f: &Frame, series: &[BarSeries], labels: bool) {
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
                height: f.py(f.y_min) - top,
            };
            svg.rect(r, s.color, "bar", Some(v));
            let mut label_y = top;
            if let Some((low, high)) = s.whiskers.as_ref().and_then(|w| w.get(i)) {
                whisker(svg, f, x + width * 0.46, (*low, *high));
                label_y = label_y.min(f.py(*high));
            }
            if labels && v.is_finite() {
                let at = (x + width * 0.46, label_y - 5.0);
                svg.text(at, &significant(v, 3), Anchor::Middle, 10.0);
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

/// How a legend entry shows its series.
enum Key {
    Swatch(&'static str),
    Stroke(Stroke),
}

/// One legend entry per bar series, line and level, in a row under the title that wraps
/// onto a second row when it would pass the right edge.
fn legend(svg: &mut Svg, plot: &Plot) {
    let entries = (plot.bars.iter())
        .map(|b| (Key::Swatch(b.color), b.name.as_str()))
        .chain((plot.lines.iter()).map(|l| (Key::Stroke(l.stroke), l.name.as_str())))
        .chain((plot.levels.iter()).map(|l| (Key::Stroke(l.stroke), l.name.as_str())));
    let (mut x, mut y) = (LEFT, 48.0);
    for (key, name) in entries {
        let width = 20.0 + 7.0 * name.chars().count() as f64;
        if x > LEFT && x + width > WIDTH - RIGHT {
            (x, y) = (LEFT, y + 16.0);
        }
        match key {
            Key::Swatch(color) => {
                let swatch = Rect {
                    x,
                    y: y - 10.0,
                    width: 12.0,
                    height: 12.0,
                };
                svg.rect(swatch, color, "legend-swatch", None);
            }
            Key::Stroke(stroke) => {
                svg.line((x, y - 4.0), (x + 14.0, y - 4.0), stroke, "legend-line");
            }
        }
        svg.text((x + 18.0, y), name, Anchor::Start, 12.0);
        x += width + 16.0;
    }
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
        assert_eq!(significant(0.018_831, 3), "0.0188");
        assert_eq!(significant(3.438_83, 3), "3.44");
        assert_eq!(significant(1234.5, 3), "1234");
    }

    #[test]
    fn a_log_axis_spans_whole_decades_with_bars_from_the_bottom() {
        let plot = Plot {
            title: "log".into(),
            x_label: "case".into(),
            y_label: "time (ms)".into(),
            x: XAxis::Categories(vec!["a".into(), "b".into()]),
            y_scale: YScale::Log,
            bars: vec![BarSeries {
                name: "s".into(),
                color: PALETTE[0],
                values: vec![0.0188, 4.49],
                whiskers: Some(vec![(0.0187, 0.019), (4.48, 4.5)]),
            }],
            bar_labels: true,
            stacked: false,
            lines: vec![],
            levels: vec![],
        };
        let (low, high) = y_range(&plot);
        assert!((low - 0.01).abs() < 1e-12 && (high - 10.0).abs() < 1e-9);
        let f = frame(&plot);
        assert_eq!(f.y_ticks().len(), 10, "1, 2, 5 × 0.01 … 1, and 10");
        assert!((f.py(0.01) - (HEIGHT - BOTTOM)).abs() < 1e-9);
        assert!((f.py(10.0) - TOP).abs() < 1e-9);
        let svg = render(&plot);
        assert_eq!(svg.matches("class=\"bar\"").count(), 2);
        assert!(svg.contains(">0.0188<") && svg.contains(">4.49<"), "{svg}");
        assert!(
            svg.contains(">0.01<") && svg.contains(">10<"),
            "decade ticks: {svg}"
        );
    }

    #[test]
    fn an_empty_plot_still_draws_axes() {
        let plot = Plot {
            title: "empty".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x: XAxis::Linear,
            y_scale: YScale::Linear,
            bars: vec![],
            bar_labels: false,
            stacked: false,
            lines: vec![],
            levels: vec![],
        };
        let svg = render(&plot);
        assert!(svg.contains("class=\"axis\"") && !svg.contains("class=\"bar\""));
    }
}
