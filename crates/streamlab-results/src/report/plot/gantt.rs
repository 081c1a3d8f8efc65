//! Timelines as Gantt charts: a row per track, each operation a bar from its start to its
//! end, its wait for its engine a lighter bar before it.
use super::legend::{Entry, Swatch, legend_top};
use super::{
    Area, Axis, BREAK, DIVIDER, Drawn, FONT, LABEL_SIZE, MARGIN, NOTE, SIZE, TEXT, line_height,
    note, rgb, text_style, tick, titled, usable,
};
use crate::report::chart::{Gantt, GanttBar, GanttMark, Track, kind_color, queued_color};
use crate::report::text;
use crate::saved::timeline::{OpKind, TraceSource};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The least width of the box around a break's operation, however short it ran.
const CULPRIT_PX: f64 = 6.0;

/// The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least `v` (1 for
/// `v` not positive).
pub(super) fn nice_ceil(v: f64) -> f64 {
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

/// The height of a timeline of `rows` rows: at least 22 pixels a row, room for its
/// label, and at least the size of the other charts.
pub(super) fn height(rows: usize) -> u32 {
    SIZE.1.max(190 + 22 * rows as u32)
}

/// The end of a timeline's time axis: the last bar's end rounded up to the next step of
/// about a twentieth of it, so the axis ends at the data.
pub(super) fn axis_end(last: f64) -> f64 {
    let step = nice_ceil(last / 20.0);
    (last / step - 1e-9).ceil().max(1.0) * step
}

pub(super) fn draw_gantt(root: &Area<'_>, g: &Gantt) -> Drawn {
    let area = titled(root, &g.title, 24, &TEXT)?;
    // The subtitle: what its times are.
    let source = match g.source {
        TraceSource::Cupti => "GPU records (CUPTI)",
        TraceSource::Events => "event brackets: queueing included (CUPTI unavailable)",
    };
    let area = titled(&area, source, 16, &NOTE)?;
    let n = g.tracks.len();
    // Row 0 at the top.
    let row_y = |t: Track| (g.tracks.iter().position(|&x| x == t)).map(|r| (n - 1 - r) as f64);
    let bars: Vec<(f64, &GanttBar)> = (drawn(g).into_iter())
        .filter_map(|b| Some((row_y(b.track)?, b)))
        .collect();
    let plot = legend_top(&area, &legend(g, &bars))?;

    let first = bars.iter().map(|(_, b)| b.start_ms).fold(0.0, f64::min);
    let last = bars.iter().map(|(_, b)| b.end_ms).fold(0.0, f64::max);
    let x = Axis {
        lo: if first < 0.0 { -nice_ceil(-first) } else { 0.0 },
        hi: axis_end(last.max(g.span_ms)),
    };
    let tracks: Vec<String> = g.tracks.iter().map(|t| t.label()).collect();
    let longest = text::widest(&tracks, text::px(LABEL_SIZE)).ceil() as i32;
    // The marks' names sit above the rows: one line of room for them.
    let top = if g.marks.is_empty() { 0.0 } else { 1.0 };
    let mut chart = ChartBuilder::on(&plot)
        .margin(MARGIN)
        .x_label_area_size(50)
        .y_label_area_size((20 + longest).min(220))
        .build_cartesian_2d(x.lo..x.hi, -0.5..Axis::slots(n).hi + top)?;
    let x_fmt = |x: &f64| tick(*x);
    chart
        .configure_mesh()
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, 16))
        .max_light_lines(4)
        .disable_y_mesh()
        // Track names are laid out apart ([`track_labels`]): the mesh writes none.
        .y_labels(0)
        .x_label_formatter(&x_fmt)
        .x_desc("time (ms)")
        .draw()?;
    let area = chart.plotting_area().strip_coord_spec();
    let (x0, y0) = area.get_base_pixel();
    let rows: Vec<(i32, &Track)> = (g.tracks.iter().enumerate())
        .map(|(r, t)| (chart.backend_coord(&(x.lo, (n - 1 - r) as f64)).1 - y0, t))
        .collect();
    let left = chart.backend_coord(&(x.lo, 0.0)).0 - x0;
    track_labels(&area, &rows, left - 8)?;

    // The waits first, under the runs ([`drawn`]'s order).
    chart.draw_series(bars.iter().map(|&(y, b)| {
        let corners = [(b.start_ms, y - 0.3), (b.end_ms, y + 0.3)];
        Rectangle::new(corners, rgb(b.color()).filled())
    }))?;
    // A hairline at each run's start, so that work run back to back shows as such.
    let ran = bars.iter().filter(|(_, b)| !b.queued);
    chart.draw_series(ran.map(|&(y, b)| {
        let ends = [(b.start_ms, y - 0.3), (b.start_ms, y + 0.3)];
        PathElement::new(ends, WHITE.stroke_width(1))
    }))?;

    draw_dividers(&mut chart, g, (x.lo, x.hi))?;
    draw_marks(&mut chart, g, (x.hi, n))?;
    if bars.is_empty() {
        note(&chart.plotting_area().strip_coord_spec(), "no data")?;
    }
    Ok(())
}

/// The legend of a timeline drawing `bars`: the kinds it shows, the waits where there
/// are any, and the concurrency breaks' mark.
fn legend(g: &Gantt, bars: &[(f64, &GanttBar)]) -> Vec<Entry> {
    let kinds: Vec<OpKind> = (OpKind::ALL.into_iter())
        .filter(|&k| bars.iter().any(|(_, b)| b.kind == k))
        .collect();
    let dot = |&k: &OpKind| Entry::new(Swatch::Dot(rgb(kind_color(k))), k.label());
    let mut entries: Vec<Entry> = kinds.iter().map(dot).collect();
    if bars.iter().any(|(_, b)| b.queued) {
        let colors = kinds.iter().map(|&k| rgb(queued_color(k))).collect();
        // The time from when an operation was ready (issued, its stream's earlier work
        // done) to when it started.
        entries.push(Entry::new(Swatch::Dots(colors), "ready, waiting to start"));
    }
    if !g.marks.is_empty() {
        let rule = Swatch::rule(BREAK, 2, true);
        entries.push(Entry::new(rule, "concurrency break"));
    }
    entries
}

/// A timeline's chart: time in ms across, rows up.
type GanttChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A divider where the rows change from streams to engines (or back), heavier where they
/// change from one GPU to the next, across the time axis from `lo` to `hi`.
fn draw_dividers(chart: &mut GanttChart<'_, '_>, g: &Gantt, (lo, hi): (f64, f64)) -> Drawn {
    let n = g.tracks.len();
    let dividers = (1..n).filter(|&r| g.tracks[r - 1].is_stream() != g.tracks[r].is_stream());
    chart.draw_series(dividers.map(|r| {
        let y = (n - r) as f64 - 0.5;
        let width = 2 + 2 * u32::from(g.tracks[r - 1].gpu() != g.tracks[r].gpu());
        PathElement::new([(lo, y), (hi, y)], DIVIDER.stroke_width(width))
    }))?;
    Ok(())
}

/// Each concurrency break as a dashed line down every row from where it started, the
/// operation to blame boxed on its row, and named above the rows where the name fits.
fn draw_marks(chart: &mut GanttChart<'_, '_>, g: &Gantt, (end, n): (f64, usize)) -> Drawn {
    let top = n as f64 - 0.5;
    chart.draw_series(g.marks.iter().map(|m| {
        let ends = [(m.at_ms, -0.5), (m.at_ms, top + 0.4)];
        DashedPathElement::new(ends, 4, 3, BREAK.stroke_width(2))
    }))?;
    let area = chart.plotting_area().strip_coord_spec();
    let (x0, y0) = area.get_base_pixel();
    let width = area.dim_in_pixel().0 as f64;
    let ms_per_px = (chart.x_range().end - chart.x_range().start) / width.max(1.0);
    // An operation too short to see: its box is filled.
    let boxes: Vec<(f64, f64, &GanttMark)> = (g.marks.iter())
        .filter_map(|m| {
            let r = g.tracks.iter().position(|&t| Some(t) == m.track)?;
            let to = m.end_ms.max(m.at_ms + CULPRIT_PX * ms_per_px);
            Some(((n - 1 - r) as f64, to, m))
        })
        .collect();
    let corners = |&(y, to, m): &(f64, f64, &GanttMark)| [(m.at_ms, y - 0.42), (to, y + 0.42)];
    let short = (boxes.iter()).filter(|(_, to, m)| *to > m.end_ms);
    chart.draw_series(short.map(|b| Rectangle::new(corners(b), BREAK.mix(0.4).filled())))?;
    chart.draw_series((boxes.iter()).map(|b| Rectangle::new(corners(b), BREAK.stroke_width(2))))?;
    let size = LABEL_SIZE - 2;
    let style = text_style(size, &BREAK, HPos::Left, VPos::Center);
    // Two lines of names where the room above the rows holds two: each name on the first
    // where it clears the one before it.
    let line_px = f64::from(line_height(size));
    let slot_px =
        f64::from(chart.backend_coord(&(0.0, top - 1.0)).1 - chart.backend_coord(&(0.0, top)).1);
    let lines = if 1.2 * slot_px >= 2.2 * line_px { 2 } else { 1 };
    let mut free_from = [f64::NEG_INFINITY; 2];
    if lines == 1 {
        free_from[1] = f64::INFINITY;
    }
    for (i, m) in g.marks.iter().enumerate() {
        let label = format!("{}: {}", i + 1, m.label);
        let w = text::width(&label, text::px(size));
        let x = (f64::from(chart.backend_coord(&(m.at_ms, top)).0 - x0) + 3.0)
            .min(width - w - 2.0)
            .max(0.0);
        // Else it moves right on the line with more room, where it still fits.
        let line = (0..2).find(|&l| x >= free_from[l]);
        let line = line.unwrap_or(usize::from(free_from[1] < free_from[0]));
        let x = x.max(free_from[line]);
        if x + w > width || m.at_ms > end {
            continue;
        }
        let first = chart.backend_coord(&(m.at_ms, top + 0.6 + 0.2 * (lines - 1) as f64));
        let py = first.1 + (line_px * line as f64) as i32;
        area.draw_text(&label, &style, (x as i32, py - y0))?;
        free_from[line] = x + w + 6.0;
    }
    Ok(())
}

/// The bars of `g` a drawing shows, in the order it draws them: the waits, then the
/// executions, each of a track the timeline has, with finite times in order.
pub fn drawn(g: &Gantt) -> Vec<&GanttBar> {
    let drawable = |b: &&GanttBar| {
        g.tracks.contains(&b.track)
            && usable(false, b.start_ms)
            && usable(false, b.end_ms)
            && b.end_ms >= b.start_ms
    };
    (g.bars.iter().filter(|b| b.queued))
        .chain(g.bars.iter().filter(|b| !b.queued))
        .filter(drawable)
        .collect()
}

/// `svg` (a timeline's drawing) with each bar's title inside its `<rect>`, for a browser
/// to show when the bar is pointed at: the bars are the rects filled with a kind's colour,
/// in [`drawn`]'s order.
pub(super) fn with_titles(svg: String, g: &Gantt) -> String {
    let bars = drawn(g);
    let fill = |b: &GanttBar| format!("fill=\"{}\"", b.color().to_ascii_uppercase());
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg.as_str();
    let mut next = bars.iter().peekable();
    while let Some(at) = rest.find("<rect") {
        let end = at + rest[at..].find("/>").map_or(rest.len() - at, |e| e + 2);
        let element = &rest[at..end];
        out += &rest[..at];
        match next.peek() {
            Some(b) if element.contains(&fill(b)) && element.ends_with("/>") => {
                out += &element[..element.len() - 2];
                out += &format!(">\n<title>{}</title>\n</rect>", text::escape(&b.title));
                next.next();
            }
            _ => out += element,
        }
        rest = &rest[end..];
    }
    out += rest;
    out
}

/// Names each track at its row's pixel height, right-aligned at pixel column `right`:
/// the engines first, then each stream whose name does not overlap one already written.
fn track_labels(area: &Area<'_>, rows: &[(i32, &Track)], right: i32) -> Drawn {
    let line = line_height(LABEL_SIZE);
    let order = (rows.iter().filter(|(_, t)| !t.is_stream()))
        .chain(rows.iter().filter(|(_, t)| t.is_stream()));
    let mut taken: Vec<i32> = Vec::new();
    let style = text_style(LABEL_SIZE, &BLACK, HPos::Right, VPos::Center);
    for (y, track) in order {
        if taken.iter().any(|t| (t - y).abs() < line) {
            continue;
        }
        taken.push(*y);
        area.draw_text(&track.label(), &style, (right, *y))?;
    }
    Ok(())
}
