//! Draws the chart models of [`super::chart`] as standalone SVG documents.
//!
//! Each public function takes one model and returns the text of an SVG document drawn
//! with plotters' SVG backend (no font files: the viewer lays out the text). Bad data
//! never panics: non-finite values are skipped, log axes skip values that are not
//! positive, and an empty chart still gets its axes and a "no data" note.
//!
//! Every data mark is filled (bars, cells, markers) or stroked (lines) with exactly its
//! series' colour. plotters writes colours as upper-case `#RRGGBB` even though the models
//! spell them in lower case, so a model's `"#4e79a7"` appears as `fill="#4E79A7"`.
//! Legend swatches are circles or short lines, never rectangles, so the `rect` elements
//! filled with a series' colour are exactly its bars.
use std::error::Error;

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
// The model's `Color` (a hex string) takes the name; plotters' trait still lends methods.
use plotters::style::Color as _;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{
    Chart, Color, Gantt, GanttBar, HeatMap, Track, XAxis, YScale, kind_color, queued_color,
};
use super::text;
use crate::saved::timeline::{OpKind, TraceSource};

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
/// The heat-map scales: light to strong, at or above the threshold and below it.
const GREEN: (RGBColor, RGBColor) = (RGBColor(0xd9, 0xf0, 0xd3), RGBColor(0x1b, 0x78, 0x37));
const RED: (RGBColor, RGBColor) = (RGBColor(0xfd, 0xd4, 0x9e), RGBColor(0xd7, 0x30, 0x1f));
/// The share of a category slot its bars take.
const GROUP: f64 = 0.8;

type Drawn = Result<(), Box<dyn Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A bar or line chart as an SVG document: title, axis labels, a legend of the series
/// and levels, bars (grouped or stacked, with whiskers), lines and dashed levels.
///
/// On a category axis bar `i` of a series sits in slot `i` (side by side with the other
/// series, or stacked on them: positive values upwards, negative ones downwards), and
/// line points outside the slots are skipped; stacked whiskers are offset by the bar's
/// base. On a linear y axis 0 is always shown; on a log y axis bars start at the axis'
/// bottom, a power of ten at least a decade below the smallest bar. A log x axis has
/// base-2 ticks. Category labels wrap across their slots, or turn where they cannot,
/// and no text overlaps another.
pub fn chart(c: &Chart) -> String {
    render(|root| draw_chart(root, c))
}

/// A heat map as an SVG document: a cell per row and column with its value written in
/// it (grey with "–" where missing), green at or above the threshold and orange to red
/// below it (stronger further from it), a thick contour between the two, and a dark
/// outline around each marked cell.
pub fn heat_map(h: &HeatMap) -> String {
    render(|root| draw_heat_map(root, h))
}

/// A timeline as an SVG document: a row per track (streams, a divider, then engines),
/// time in ms on x, lighter "queued" bars under the execution bars, and which records
/// the times come from under the title.
pub fn gantt(g: &Gantt) -> String {
    render(|root| draw_gantt(root, g))
}

/// Draws a whole document; if plotters refuses, a document saying so instead.
fn render(draw: impl FnOnce(&Area<'_>) -> Drawn) -> String {
    match svg_of(draw) {
        Ok(svg) => svg,
        Err(e) => {
            let message = format!("this chart could not be drawn: {e}");
            svg_of(|root| note(root, &message)).unwrap_or_default()
        }
    }
}

fn svg_of(draw: impl FnOnce(&Area<'_>) -> Drawn) -> Result<String, Box<dyn Error>> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(svg)
}

/// Writes `text` in the middle of `area`.
fn note(area: &Area<'_>, text: &str) -> Drawn {
    let (w, h) = area.dim_in_pixel();
    let style = (FONT, 18)
        .into_font()
        .color(&NOTE)
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text(text, &style, (w as i32 / 2, h as i32 / 2))?;
    Ok(())
}

/// Writes a centred heading at the top of `area` and returns the rest of it: at `size`
/// where it fits the width, else at the largest size down to three quarters of it that
/// does, else wrapped into lines at that smallest size.
fn titled<'a>(
    area: &Area<'a>,
    text: &str,
    size: u32,
    color: &RGBColor,
) -> Result<Area<'a>, Box<dyn Error>> {
    if text.is_empty() {
        return Ok(area.clone());
    }
    let w = area.dim_in_pixel().0 as i32;
    let room = f64::from(w - 2 * SIDE);
    let smallest = size * 3 / 4;
    let (size, lines) = match (smallest..=size)
        .rev()
        .find(|&s| text::width(text, text::px(s)) <= room)
    {
        Some(s) => (s, vec![text.to_owned()]),
        None => (smallest, text::wrap(text, text::px(smallest), room)),
    };
    let line = line_height(size);
    let style = (FONT, size)
        .into_font()
        .color(color)
        .pos(Pos::new(HPos::Center, VPos::Top));
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
        let (lo, hi) = values
            .into_iter()
            .filter(|&v| usable(log, v))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if log {
            if lo > hi {
                return Axis { lo: 1.0, hi: base };
            }
            let power = |v: f64| v.ln() / base.ln();
            let below = if zero { 1.0 } else { 0.0 };
            let (mut lo, mut hi) = (
                base.powf((power(lo) - below).floor()),
                base.powf(power(hi).ceil()),
            );
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
            return if zero && lo == 0.0 {
                Axis { lo: 0.0, hi: pad }
            } else {
                Axis {
                    lo: lo - pad,
                    hi: hi + pad,
                }
            };
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

/// What a legend entry shows before its name.
enum Swatch {
    Dot(RGBColor),
    Dots(Vec<RGBColor>),
    Line {
        color: RGBColor,
        width: u32,
        dashed: bool,
        marker: bool,
    },
}

struct Entry {
    swatch: Swatch,
    label: String,
}

/// The plotters size of legend labels.
const LEGEND_SIZE: u32 = 15;
/// Pixels from an entry's left end to its label.
const SWATCH: i32 = 30;

impl Entry {
    const HEIGHT: i32 = 22;

    fn new(swatch: Swatch, label: impl Into<String>) -> Entry {
        Entry {
            swatch,
            label: label.into(),
        }
    }

    /// The entry's width in pixels, its label on one line.
    fn width(&self) -> i32 {
        SWATCH + text::width(&self.label, text::px(LEGEND_SIZE)).ceil() as i32 + 4
    }

    /// Its label's lines when the entry may be at most `width` pixels wide.
    fn lines(&self, width: i32) -> Vec<String> {
        text::wrap(
            &self.label,
            text::px(LEGEND_SIZE),
            f64::from(width - SWATCH - 4),
        )
    }

    /// Draws the entry with its swatch's left end at `(x, y)`, its label wrapped to
    /// `width`.
    fn draw(&self, area: &Area<'_>, (x, y): (i32, i32), width: i32) -> Drawn {
        match &self.swatch {
            Swatch::Dot(color) => area.draw(&Circle::new((x + 12, y), 5, color.filled()))?,
            Swatch::Dots(colors) => {
                for (i, color) in (0..).zip(colors) {
                    area.draw(&Circle::new((x + 4 + 8 * i, y), 4, color.filled()))?;
                }
            }
            Swatch::Line {
                color,
                width,
                dashed,
                marker,
            } => {
                let style = color.stroke_width(*width);
                if *dashed {
                    for x in [x, x + 9, x + 18] {
                        area.draw(&PathElement::new([(x, y), (x + 6, y)], style))?;
                    }
                } else {
                    area.draw(&PathElement::new([(x, y), (x + 24, y)], style))?;
                }
                if *marker {
                    // Hollow, so that the filled circles of a colour are its markers.
                    area.draw(&Circle::new((x + 12, y), 3, color.stroke_width(2)))?;
                }
            }
        }
        let style = (FONT, LEGEND_SIZE)
            .into_font()
            .color(&TEXT)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, line) in (0..).zip(self.lines(width)) {
            area.draw_text(
                &line,
                &style,
                (x + SWATCH, y + i * line_height(LEGEND_SIZE)),
            )?;
        }
        Ok(())
    }
}

/// Draws `entries` in a column on the right of `area` and returns the rest of it.
fn legend_right<'a>(area: &Area<'a>, entries: &[Entry]) -> Result<Area<'a>, Box<dyn Error>> {
    if entries.is_empty() {
        return Ok(area.clone());
    }
    let w = area.dim_in_pixel().0 as i32;
    let width = (entries.iter().map(Entry::width).max().unwrap_or(0) + 4 + SIDE)
        .max(120)
        .min(w / 3);
    let (rest, legend) = area.split_horizontally(w - width);
    let room = width - 4 - SIDE;
    let mut y = 40;
    for entry in entries {
        entry.draw(&legend, (4, y), room)?;
        y += Entry::HEIGHT + line_height(LEGEND_SIZE) * (entry.lines(room).len() as i32 - 1);
    }
    Ok(rest)
}

/// Draws `entries` in rows across the top of `area` and returns the rest of it.
fn legend_top<'a>(area: &Area<'a>, entries: &[Entry]) -> Result<Area<'a>, Box<dyn Error>> {
    if entries.is_empty() {
        return Ok(area.clone());
    }
    let w = area.dim_in_pixel().0 as i32;
    let (left, gap) = (60, 18);
    let (mut x, mut y) = (left, Entry::HEIGHT / 2);
    let mut places = Vec::with_capacity(entries.len());
    for entry in entries {
        if x > left && x + entry.width() > w {
            (x, y) = (left, y + Entry::HEIGHT);
        }
        places.push((x, y));
        x += entry.width() + gap;
    }
    let (legend, rest) = area.split_vertically(y + Entry::HEIGHT / 2 + 4);
    for (entry, &place) in entries.iter().zip(&places) {
        // An entry's row was chosen to hold it on one line: it wraps only where no row
        // can, at the canvas' edge.
        entry.draw(&legend, place, (w - place.0 - SIDE).max(entry.width()))?;
    }
    Ok(rest)
}

/// A bar in data coordinates; `bottom` is `None` where it starts at the axis (log y).
struct Bar {
    x0: f64,
    x1: f64,
    bottom: Option<f64>,
    top: f64,
}

/// A whisker at `x` from `lo` to `hi`.
struct Whisker {
    x: f64,
    lo: f64,
    hi: f64,
}

/// The drawable marks of a chart, each series' in model order, bad values left out.
struct Plan {
    x: Axis,
    y: Axis,
    bars: Vec<Vec<Bar>>,
    whiskers: Vec<Vec<Whisker>>,
    /// Per line series, its runs of consecutive usable points.
    lines: Vec<Vec<Vec<(f64, f64)>>>,
    levels: Vec<Option<f64>>,
    /// Per band, its ends where both are usable.
    bands: Vec<Option<(f64, f64)>>,
}

impl Plan {
    fn new(c: &Chart) -> Plan {
        let y_log = c.y_scale == YScale::Log;
        let slots = match &c.x {
            XAxis::Categories(labels) => {
                let longest = c.bars.iter().map(|s| s.values.len()).max().unwrap_or(0);
                Some(labels.len().max(longest).max(1))
            }
            XAxis::Linear | XAxis::Log => None,
        };
        let x_log = c.x == XAxis::Log;
        let x_ok = |x: f64| match slots {
            Some(n) => x.is_finite() && (-0.5..=n as f64 - 0.5).contains(&x),
            None => usable(x_log, x),
        };
        let y_ok = |y: f64| usable(y_log, y);

        let width = if c.stacked {
            GROUP
        } else {
            GROUP / c.bars.len().max(1) as f64
        };
        let (mut up, mut down) = (Vec::<f64>::new(), Vec::<f64>::new());
        let (mut bars, mut whiskers) = (Vec::new(), Vec::new());
        for (s, series) in c.bars.iter().enumerate() {
            let (mut these, mut their_whiskers) = (Vec::new(), Vec::new());
            for (i, &v) in series.values.iter().enumerate() {
                let x0 = i as f64 - GROUP / 2.0 + if c.stacked { 0.0 } else { s as f64 * width };
                let x1 = x0 + width;
                if !(x_ok(x0) && x_ok(x1) && y_ok(v)) {
                    continue;
                }
                if up.len() <= i {
                    up.resize(i + 1, 0.0);
                    down.resize(i + 1, 0.0);
                }
                let stack = if v >= 0.0 { &mut up[i] } else { &mut down[i] };
                let base = if c.stacked { *stack } else { 0.0 };
                let top = base + v;
                if !y_ok(top) {
                    continue;
                }
                if c.stacked {
                    *stack = top;
                }
                let bottom = (!(y_log && base == 0.0)).then_some(base);
                these.push(Bar {
                    x0,
                    x1,
                    bottom,
                    top,
                });
                if let Some(&(lo, hi)) = series.whiskers.as_ref().and_then(|w| w.get(i)) {
                    let (lo, hi) = (base + lo, base + hi);
                    if y_ok(lo) && y_ok(hi) {
                        let x = (x0 + x1) / 2.0;
                        their_whiskers.push(Whisker {
                            x,
                            lo: lo.min(hi),
                            hi: lo.max(hi),
                        });
                    }
                }
            }
            bars.push(these);
            whiskers.push(their_whiskers);
        }
        let lines: Vec<Vec<Vec<(f64, f64)>>> = c
            .lines
            .iter()
            .map(|l| {
                l.points
                    .split(|&(x, y)| !(x_ok(x) && y_ok(y)))
                    .filter(|run| !run.is_empty())
                    .map(<[_]>::to_vec)
                    .collect()
            })
            .collect();
        let levels: Vec<Option<f64>> = c.levels.iter().map(|l| y_ok(l.y).then_some(l.y)).collect();
        let bands: Vec<Option<(f64, f64)>> = (c.bands.iter())
            .map(|b| (y_ok(b.lo) && y_ok(b.hi)).then_some((b.lo.min(b.hi), b.lo.max(b.hi))))
            .collect();

        let x = match slots {
            Some(n) => Axis::slots(n),
            None => {
                let bar_xs = bars.iter().flatten().flat_map(|b| [b.x0, b.x1]);
                let line_xs = lines.iter().flatten().flatten().map(|p| p.0);
                Axis::fit(x_log, 2.0, false, bar_xs.chain(line_xs))
            }
        };
        let bar_ys = bars
            .iter()
            .flatten()
            .flat_map(|b| [b.bottom, Some(b.top)])
            .flatten();
        let whisker_ys = whiskers.iter().flatten().flat_map(|w| [w.lo, w.hi]);
        let line_ys = lines.iter().flatten().flatten().map(|p| p.1);
        let level_ys = levels.iter().flatten().copied();
        let band_ys = bands.iter().flatten().flat_map(|&(lo, hi)| [lo, hi]);
        let all_ys = (bar_ys.chain(whisker_ys).chain(line_ys))
            .chain(level_ys)
            .chain(band_ys);
        // A linear y axis shows 0 where there are bars, or where nothing else sets its
        // range (a chart of ratios around a band does not); a log one starts a decade
        // below the smallest value where bars stand on it.
        let zero = if y_log {
            !c.bars.is_empty()
        } else {
            c.bands.is_empty() || !c.bars.is_empty()
        };
        let y = Axis::fit(y_log, 10.0, zero, all_ys);
        Plan {
            x,
            y,
            bars,
            whiskers,
            lines,
            levels,
            bands,
        }
    }

    fn is_empty(&self) -> bool {
        self.bars.iter().all(Vec::is_empty)
            && self.lines.iter().all(Vec::is_empty)
            && self.levels.iter().all(Option::is_none)
            && self.bands.iter().all(Option::is_none)
    }
}

fn draw_chart(root: &Area<'_>, c: &Chart) -> Drawn {
    let area = titled(root, &c.title, 24, &TEXT)?;
    let bars = c
        .bars
        .iter()
        .map(|s| Entry::new(Swatch::Dot(rgb(s.color)), &s.name));
    let lines = c.lines.iter().map(|l| {
        let swatch = if l.joined {
            Swatch::Line {
                color: rgb(l.color),
                width: 2,
                dashed: l.dashed,
                marker: l.markers,
            }
        } else {
            Swatch::Dot(rgb(l.color))
        };
        Entry::new(swatch, &l.name)
    });
    let bands = (c.bands.iter()).map(|b| Entry::new(Swatch::Dot(rgb(b.color)), &b.name));
    let levels = c.levels.iter().map(|l| {
        let swatch = Swatch::Line {
            color: rgb(l.color),
            width: 2,
            dashed: true,
            marker: false,
        };
        Entry::new(swatch, &l.name)
    });
    let entries: Vec<Entry> = bars.chain(lines).chain(levels).chain(bands).collect();
    let plot = legend_right(&area, &entries)?;

    let plan = Plan::new(c);
    let y_area = if c.y_label.is_empty() { 55 } else { 75 };
    let desc = if c.x_label.is_empty() { 0 } else { 26 };
    let categories = match &c.x {
        XAxis::Categories(labels) => {
            let n = (plan.x.hi - plan.x.lo).round().max(1.0);
            let plotting = f64::from(plot.dim_in_pixel().0 as i32 - 2 * MARGIN - y_area);
            Some(CategoryLabels::fit(labels, plotting / n))
        }
        XAxis::Linear | XAxis::Log => None,
    };
    let mut builder = ChartBuilder::on(&plot);
    builder
        .margin(MARGIN)
        .x_label_area_size(categories.as_ref().map_or(30, |l| l.height + 12) + desc)
        .y_label_area_size(y_area);
    let (x, y) = (plan.x.lo..plan.x.hi, plan.y.lo..plan.y.hi);
    let labels = categories.as_ref();
    match (c.x == XAxis::Log, c.y_scale == YScale::Log) {
        (false, false) => draw_marks(&mut builder.build_cartesian_2d(x, y)?, c, &plan, labels),
        (false, true) => draw_marks(
            &mut builder.build_cartesian_2d(x, y.log_scale())?,
            c,
            &plan,
            labels,
        ),
        (true, false) => draw_marks(
            &mut builder.build_cartesian_2d(x.log_scale().base(2.0), y)?,
            c,
            &plan,
            labels,
        ),
        (true, true) => {
            let x = x.log_scale().base(2.0);
            draw_marks(
                &mut builder.build_cartesian_2d(x, y.log_scale())?,
                c,
                &plan,
                labels,
            )
        }
    }
}

/// Pixels around a chart's plotting area and its label areas.
const MARGIN: i32 = 12;
/// The plotters size of tick labels.
const LABEL_SIZE: u32 = 14;
/// The longest a turned category label runs before it wraps, in pixels.
const TURNED: f64 = 130.0;

/// How a category axis' labels are set so that none overlaps another: each label wrapped
/// across its slot where that fits, else turned to run down from the axis (wrapped at
/// [`TURNED`] pixels), and where even turned labels are wider than a slot, only every
/// `step`-th labelled.
#[derive(Debug)]
struct CategoryLabels {
    /// Each slot's lines (none where it is skipped).
    lines: Vec<Vec<String>>,
    turned: bool,
    /// Pixels from the tick marks' end to the labels' far edge.
    height: i32,
}

impl CategoryLabels {
    fn fit(labels: &[String], slot: f64) -> CategoryLabels {
        let px = text::px(LABEL_SIZE);
        let line = f64::from(line_height(LABEL_SIZE));
        let room = slot - 6.0;
        let across: Vec<Vec<String>> = labels.iter().map(|l| text::wrap(l, px, room)).collect();
        let most = across.iter().map(Vec::len).max().unwrap_or(1);
        if across.iter().all(|l| text::widest(l, px) <= room) && most <= 3 {
            return CategoryLabels {
                height: (line * most as f64).ceil() as i32,
                lines: across,
                turned: false,
            };
        }
        let down: Vec<Vec<String>> = labels.iter().map(|l| text::wrap(l, px, TURNED)).collect();
        let thickest = down.iter().map(|l| l.len()).max().unwrap_or(1) as f64 * line;
        // Slots narrower than a few pixels still get every `step`-th label, `step` finite.
        let step = (thickest / (slot - 2.0).max(1.0)).ceil().max(1.0) as usize;
        let lines: Vec<Vec<String>> = (down.into_iter().enumerate())
            .map(|(i, l)| if i % step == 0 { l } else { Vec::new() })
            .collect();
        let height = lines
            .iter()
            .map(|l| text::widest(l, px))
            .fold(0.0, f64::max)
            .ceil() as i32;
        CategoryLabels {
            lines,
            turned: true,
            height,
        }
    }

    /// Writes the labels under the axis whose slot `i` is centred at pixel `x(i)` and
    /// whose tick marks end at pixel row `top`.
    fn draw(&self, area: &Area<'_>, x: impl Fn(usize) -> i32, top: i32) -> Drawn {
        let line = line_height(LABEL_SIZE);
        for (i, lines) in self.lines.iter().enumerate() {
            let centre = x(i);
            for (j, l) in (0..).zip(lines) {
                if self.turned {
                    // Reading upwards, ending just under the axis; lines side by side.
                    let offset = j * line - (lines.len() as i32 - 1) * line / 2;
                    let style = (FONT, LABEL_SIZE)
                        .into_font()
                        .transform(FontTransform::Rotate270)
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Right, VPos::Center));
                    area.draw_text(l, &style, (centre + offset, top))?;
                } else {
                    let style = (FONT, LABEL_SIZE)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Top));
                    area.draw_text(l, &style, (centre, top + j * line))?;
                }
            }
        }
        Ok(())
    }
}

/// Draws the axes and every mark of `plan` on a chart whose axes may be linear or log.
fn draw_marks<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    c: &Chart,
    plan: &Plan,
    categories: Option<&CategoryLabels>,
) -> Drawn
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    // Category labels are laid out apart ([`CategoryLabels`]): the mesh writes none.
    let x_fmt = |x: &f64| match &c.x {
        XAxis::Categories(_) => String::new(),
        XAxis::Linear => tick(*x),
        XAxis::Log => tick_binary(*x),
    };
    let y_fmt = |y: &f64| tick(*y);
    let mut mesh = chart.configure_mesh();
    mesh.label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, 16))
        .max_light_lines(4)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt);
    if let XAxis::Categories(_) = c.x {
        // Every slot gets its tick: a step of 1 is the finest that fits this many.
        mesh.disable_x_mesh()
            .x_labels((plan.x.hi - plan.x.lo).round() as usize);
    }
    if !c.x_label.is_empty() {
        mesh.x_desc(&c.x_label);
    }
    if !c.y_label.is_empty() {
        mesh.y_desc(&c.y_label);
    }
    mesh.draw()?;
    if let Some(labels) = categories {
        let area = chart.plotting_area().strip_coord_spec();
        let (x0, y0) = area.get_base_pixel();
        let at = |i: usize| chart.backend_coord(&(i as f64, plan.y.lo));
        labels.draw(&area, |i| at(i).0 - x0, at(0).1 - y0 + 8)?;
    }

    for (band, ends) in c.bands.iter().zip(&plan.bands) {
        if let Some((lo, hi)) = *ends {
            let fill = rgb(band.color).mix(0.35).filled();
            chart.draw_series([Rectangle::new([(plan.x.lo, lo), (plan.x.hi, hi)], fill)])?;
        }
    }
    for (series, bars) in c.bars.iter().zip(&plan.bars) {
        let fill = rgb(series.color).filled();
        chart.draw_series(bars.iter().map(|b| {
            let bottom = b.bottom.unwrap_or(plan.y.lo);
            Rectangle::new([(b.x0, bottom), (b.x1, b.top)], fill)
        }))?;
    }
    let whisker = WHISKER.stroke_width(1);
    for w in plan.whiskers.iter().flatten() {
        chart.draw_series([PathElement::new([(w.x, w.lo), (w.x, w.hi)], whisker)])?;
        chart
            .draw_series([w.lo, w.hi].map(|y| {
                EmptyElement::at((w.x, y)) + PathElement::new([(-4, 0), (4, 0)], whisker)
            }))?;
    }
    for (line, runs) in c.lines.iter().zip(&plan.lines) {
        let color = rgb(line.color);
        let style = color.stroke_width(2);
        for run in runs.iter().filter(|r| r.len() > 1 && line.joined) {
            if line.dashed {
                chart.draw_series([DashedPathElement::new(run.iter().copied(), 8, 5, style)])?;
            } else {
                chart.draw_series([PathElement::new(run.clone(), style)])?;
            }
        }
        if line.markers {
            let points = runs.iter().flatten();
            chart.draw_series(points.map(|&p| Circle::new(p, 3, color.filled())))?;
        }
    }
    for (level, y) in c.levels.iter().zip(&plan.levels) {
        if let Some(y) = *y {
            let ends = [(plan.x.lo, y), (plan.x.hi, y)];
            chart.draw_series([DashedPathElement::new(
                ends,
                8,
                5,
                rgb(level.color).stroke_width(2),
            )])?;
        }
    }
    if plan.is_empty() {
        note(&chart.plotting_area().strip_coord_spec(), "no data")?;
    }
    Ok(())
}

/// How a heat-map value is written: `unit` is either a suffix ("×" → "1.37×") or a
/// format with one `{}` or `{:.N}` placeholder ("{:.1} ms" → "1.4 ms"); 2 decimals by
/// default.
fn cell_text(v: f64, unit: &str) -> String {
    if let Some(open) = unit.find('{')
        && let Some(len) = unit[open..].find('}')
    {
        let spec = &unit[open + 1..open + len];
        let decimals = spec
            .strip_prefix(":.")
            .and_then(|d| d.parse().ok())
            .unwrap_or(2)
            .min(12);
        return format!("{}{v:.decimals$}{}", &unit[..open], &unit[open + len + 1..]);
    }
    format!("{v:.2}{unit}")
}

/// Blends from `a` (t = 0) to `b` (t = 1); an undefined `t` gives the middle.
fn blend((a, b): (RGBColor, RGBColor), t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.5 } else { t.clamp(0.0, 1.0) };
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The value of cell (row, column) if it has a usable one.
fn cell(h: &HeatMap, row: usize, column: usize) -> Option<f64> {
    let v = (*h.values.get(row)?.get(column)?)?;
    usable(false, v).then_some(v)
}

/// A cell's colour and how strong it is (0 light … 1 strong), given the smallest and
/// largest values of the map.
fn heat_color(v: f64, threshold: f64, (lo, hi): (f64, f64)) -> (RGBColor, f64) {
    let (scale, t) = if v >= threshold {
        (GREEN, (v - threshold) / (hi - threshold))
    } else {
        (RED, (threshold - v) / (threshold - lo))
    };
    let t = if t.is_nan() { 0.5 } else { t.clamp(0.0, 1.0) };
    (blend(scale, t), t)
}

fn draw_heat_map(root: &Area<'_>, h: &HeatMap) -> Drawn {
    let area = titled(root, &h.title, 24, &TEXT)?;
    let (nx, ny) = (h.columns.len(), h.rows.len());
    let thick = |color, width| Swatch::Line {
        color,
        width,
        dashed: false,
        marker: false,
    };
    let mut entries = vec![
        Entry::new(
            Swatch::Dot(GREEN.1),
            format!("≥ {}", cell_text(h.threshold, h.unit)),
        ),
        Entry::new(
            Swatch::Dot(RED.1),
            format!("< {}", cell_text(h.threshold, h.unit)),
        ),
        Entry::new(thick(CONTOUR, 4), "pay-off line"),
    ];
    if !h.marked.is_empty() {
        entries.push(Entry::new(thick(MARK, 3), "disagrees"));
    }
    let plot = legend_right(&area, &entries)?;

    let longest = text::widest(&h.rows, text::px(LABEL_SIZE)).ceil() as i32;
    let mut chart = ChartBuilder::on(&plot)
        .margin(MARGIN)
        .x_label_area_size(if h.x_label.is_empty() { 30 } else { 50 })
        .y_label_area_size((20 + longest).min(220) + if h.y_label.is_empty() { 0 } else { 22 })
        .build_cartesian_2d(-0.5..Axis::slots(nx).hi, -0.5..Axis::slots(ny).hi)?;
    // Row 0 at the top.
    let row_y = |r: usize| (ny - 1 - r) as f64;
    let x_fmt = |x: &f64| {
        slot(*x, nx)
            .map(|i| h.columns[i].clone())
            .unwrap_or_default()
    };
    let y_fmt = |y: &f64| {
        slot(*y, ny)
            .map(|j| h.rows[ny - 1 - j].clone())
            .unwrap_or_default()
    };
    let mut mesh = chart.configure_mesh();
    mesh.disable_mesh()
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, 16))
        .x_labels(nx.max(1))
        .y_labels(ny.max(1))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt);
    if !h.x_label.is_empty() {
        mesh.x_desc(&h.x_label);
    }
    if !h.y_label.is_empty() {
        mesh.y_desc(&h.y_label);
    }
    mesh.draw()?;
    if nx == 0 || ny == 0 {
        return note(&chart.plotting_area().strip_coord_spec(), "no data");
    }

    let cells: Vec<(usize, usize, Option<f64>)> = (0..ny)
        .flat_map(|r| (0..nx).map(move |c| (r, c, cell(h, r, c))))
        .collect();
    let range = cells
        .iter()
        .filter_map(|c| c.2)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let corners = |r: usize, c: usize| {
        let (x, y) = (c as f64, row_y(r));
        [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)]
    };
    chart.draw_series(cells.iter().map(|&(r, c, v)| {
        let fill = v.map_or(MISSING, |v| heat_color(v, h.threshold, range).0);
        Rectangle::new(corners(r, c), fill.filled())
    }))?;
    chart.draw_series(cells.iter().map(|&(r, c, v)| {
        let (text, color) = match v {
            Some(v) if heat_color(v, h.threshold, range).1 > 0.55 => (cell_text(v, h.unit), WHITE),
            Some(v) => (cell_text(v, h.unit), TEXT),
            None => ("–".to_owned(), NOTE),
        };
        let style = (FONT, 15)
            .into_font()
            .color(&color)
            .pos(Pos::new(HPos::Center, VPos::Center));
        Text::new(text, (c as f64, row_y(r)), style)
    }))?;

    // The contour: every edge between a cell at or above the threshold and one below.
    let above = |r: usize, c: usize| cell(h, r, c).map(|v| v >= h.threshold);
    let mut edges = Vec::new();
    for (r, c, _) in &cells {
        let (r, c) = (*r, *c);
        let Some(here) = above(r, c) else { continue };
        let (x, y) = (c as f64, row_y(r));
        if c + 1 < nx && above(r, c + 1).is_some_and(|there| there != here) {
            edges.push([(x + 0.5, y - 0.5), (x + 0.5, y + 0.5)]);
        }
        if r + 1 < ny && above(r + 1, c).is_some_and(|there| there != here) {
            edges.push([(x - 0.5, y - 0.5), (x + 0.5, y - 0.5)]);
        }
    }
    chart.draw_series(
        edges
            .into_iter()
            .map(|e| PathElement::new(e, CONTOUR.stroke_width(4))),
    )?;

    let inset = 0.07;
    let marked = h.marked.iter().filter(|&&(r, c)| r < ny && c < nx);
    chart.draw_series(marked.map(|&(r, c)| {
        let [(x0, y0), (x1, y1)] = corners(r, c);
        let (x0, y0, x1, y1) = (x0 + inset, y0 + inset, x1 - inset, y1 - inset);
        PathElement::new(
            [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)],
            MARK.stroke_width(3),
        )
    }))?;
    Ok(())
}

/// The subtitle of a timeline: what its times are.
fn source_note(source: TraceSource) -> &'static str {
    match source {
        TraceSource::Cupti => "GPU records (CUPTI)",
        TraceSource::Events => "event brackets: queueing included (CUPTI unavailable)",
    }
}

/// The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least `v` (1 for
/// `v` not positive).
fn nice_ceil(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&c| c >= v * (1.0 - 1e-12))
        .unwrap_or(10.0 * power)
}

fn draw_gantt(root: &Area<'_>, g: &Gantt) -> Drawn {
    let area = titled(root, &g.title, 24, &TEXT)?;
    let area = titled(&area, source_note(g.source), 16, &NOTE)?;
    let n = g.tracks.len();
    // Row 0 at the top.
    let row_y = |t: Track| {
        g.tracks
            .iter()
            .position(|&x| x == t)
            .map(|r| (n - 1 - r) as f64)
    };
    let bars: Vec<(f64, &GanttBar)> = g
        .bars
        .iter()
        .filter(|b| usable(false, b.start_ms) && usable(false, b.end_ms) && b.end_ms >= b.start_ms)
        .filter_map(|b| Some((row_y(b.track)?, b)))
        .collect();

    // The three kinds every timeline has, and any other kind it shows.
    let kinds: Vec<OpKind> = (OpKind::ALL.into_iter())
        .filter(|&k| k.engine().is_some() || bars.iter().any(|(_, b)| b.kind == k))
        .collect();
    let mut entries: Vec<Entry> = kinds
        .iter()
        .map(|&k| Entry::new(Swatch::Dot(rgb(kind_color(k))), k.label()))
        .collect();
    if bars.iter().any(|(_, b)| b.queued) {
        let colors = kinds.iter().map(|&k| rgb(queued_color(k))).collect();
        entries.push(Entry::new(
            Swatch::Dots(colors),
            "queued (waiting for its engine)",
        ));
    }
    let plot = legend_top(&area, &entries)?;

    let first = bars.iter().map(|(_, b)| b.start_ms).fold(0.0, f64::min);
    let last = bars.iter().map(|(_, b)| b.end_ms).fold(0.0, f64::max);
    let x = Axis {
        lo: if first < 0.0 { -nice_ceil(-first) } else { 0.0 },
        hi: nice_ceil(last),
    };
    let tracks: Vec<String> = g.tracks.iter().map(|t| t.label()).collect();
    let longest = text::widest(&tracks, text::px(LABEL_SIZE)).ceil() as i32;
    let mut chart = ChartBuilder::on(&plot)
        .margin(MARGIN)
        .x_label_area_size(50)
        .y_label_area_size((20 + longest).min(220))
        .build_cartesian_2d(x.lo..x.hi, -0.5..Axis::slots(n).hi)?;
    let x_fmt = |x: &f64| tick(*x);
    // Track names are laid out apart ([`track_labels`]): the mesh writes none.
    let y_fmt = |_: &f64| String::new();
    chart
        .configure_mesh()
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, 16))
        .max_light_lines(4)
        .disable_y_mesh()
        .y_labels(n.max(1))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc("time (ms)")
        .draw()?;
    let area = chart.plotting_area().strip_coord_spec();
    let (x0, y0) = area.get_base_pixel();
    let rows: Vec<(i32, &Track)> = (g.tracks.iter().enumerate())
        .map(|(r, t)| (chart.backend_coord(&(x.lo, (n - 1 - r) as f64)).1 - y0, t))
        .collect();
    let left = chart.backend_coord(&(x.lo, 0.0)).0 - x0;
    track_labels(&area, &rows, left - 8)?;

    let rect = |y: f64, b: &GanttBar, color: Color| {
        Rectangle::new(
            [(b.start_ms, y - 0.3), (b.end_ms, y + 0.3)],
            rgb(color).filled(),
        )
    };
    let queued = bars.iter().filter(|(_, b)| b.queued);
    chart.draw_series(queued.map(|&(y, b)| rect(y, b, queued_color(b.kind))))?;
    let ran = bars.iter().filter(|(_, b)| !b.queued);
    chart.draw_series(ran.map(|&(y, b)| rect(y, b, kind_color(b.kind))))?;

    // A divider where the rows change from streams to engines (or back).
    let is_stream = |t: &Track| matches!(t, Track::Stream(_) | Track::Lane(_));
    let dividers = (1..n).filter(|&r| is_stream(&g.tracks[r - 1]) != is_stream(&g.tracks[r]));
    chart.draw_series(dividers.map(|r| {
        let y = (n - r) as f64 - 0.5;
        PathElement::new([(x.lo, y), (x.hi, y)], DIVIDER.stroke_width(2))
    }))?;
    if bars.is_empty() {
        note(&chart.plotting_area().strip_coord_spec(), "no data")?;
    }
    Ok(())
}

/// Names each track at its row's pixel height, right-aligned at pixel column `right`:
/// the engines first, then the streams in order, each only where it does not overlap a
/// name already written (with many streams, every few streams are named).
fn track_labels(area: &Area<'_>, rows: &[(i32, &Track)], right: i32) -> Drawn {
    let line = line_height(LABEL_SIZE);
    let is_stream = |t: &Track| matches!(t, Track::Stream(_) | Track::Lane(_));
    let order = (rows.iter().filter(|(_, t)| !is_stream(t)))
        .chain(rows.iter().filter(|(_, t)| is_stream(t)));
    let mut taken: Vec<i32> = Vec::new();
    let style = (FONT, LABEL_SIZE)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (y, track) in order {
        if taken.iter().any(|t| (t - y).abs() < line) {
            continue;
        }
        taken.push(*y);
        area.draw_text(&track.label(), &style, (right, *y))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::{BarSeries, Level, LineSeries, PALETTE};
    use crate::saved::timeline::Engine;

    /// How plotters writes a model colour.
    fn hex(c: Color) -> String {
        c.to_ascii_uppercase()
    }

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc
    }

    fn count(svg: &str, tag: &str, attribute: &str, value: &str) -> usize {
        parse(svg)
            .descendants()
            .filter(|n| n.has_tag_name(tag) && n.attribute(attribute) == Some(value))
            .count()
    }

    fn count_rects(svg: &str, fill: &str) -> usize {
        count(svg, "rect", "fill", fill)
    }

    fn count_polylines(svg: &str, stroke: &str) -> usize {
        count(svg, "polyline", "stroke", stroke)
    }

    fn count_circles(svg: &str, fill: &str) -> usize {
        count(svg, "circle", "fill", fill)
    }

    fn texts(svg: &str) -> Vec<String> {
        parse(svg)
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_owned())
            .collect()
    }

    fn occurrences(svg: &str, text: &str) -> usize {
        texts(svg).iter().filter(|t| *t == text).count()
    }

    /// The `rect`s filled with `fill`, as (x, y, width, height).
    fn rects(svg: &str, fill: &str) -> Vec<(i64, i64, i64, i64)> {
        let number = |n: roxmltree::Node, a| n.attribute(a).and_then(|v| v.parse().ok()).unwrap();
        parse(svg)
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(fill))
            .map(|n| {
                (
                    number(n, "x"),
                    number(n, "y"),
                    number(n, "width"),
                    number(n, "height"),
                )
            })
            .collect()
    }

    fn bars(name: &str, color: Color, values: &[f64]) -> BarSeries {
        BarSeries {
            name: name.into(),
            color,
            values: values.to_vec(),
            whiskers: None,
        }
    }

    fn line(name: &str, color: Color, points: &[(f64, f64)]) -> LineSeries {
        LineSeries {
            name: name.into(),
            color,
            dashed: false,
            markers: true,
            joined: true,
            points: points.to_vec(),
        }
    }

    fn categories(n: usize) -> XAxis {
        XAxis::Categories((0..n).map(|i| format!("cat {i}")).collect())
    }

    fn model() -> Chart {
        Chart {
            title: "Throughput by size".into(),
            x_label: "size".into(),
            y_label: "GB/s".into(),
            x: categories(3),
            y_scale: YScale::Linear,
            bars: vec![],
            stacked: false,
            lines: vec![],
            levels: vec![],
            bands: vec![],
        }
    }

    #[test]
    fn colours_come_out_upper_case() {
        let c = Chart {
            bars: vec![bars("a", "#4e79a7", &[1.0])],
            ..model()
        };
        let svg = chart(&c);
        assert!(svg.contains("fill=\"#4E79A7\""));
        assert!(!svg.contains("#4e79a7"));
        assert_eq!(rgb("#4E79A7"), rgb("#4e79a7"));
        assert_eq!(rgb("nonsense"), RGBColor(0x80, 0x80, 0x80));
        assert_eq!(rgb("#12345é"), RGBColor(0x80, 0x80, 0x80));
    }

    #[test]
    fn grouped_bars_with_whiskers() {
        let mut a = bars("alone", PALETTE[0], &[1.0, 2.0, 3.0]);
        a.whiskers = Some(vec![(0.8, 1.2), (1.9, 2.2), (2.5, 3.5)]);
        let b = bars("together", PALETTE[1], &[1.5, 2.5, 3.5]);
        let c = Chart {
            bars: vec![a, b],
            ..model()
        };
        let svg = chart(&c);
        assert_eq!(count_rects(&svg, &hex(PALETTE[0])), 3);
        assert_eq!(count_rects(&svg, &hex(PALETTE[1])), 3);
        // A stem and two caps per whisker, as plain lines: no ErrorBar circles.
        assert_eq!(count_polylines(&svg, "#333333"), 9);
        assert_eq!(count(&svg, "circle", "stroke", "#333333"), 0);
        for text in [
            "Throughput by size",
            "size",
            "GB/s",
            "cat 0",
            "cat 1",
            "cat 2",
            "alone",
            "together",
        ] {
            assert_eq!(occurrences(&svg, text), 1, "{text}");
        }
        // Side by side: in each slot the second series' bar starts where the first ends.
        let (first, second) = (rects(&svg, &hex(PALETTE[0])), rects(&svg, &hex(PALETTE[1])));
        for (a, b) in first.iter().zip(&second) {
            assert!((a.0 + a.2 - b.0).abs() <= 1, "{a:?} {b:?}");
        }
        // Legend swatches are circles.
        assert_eq!(count_circles(&svg, &hex(PALETTE[0])), 1);
    }

    #[test]
    fn stacked_bars_sit_on_each_other() {
        let c = Chart {
            bars: vec![
                bars("compute", PALETTE[2], &[1.0, 2.0]),
                bars("copy", PALETTE[3], &[3.0, 1.0]),
            ],
            stacked: true,
            x: categories(2),
            ..model()
        };
        let svg = chart(&c);
        let (lower, upper) = (rects(&svg, &hex(PALETTE[2])), rects(&svg, &hex(PALETTE[3])));
        assert_eq!((lower.len(), upper.len()), (2, 2));
        for (l, u) in lower.iter().zip(&upper) {
            assert_eq!((l.0, l.2), (u.0, u.2), "same slot and width");
            assert!(
                (u.1 + u.3 - l.1).abs() <= 1,
                "upper ends where lower starts: {l:?} {u:?}"
            );
        }
    }

    #[test]
    fn stacked_whiskers_are_offset_by_their_base() {
        let mut top = bars("top", PALETTE[1], &[1.0]);
        top.whiskers = Some(vec![(0.5, 1.5)]);
        let c = Chart {
            bars: vec![bars("bottom", PALETTE[0], &[10.0]), top],
            stacked: true,
            x: categories(1),
            ..model()
        };
        let plan = Plan::new(&c);
        let w = &plan.whiskers[1][0];
        assert_eq!((w.lo, w.hi), (10.5, 11.5));
        assert!(plan.y.hi >= 11.5);
    }

    #[test]
    fn lines_markers_and_levels() {
        let mut dashed = line("model", PALETTE[4], &[(0.0, 1.0), (2.0, 3.0)]);
        dashed.dashed = true;
        dashed.markers = false;
        let c = Chart {
            lines: vec![
                line(
                    "measured",
                    PALETTE[0],
                    &[(0.0, 1.0), (1.0, 2.0), (2.0, 2.5)],
                ),
                dashed,
            ],
            levels: vec![Level {
                name: "peak".into(),
                color: "#222222",
                y: 4.0,
            }],
            ..model()
        };
        let svg = chart(&c);
        // One polyline for the line, one for its legend swatch; a marker per point.
        assert_eq!(count_polylines(&svg, &hex(PALETTE[0])), 2);
        assert_eq!(count_circles(&svg, &hex(PALETTE[0])), 3);
        // Dashes: many short polylines.
        assert!(count_polylines(&svg, &hex(PALETTE[4])) > 5);
        assert_eq!(count_circles(&svg, &hex(PALETTE[4])), 0);
        assert!(count_polylines(&svg, "#222222") > 10);
        for text in ["measured", "model", "peak"] {
            assert_eq!(occurrences(&svg, text), 1, "{text}");
        }
        // The level spans the whole plot: its dashes reach both ends of the x axis.
        let doc = parse(&svg);
        let xs: Vec<i64> = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#222222"))
            .flat_map(|n| {
                n.attribute("points")
                    .unwrap()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        let (lo, hi) = (xs.iter().min().unwrap(), xs.iter().max().unwrap());
        assert!(hi - lo > 400, "{lo}..{hi}");
    }

    #[test]
    fn log_y_skips_zero_and_negative_values() {
        let c = Chart {
            y_scale: YScale::Log,
            bars: vec![bars("b", PALETTE[0], &[0.0, 10.0, -1.0])],
            lines: vec![line(
                "l",
                PALETTE[1],
                &[(0.0, 0.0), (1.0, 100.0), (2.0, 1000.0)],
            )],
            levels: vec![Level {
                name: "zero".into(),
                color: "#222222",
                y: 0.0,
            }],
            ..model()
        };
        let svg = chart(&c);
        assert_eq!(count_rects(&svg, &hex(PALETTE[0])), 1);
        assert_eq!(count_circles(&svg, &hex(PALETTE[1])), 2);
        assert_eq!(
            count_polylines(&svg, "#222222"),
            3,
            "only the legend swatch's dashes"
        );
        let ticks = texts(&svg);
        assert!(ticks.iter().any(|t| t == "1000"), "{ticks:?}");
    }

    #[test]
    fn log_x_has_base_2_ticks_and_skips_non_positive_x() {
        let c = Chart {
            x: XAxis::Log,
            lines: vec![line(
                "l",
                PALETTE[0],
                &[(-1.0, 1.0), (0.0, 1.0), (1.0, 2.0), (64.0, 3.0)],
            )],
            ..model()
        };
        let svg = chart(&c);
        assert_eq!(count_circles(&svg, &hex(PALETTE[0])), 2);
        let ticks = texts(&svg);
        for t in ["1", "2", "4", "64"] {
            assert!(ticks.iter().any(|x| x == t), "{t} in {ticks:?}");
        }
    }

    #[test]
    fn non_finite_values_are_skipped() {
        let mut b = bars("b", PALETTE[0], &[1.0, f64::NAN, f64::INFINITY, 2.0]);
        b.whiskers = Some(vec![(0.5, f64::NAN), (1.0, 2.0), (1.0, 2.0), (1.5, 2.5)]);
        let nan = (1.0, f64::NAN);
        let c = Chart {
            x: categories(4),
            bars: vec![b],
            lines: vec![line(
                "l",
                PALETTE[1],
                &[(0.0, 1.0), nan, (2.0, 2.0), (3.0, f64::NEG_INFINITY)],
            )],
            levels: vec![Level {
                name: "nan".into(),
                color: "#222222",
                y: f64::NAN,
            }],
            ..model()
        };
        let svg = chart(&c);
        assert_eq!(count_rects(&svg, &hex(PALETTE[0])), 2);
        assert_eq!(count_polylines(&svg, "#333333"), 3, "one usable whisker");
        assert_eq!(count_circles(&svg, &hex(PALETTE[1])), 2);
        // The NaN splits the line: two single points, no segment (the legend's only).
        assert_eq!(count_polylines(&svg, &hex(PALETTE[1])), 1);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn empty_chart_renders_axes_and_a_note() {
        for x in [categories(0), XAxis::Linear, XAxis::Log] {
            for y_scale in [YScale::Linear, YScale::Log] {
                let c = Chart {
                    x: x.clone(),
                    y_scale,
                    ..model()
                };
                let svg = chart(&c);
                assert_eq!(occurrences(&svg, "no data"), 1);
                assert_eq!(occurrences(&svg, "Throughput by size"), 1);
                assert!(count_polylines(&svg, "#000000") > 0, "axes");
            }
        }
        let only_bad = Chart {
            bars: vec![bars("b", PALETTE[0], &[f64::NAN])],
            ..model()
        };
        assert_eq!(occurrences(&chart(&only_bad), "no data"), 1);
    }

    #[test]
    fn every_category_is_labelled() {
        for n in [1, 2, 7, 12, 25] {
            let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let c = Chart {
                x: categories(n),
                bars: vec![bars("b", PALETTE[0], &values)],
                ..model()
            };
            let svg = chart(&c);
            let texts = texts(&svg);
            for i in 0..n {
                // Whole on one line, or wrapped at its space where slots are narrow.
                let whole = occurrences(&svg, &format!("cat {i}"));
                let wrapped = texts.contains(&"cat".to_owned()) && texts.contains(&i.to_string());
                assert!(whole == 1 || (whole == 0 && wrapped), "{n} categories: {i}");
            }
            assert_eq!(count_rects(&svg, &hex(PALETTE[0])), n);
        }
    }

    #[test]
    fn degenerate_and_huge_ranges_do_not_hang() {
        let c = Chart {
            x: XAxis::Linear,
            lines: vec![line(
                "l",
                PALETTE[0],
                &[(5.0, 5.0), (5.0, 5.0), (1e300, -1e300), (f64::MAX, 1.0)],
            )],
            ..model()
        };
        assert_eq!(count_circles(&chart(&c), &hex(PALETTE[0])), 2);
        for (scale, v) in [
            (YScale::Linear, 1e-300),
            (YScale::Log, 1e-150),
            (YScale::Linear, -1e200),
            (YScale::Log, 1e200),
        ] {
            let tiny = Chart {
                x: XAxis::Linear,
                y_scale: scale,
                lines: vec![line("l", PALETTE[0], &[(v, v), (v, v)])],
                ..model()
            };
            assert_eq!(count_circles(&chart(&tiny), &hex(PALETTE[0])), 2, "{v}");
        }
        for (lo, hi) in [
            (3.0, 3.0),
            (-2.0, -2.0),
            (0.0, 0.0),
            (1e-300, 1e-300),
            (-1e200, 1e200),
        ] {
            for log in [false, true] {
                let a = Axis::fit(log, 10.0, !log, [lo, hi]);
                assert!(
                    a.lo.is_finite() && a.hi.is_finite() && a.lo < a.hi,
                    "{lo} {hi} {a:?}"
                );
                assert!(!log || a.lo > 0.0);
            }
        }
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(1000.0), "1000");
        assert_eq!(tick(0.125), "0.125");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(-0.2), "-0.2");
        assert_eq!(tick(3e7), "3.0e7");
        assert_eq!(tick_binary(512.0), "512");
        assert_eq!(tick_binary(1024.0), "1Ki");
        assert_eq!(tick_binary(3.0 * 1048576.0), "3Mi");
        assert_eq!(tick_binary(1536.0), "1536");
        assert_eq!(tick_binary(f64::INFINITY), "inf");
    }

    fn heat() -> HeatMap {
        HeatMap {
            title: "Overlap pays off".into(),
            x_label: "streams".into(),
            y_label: "size".into(),
            columns: vec!["1".into(), "2".into(), "4".into()],
            rows: vec!["small".into(), "large".into()],
            values: vec![
                vec![Some(0.8), Some(1.37), None],
                vec![Some(1.1), Some(2.0), Some(0.5)],
            ],
            threshold: 1.0,
            unit: "×",
            marked: vec![(0, 1), (1, 2), (5, 5)],
        }
    }

    fn cell_rects(svg: &str) -> usize {
        let doc = parse(svg);
        let skip = ["#FFFFFF", "#DDDDDD", "none"];
        doc.descendants()
            .filter(|n| {
                n.has_tag_name("rect") && !skip.contains(&n.attribute("fill").unwrap_or("none"))
            })
            .count()
    }

    #[test]
    fn heat_map_cells_values_and_missing() {
        let h = heat();
        let svg = heat_map(&h);
        assert_eq!(cell_rects(&svg), 5);
        assert_eq!(count_rects(&svg, "#DDDDDD"), 1);
        let t = texts(&svg);
        for text in [
            "Overlap pays off",
            "0.80×",
            "1.37×",
            "1.10×",
            "2.00×",
            "0.50×",
            "–",
            "small",
            "large",
            "1",
            "2",
            "4",
        ] {
            assert_eq!(
                t.iter().filter(|x| *x == text).count(),
                1,
                "{text} in {t:?}"
            );
        }
        // Row 0 is on top.
        let y_of = |text: &str| {
            let doc = parse(&svg);
            let node = doc
                .descendants()
                .find(|n| n.text().map(str::trim) == Some(text))
                .unwrap();
            node.attribute("y").unwrap().parse::<f64>().unwrap()
        };
        assert!(y_of("small") < y_of("large"));
    }

    #[test]
    fn heat_map_colours_are_two_sided() {
        let range = (0.5, 2.0);
        let (above, _) = heat_color(2.0, 1.0, range);
        let (below, _) = heat_color(0.5, 1.0, range);
        assert!(above.1 > above.0 && above.1 > above.2, "green: {above:?}");
        assert!(below.0 > below.1 && below.0 > below.2, "red: {below:?}");
        let (weak, t) = heat_color(1.1, 1.0, range);
        assert!(t < 0.5 && weak.1 > above.1, "weaker is lighter");
        assert_eq!(heat_color(1.0, 1.0, (1.0, 1.0)).1, 0.5);
        assert_eq!(heat_color(1.0, f64::NAN, range).1, 0.5);
    }

    #[test]
    fn heat_map_marks_and_contour() {
        let svg = heat_map(&heat());
        // The two marked cells inside the grid, plus the legend swatch; (5, 5) is ignored.
        assert_eq!(count_polylines(&svg, "#5B1A8C"), 2 + 1);
        // Edges between ≥ 1 and < 1: (0,0)|(0,1), (1,1)|(1,2), (0,0)/(1,0); (0,1)/(1,1) are
        // both above and (0,2) is missing. Plus the legend swatch.
        assert_eq!(count_polylines(&svg, "#1F1F1F"), 3 + 1);
    }

    #[test]
    fn heat_map_unit_formats() {
        assert_eq!(cell_text(1.368, "×"), "1.37×");
        assert_eq!(cell_text(1.368, "{:.1}×"), "1.4×");
        assert_eq!(cell_text(1.368, "{} ms"), "1.37 ms");
        assert_eq!(cell_text(2.0, ""), "2.00");
        assert_eq!(cell_text(2.0, "{:.x}"), "2.00");
    }

    #[test]
    fn empty_heat_map_renders() {
        let h = HeatMap {
            columns: vec![],
            rows: vec![],
            values: vec![],
            marked: vec![(0, 0)],
            ..heat()
        };
        let svg = heat_map(&h);
        assert_eq!(occurrences(&svg, "no data"), 1);
        assert_eq!(cell_rects(&svg), 0);
        let ragged = HeatMap {
            values: vec![vec![Some(f64::NAN)]],
            ..heat()
        };
        assert_eq!(cell_rects(&heat_map(&ragged)), 0);
        assert_eq!(count_rects(&heat_map(&ragged), "#DDDDDD"), 6);
    }

    fn timeline() -> Gantt {
        let bar = |track, kind, queued, start_ms, end_ms| GanttBar {
            track,
            kind,
            queued,
            start_ms,
            end_ms,
        };
        let (s0, s1) = (Track::Stream(0), Track::Stream(1));
        Gantt {
            title: "sincos-overlap, 2 streams".into(),
            source: TraceSource::Cupti,
            tracks: vec![
                s0,
                s1,
                Track::Engine(Engine::HtoD),
                Track::Engine(Engine::Sms),
                Track::Engine(Engine::DtoH),
            ],
            bars: vec![
                bar(s0, OpKind::HtoD, false, 0.0, 1.0),
                bar(s0, OpKind::Kernel, false, 1.0, 2.5),
                bar(s0, OpKind::DtoH, false, 2.5, 3.0),
                bar(s1, OpKind::HtoD, true, 0.0, 1.0),
                bar(s1, OpKind::HtoD, false, 1.0, 2.0),
                bar(s1, OpKind::Kernel, false, 2.5, 3.7),
                bar(Track::Engine(Engine::HtoD), OpKind::HtoD, false, 0.0, 2.0),
                bar(Track::Engine(Engine::Sms), OpKind::Kernel, false, 1.0, 3.7),
                bar(Track::Engine(Engine::DtoH), OpKind::DtoH, false, 2.5, 3.0),
            ],
        }
    }

    #[test]
    fn gantt_bars_labels_and_source() {
        let g = timeline();
        let svg = gantt(&g);
        assert_eq!(count_rects(&svg, &hex(kind_color(OpKind::HtoD))), 3);
        assert_eq!(count_rects(&svg, &hex(kind_color(OpKind::Kernel))), 3);
        assert_eq!(count_rects(&svg, &hex(kind_color(OpKind::DtoH))), 2);
        assert_eq!(count_rects(&svg, &hex(queued_color(OpKind::HtoD))), 1);
        for track in &g.tracks {
            assert_eq!(occurrences(&svg, &track.label()), 1, "{track:?}");
        }
        for text in [
            "sincos-overlap, 2 streams",
            "GPU records (CUPTI)",
            "HtoD",
            "kernel",
            "DtoH",
            "time (ms)",
        ] {
            assert_eq!(occurrences(&svg, text), 1, "{text}");
        }
        assert_eq!(occurrences(&svg, "queued (waiting for its engine)"), 1);
        assert_eq!(count_polylines(&svg, "#777777"), 1, "one divider");
        // The axis ends at a round number past the last end (3.7 ms).
        assert_eq!(occurrences(&svg, "5"), 1);
        // Queued bars are drawn first, under the execution bars.
        let doc = parse(&svg);
        let fills: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect"))
            .filter_map(|n| n.attribute("fill"))
            .collect();
        let first = |c: Color| fills.iter().position(|f| *f == hex(c)).unwrap();
        assert!(first(queued_color(OpKind::HtoD)) < first(kind_color(OpKind::HtoD)));
    }

    #[test]
    fn gantt_without_queues_or_cupti() {
        let mut g = timeline();
        g.source = TraceSource::Events;
        g.bars.retain(|b| !b.queued);
        g.bars.push(GanttBar {
            track: Track::Stream(7),
            kind: OpKind::HtoD,
            queued: false,
            start_ms: 0.0,
            end_ms: 1.0,
        });
        g.bars.push(GanttBar {
            track: Track::Stream(0),
            kind: OpKind::HtoD,
            queued: false,
            start_ms: f64::NAN,
            end_ms: 1.0,
        });
        g.bars.push(GanttBar {
            track: Track::Stream(0),
            kind: OpKind::HtoD,
            queued: false,
            start_ms: 2.0,
            end_ms: 1.0,
        });
        let svg = gantt(&g);
        assert_eq!(
            occurrences(
                &svg,
                "event brackets: queueing included (CUPTI unavailable)"
            ),
            1
        );
        assert_eq!(occurrences(&svg, "queued (waiting for its engine)"), 0);
        assert_eq!(
            count_rects(&svg, &hex(kind_color(OpKind::HtoD))),
            3,
            "bad bars skipped"
        );
    }

    #[test]
    fn empty_gantt_renders() {
        let g = Gantt {
            tracks: vec![],
            bars: vec![],
            ..timeline()
        };
        let svg = gantt(&g);
        assert_eq!(occurrences(&svg, "no data"), 1);
        assert_eq!(nice_ceil(3.7), 5.0);
        assert_eq!(nice_ceil(2.0), 2.0);
        assert_eq!(nice_ceil(0.011), 0.02);
        assert_eq!(nice_ceil(-1.0), 1.0);
    }
}
