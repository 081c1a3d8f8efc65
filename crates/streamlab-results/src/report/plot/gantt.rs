//! Timelines as Gantt charts: a row per track, each operation a bar from its start to its
//! end, its wait for its engine a lighter bar before it.
use super::legend::{Entry, Swatch, legend_top};
use super::{
    Area, Axis, DIVIDER, Drawn, FONT, LABEL_SIZE, MARGIN, NOTE, TEXT, line_height, note, rgb, tick,
    titled, usable,
};
use crate::report::chart::{Color, Gantt, GanttBar, Track, kind_color, queued_color};
use crate::report::text;
use crate::saved::timeline::{OpKind, TraceSource};
use plotters::prelude::*;
use plotters::style::Color as _;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The subtitle of a timeline: what its times are.
fn source_note(source: TraceSource) -> &'static str {
    match source {
        TraceSource::Cupti => "GPU records (CUPTI)",
        TraceSource::Events => "event brackets: queueing included (CUPTI unavailable)",
    }
}

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

pub(super) fn draw_gantt(root: &Area<'_>, g: &Gantt) -> Drawn {
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
