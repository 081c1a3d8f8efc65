//! Line and bar charts: the drawable marks of a model ([`Plan`]), its category labels
//! set so that none overlaps another, and the axes and marks drawn.
use super::legend::{Entry, Swatch, legend_right};
use super::{
    Area, Axis, Drawn, FONT, GROUP, LABEL_SIZE, MARGIN, SIZE, TEXT, WHISKER, line_height, note,
    rgb, text_style, tick, tick_binary, titled, usable,
};
use crate::report::chart::{Chart, LineSeries, XAxis, YScale};
use crate::report::text;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// A bar in data coordinates, from `x0` to `x1`, up to `top` from 0 (from the axis' foot
/// on a log y axis).
struct Bar {
    x0: f64,
    x1: f64,
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

        let (bars, whiskers) = bars_of(c, &x_ok, &y_ok);
        let runs = |l: &LineSeries| -> Vec<Vec<(f64, f64)>> {
            (l.points.split(|&(x, y)| !(x_ok(x) && y_ok(y))))
                .filter(|run| !run.is_empty())
                .map(<[_]>::to_vec)
                .collect()
        };
        let lines: Vec<_> = c.lines.iter().map(runs).collect();
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
        // Bars stand on 0 on a linear axis: `zero` below keeps it in range.
        let bar_ys = bars.iter().flatten().map(|b| b.top);
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
        let zero = !c.bars.is_empty() || (!y_log && c.bands.is_empty());
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

/// Each bar series' drawable bars and whiskers, side by side in their slot: a bar whose
/// ends `x_ok` refuses or whose value `y_ok` refuses is left out.
#[allow(clippy::type_complexity)]
fn bars_of(
    c: &Chart,
    x_ok: &dyn Fn(f64) -> bool,
    y_ok: &dyn Fn(f64) -> bool,
) -> (Vec<Vec<Bar>>, Vec<Vec<Whisker>>) {
    let width = GROUP / c.bars.len().max(1) as f64;
    let (mut bars, mut whiskers) = (Vec::new(), Vec::new());
    for (s, series) in c.bars.iter().enumerate() {
        let (mut these, mut their_whiskers) = (Vec::new(), Vec::new());
        for (i, &top) in series.values.iter().enumerate() {
            let x0 = i as f64 - GROUP / 2.0 + s as f64 * width;
            let x1 = x0 + width;
            if !(x_ok(x0) && x_ok(x1) && y_ok(top)) {
                continue;
            }
            these.push(Bar { x0, x1, top });
            if let Some(&(lo, hi)) = series.whiskers.as_ref().and_then(|w| w.get(i))
                && y_ok(lo)
                && y_ok(hi)
            {
                let (x, lo, hi) = ((x0 + x1) / 2.0, lo.min(hi), lo.max(hi));
                their_whiskers.push(Whisker { x, lo, hi });
            }
        }
        bars.push(these);
        whiskers.push(their_whiskers);
    }
    (bars, whiskers)
}

pub(super) fn draw_chart(root: &Area<'_>, c: &Chart) -> Drawn {
    let area = titled(root, &c.title, 24, &TEXT)?;
    let dot = |color, name: &String| Entry::new(Swatch::Dot(rgb(color)), name);
    let bars = c.bars.iter().map(|s| dot(s.color, &s.name));
    let lines = c.lines.iter().map(|l| match l.joined {
        true => Entry::new(
            Swatch::Line {
                color: rgb(l.color),
                width: 2,
                dashed: l.dashed,
                marker: l.markers,
            },
            &l.name,
        ),
        false => dot(l.color, &l.name),
    });
    let bands = c.bands.iter().map(|b| dot(b.color, &b.name));
    let levels =
        (c.levels.iter()).map(|l| Entry::new(Swatch::rule(rgb(l.color), 2, true), &l.name));
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
    // Each pair of axis kinds is a type of its own.
    macro_rules! draw {
        ($x:expr, $y:expr) => {
            draw_marks(&mut builder.build_cartesian_2d($x, $y)?, c, &plan, labels)
        };
    }
    match (c.x == XAxis::Log, c.y_scale == YScale::Log) {
        (false, false) => draw!(x, y),
        (false, true) => draw!(x, y.log_scale()),
        (true, false) => draw!(x.log_scale().base(2.0), y),
        (true, true) => draw!(x.log_scale().base(2.0), y.log_scale()),
    }
}

/// The longest a turned category label runs before it wraps, in pixels.
const TURNED: f64 = 190.0;

/// The widest of `labels`, where they are so many and long that, wrapped at [`TURNED`]
/// pixels, they would not fit side by side: they wrap at twice that, the chart drawn
/// taller by [`extra_height`].
fn long_labels(labels: &[String]) -> Option<f64> {
    let widest = text::widest(labels, text::px(LABEL_SIZE));
    let thick = 2.0 * f64::from(line_height(LABEL_SIZE));
    (widest > TURNED && labels.len() as f64 * thick > f64::from(SIZE.0) / 2.0).then_some(widest)
}

/// How much taller than the others a chart of categories `x` is drawn: the room its
/// [`long_labels`] take beyond [`TURNED`] pixels.
pub(super) fn extra_height(x: &XAxis) -> u32 {
    match x {
        XAxis::Categories(labels) => long_labels(labels).map_or(0, |widest| {
            (widest.min(2.0 * TURNED) - TURNED).ceil() as u32
        }),
        _ => 0,
    }
}

/// How a category axis' labels are set so that none overlaps another: wrapped across
/// their slots where that fits, else turned, and where even turned labels are wider than
/// a slot, only every `step`-th labelled.
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
        let wrap = long_labels(labels).map_or(TURNED, |_| 2.0 * TURNED);
        let down: Vec<Vec<String>> = labels.iter().map(|l| text::wrap(l, px, wrap)).collect();
        let thickest = down.iter().map(|l| l.len()).max().unwrap_or(1) as f64 * line;
        // Slots narrower than a few pixels still get every `step`-th label, `step` finite.
        let step = (thickest / (slot - 2.0).max(1.0)).ceil().max(1.0) as usize;
        let lines: Vec<Vec<String>> = (down.into_iter().enumerate())
            .map(|(i, l)| if i % step == 0 { l } else { Vec::new() })
            .collect();
        let height = text::widest(&lines.concat(), px).ceil() as i32;
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
                    let style = text_style(LABEL_SIZE, &BLACK, HPos::Right, VPos::Center)
                        .transform(FontTransform::Rotate270);
                    area.draw_text(l, &style, (centre + offset, top))?;
                } else {
                    let style = text_style(LABEL_SIZE, &BLACK, HPos::Center, VPos::Top);
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
    // Bars stand on 0, or on a log axis' foot.
    let bottom = if c.y_scale == YScale::Log {
        plan.y.lo
    } else {
        0.0
    };
    for (series, bars) in c.bars.iter().zip(&plan.bars) {
        let fill = rgb(series.color).filled();
        let rect = |b: &Bar| Rectangle::new([(b.x0, bottom), (b.x1, b.top)], fill);
        chart.draw_series(bars.iter().map(rect))?;
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
            let style = rgb(level.color).stroke_width(2);
            chart.draw_series([DashedPathElement::new(ends, 8, 5, style)])?;
        }
    }
    if plan.is_empty() {
        note(&chart.plotting_area().strip_coord_spec(), "no data")?;
    }
    Ok(())
}
