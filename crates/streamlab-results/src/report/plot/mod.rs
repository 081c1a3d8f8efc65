//! Draws the chart models of [`super::chart`] as standalone SVG documents, with
//! plotters' SVG backend (no font files: the viewer lays out the text). Bad data never
//! panics: non-finite values and, on log axes, values not positive are skipped, and an
//! empty chart still gets its axes and a "no data" note.
//!
//! Every data mark is filled or stroked with exactly its series' colour (plotters writes
//! it upper-case: `"#4e79a7"` appears as `fill="#4E79A7"`), and legend swatches are never
//! rectangles, so the `rect`s filled with a series' colour are exactly its bars.
use chart::{draw_chart, extra_height};
use gantt::draw_gantt;
use heat::draw_heat_map;
mod chart;
pub mod gantt;
mod heat;
mod legend;

use std::error::Error;

use plotters::coord::Shift;
use plotters::prelude::*;
// The model's `Color` (a hex string) takes the name; plotters' trait still lends methods.
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{Chart, Color, Gantt, HeatMap};
use super::text;

/// The size of every document, in pixels.
const SIZE: (u32, u32) = (820, 460);
const FONT: &str = "sans-serif";
/// The largest magnitude drawn (and, on log axes, the reciprocal of the smallest):
/// anything beyond is skipped so that no axis range can overflow.
const LIMIT: f64 = 1e200;
const TEXT: RGBColor = RGBColor(0x1a, 0x1a, 0x1a);
const NOTE: RGBColor = RGBColor(0x66, 0x66, 0x66);
const WHISKER: RGBColor = RGBColor(0x33, 0x33, 0x33);
const MISSING: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const CONTOUR: RGBColor = RGBColor(0x1f, 0x1f, 0x1f);
const MARK: RGBColor = RGBColor(0x5b, 0x1a, 0x8c);
const DIVIDER: RGBColor = RGBColor(0x77, 0x77, 0x77);
/// A concurrency break's line on a timeline.
const BREAK: RGBColor = RGBColor(0xb0, 0x00, 0x20);
/// The heat-map scales: light to strong, at or above the threshold and below it.
const GREEN: (RGBColor, RGBColor) = (RGBColor(0xd9, 0xf0, 0xd3), RGBColor(0x1b, 0x78, 0x37));
const RED: (RGBColor, RGBColor) = (RGBColor(0xfd, 0xd4, 0x9e), RGBColor(0xd7, 0x30, 0x1f));
/// The share of a category slot its bars take.
const GROUP: f64 = 0.8;
/// Pixels around a chart's plotting area and its label areas.
const MARGIN: i32 = 12;
/// The plotters size of tick labels.
const LABEL_SIZE: u32 = 14;

/// What drawing gives: `T` (nothing by default), or plotters' error.
type Drawn<T = ()> = Result<T, Box<dyn Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A bar or line chart as an SVG document: title, axis labels, a legend of the series
/// and levels, bars (grouped, with whiskers), lines and dashed levels.
pub fn chart(c: &Chart) -> String {
    let size = (SIZE.0, SIZE.1 + extra_height(&c.x));
    render(size, |root| draw_chart(root, c))
}

/// A heat map as an SVG document: a cell per row and column with its value written in
/// it, green at or above the threshold and orange to red below it.
pub fn heat_map(h: &HeatMap) -> String {
    render(SIZE, |root| draw_heat_map(root, h))
}

/// A timeline as an SVG document: a row per track, time in ms on x.
pub fn gantt(g: &Gantt) -> String {
    let size = (SIZE.0, gantt::height(g.tracks.len()));
    gantt::with_titles(render(size, |root| draw_gantt(root, g)), g)
}

/// Draws a whole document of `size` pixels; if plotters refuses, a document saying so instead.
fn render(size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> Drawn) -> String {
    match svg_of(size, draw) {
        Ok(svg) => svg,
        Err(e) => {
            let message = format!("this chart could not be drawn: {e}");
            svg_of(size, |root| note(root, &message)).unwrap_or_default()
        }
    }
}

fn svg_of(size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> Drawn) -> Drawn<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(svg)
}

/// Text of plotters size `size` in `color`, anchored at its `h` and `v`.
fn text_style(size: u32, color: &RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(color).pos(Pos::new(h, v))
}

/// Writes `text` in the middle of `area`.
fn note(area: &Area<'_>, text: &str) -> Drawn {
    let (w, h) = area.dim_in_pixel();
    let style = text_style(18, &NOTE, HPos::Center, VPos::Center);
    area.draw_text(text, &style, (w as i32 / 2, h as i32 / 2))?;
    Ok(())
}

/// Writes a centred heading at the top of `area` and returns the rest of it: at `size`
/// where it fits the width, else at the largest size down to three quarters of it that
/// does, else wrapped into lines at that smallest size.
fn titled<'a>(area: &Area<'a>, text: &str, size: u32, color: &RGBColor) -> Drawn<Area<'a>> {
    if text.is_empty() {
        return Ok(area.clone());
    }
    let w = area.dim_in_pixel().0 as i32;
    let room = f64::from(w - 2 * SIDE);
    let smallest = size * 3 / 4;
    let fitting = (smallest..=size)
        .rev()
        .find(|&s| text::width(text, text::px(s)) <= room);
    let (size, lines) = match fitting {
        Some(s) => (s, vec![text.to_owned()]),
        None => (smallest, text::wrap(text, text::px(smallest), room)),
    };
    let line = line_height(size);
    let style = text_style(size, color, HPos::Center, VPos::Top);
    for (i, l) in (0..).zip(&lines) {
        area.draw_text(l, &style, (w / 2, TOP + i * line))?;
    }
    let used = TOP + line * lines.len() as i32 + TOP;
    Ok(area.split_vertically(used).1)
}

/// Blank pixels above a heading and below it.
const TOP: i32 = 5;
/// Pixels left clear at each side of a line of text.
const SIDE: i32 = 8;

/// The pixels one line of text of plotters size `size` takes.
fn line_height(size: u32) -> i32 {
    (text::px(size) * 1.2).ceil() as i32
}

/// A model colour (`#rrggbb`) for plotters; anything else is drawn mid-grey.
fn rgb(c: Color) -> RGBColor {
    let hex = c.strip_prefix('#').filter(|h| h.len() == 6 && h.is_ascii());
    let byte = |i: usize| hex.and_then(|h| u8::from_str_radix(&h[i..i + 2], 16).ok());
    match (byte(0), byte(2), byte(4)) {
        (Some(r), Some(g), Some(b)) => RGBColor(r, g, b),
        _ => RGBColor(0x80, 0x80, 0x80),
    }
}

/// Whether `v` can be placed on a linear (`log` false) or log axis.
fn usable(log: bool, v: f64) -> bool {
    v.is_finite() && v.abs() <= LIMIT && (!log || v >= 1.0 / LIMIT)
}

/// A tick label: about four significant digits, no trailing zeros.
fn tick(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    if !v.is_finite() {
        return v.to_string();
    }
    let mag = v.abs();
    if !(1e-4..1e7).contains(&mag) {
        return format!("{v:.1e}");
    }
    let decimals = (3 - mag.log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A tick label on a base-2 axis: whole multiples of 2^10, 2^20, 2^30 with a binary
/// prefix ("4Ki", "2Mi"), so that long powers of two stay short.
fn tick_binary(v: f64) -> String {
    let prefixes = [(30, "Gi"), (20, "Mi"), (10, "Ki")];
    match prefixes
        .into_iter()
        .map(|(p, name)| (2f64.powi(p), name))
        .find(|(m, _)| v >= *m && v % m == 0.0)
    {
        Some((m, name)) => format!("{}{name}", tick(v / m)),
        None => tick(v),
    }
}

/// The slot a tick at `v` names on a category axis of `n` slots, if it is one.
fn slot(v: f64, n: usize) -> Option<usize> {
    let r = v.round();
    ((v - r).abs() < 1e-6 && r >= 0.0 && r < n as f64).then_some(r as usize)
}

/// The smallest and the largest of `values` (infinities the wrong way round for none).
fn extremes(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    (values.into_iter()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// A continuous axis' range: finite and not empty, positive on a log axis.
#[derive(Debug, Clone, Copy)]
struct Axis {
    lo: f64,
    hi: f64,
}

impl Axis {
    /// The range showing every usable value of `values`, padded: a linear one includes 0
    /// if `zero`, a log one is widened to whole powers of `base`, and where `zero` (an
    /// axis bars stand on) starts a power of `base` below the smallest value, so that the
    /// shortest bar is at least that tall.
    fn fit(log: bool, base: f64, zero: bool, values: impl IntoIterator<Item = f64>) -> Axis {
        let (lo, hi) = extremes(values.into_iter().filter(|&v| usable(log, v)));
        if log {
            if lo > hi {
                return Axis { lo: 1.0, hi: base };
            }
            let power = |v: f64| v.ln() / base.ln();
            let below = if zero { 1.0 } else { 0.0 };
            let mut lo = base.powf((power(lo) - below).floor());
            let mut hi = base.powf(power(hi).ceil());
            if lo >= hi {
                lo /= base;
                hi *= base;
            }
            // A hair wider, so that rounding never drops the end ticks.
            return Axis {
                lo: lo * (1.0 - 1e-9),
                hi: hi * (1.0 + 1e-9),
            };
        }
        let (mut lo, mut hi) = if lo > hi { (0.0, 1.0) } else { (lo, hi) };
        if zero {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        let span = hi - lo;
        if span <= lo.abs().max(hi.abs()) * 1e-9 {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            let lo = if zero && lo == 0.0 { 0.0 } else { lo - pad };
            return Axis { lo, hi: hi + pad };
        }
        let pad = span * 0.05;
        Axis {
            lo: if zero && lo == 0.0 { lo } else { lo - pad },
            hi: if zero && hi == 0.0 { hi } else { hi + pad },
        }
    }

    /// A category axis of `n` slots, slot `i` centred on `i`.
    fn slots(n: usize) -> Axis {
        Axis {
            lo: -0.5,
            hi: n.max(1) as f64 - 0.5,
        }
    }
}

#[cfg(test)]
mod tests;
