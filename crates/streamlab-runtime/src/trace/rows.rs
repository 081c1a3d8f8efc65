//! The streams a trace records, each with its GPU ([`Rows`]), and what a trace sets up on
//! every GPU of them: a closed gate holding its streams, and a zero mark for event
//! brackets.
use crate::gate::Gate;
use crate::{Event, Gpu, RuntimeError, Stream};

/// The streams a schedule is traced on, each with its GPU: one GPU's (borrowed as given,
/// so that a recorder made inside a timed region allocates nothing), or several GPUs' one
/// after another.
#[derive(Clone)]
pub(super) enum Rows<'a> {
    One {
        gpu: &'a Gpu,
        streams: &'a [Stream<'a>],
    },
    Several {
        gpus: Vec<&'a Gpu>,
        /// Each stream, and the index of its GPU in `gpus`.
        streams: Vec<(&'a Stream<'a>, usize)>,
    },
}

impl<'a> Rows<'a> {
    pub(super) fn several(gpus: &[(&'a Gpu, &'a [Stream<'a>])]) -> Rows<'a> {
        Rows::Several {
            gpus: gpus.iter().map(|&(gpu, _)| gpu).collect(),
            streams: (gpus.iter().enumerate())
                .flat_map(|(k, &(_, streams))| streams.iter().map(move |s| (s, k)))
                .collect(),
        }
    }

    /// How many streams.
    pub(super) fn len(&self) -> usize {
        match self {
            Rows::One { streams, .. } => streams.len(),
            Rows::Several { streams, .. } => streams.len(),
        }
    }

    pub(super) fn stream(&self, row: usize) -> &'a Stream<'a> {
        match self {
            Rows::One { streams, .. } => &streams[row],
            Rows::Several { streams, .. } => streams[row].0,
        }
    }

    /// The GPUs, in order.
    pub(super) fn gpus(&self) -> Vec<&'a Gpu> {
        match self {
            Rows::One { gpu, .. } => vec![*gpu],
            Rows::Several { gpus, .. } => gpus.clone(),
        }
    }

    /// The index of row `row`'s GPU (the first GPU's for the lane and the host).
    pub(super) fn gpu_index(&self, row: usize) -> usize {
        match self {
            Rows::One { .. } => 0,
            Rows::Several { streams, .. } => streams.get(row).map_or(0, |&(_, k)| k),
        }
    }

    /// The GPU of row `row` (the first GPU's for the lane and the host).
    pub(super) fn gpu(&self, row: usize) -> &'a Gpu {
        match self {
            Rows::One { gpu, .. } => gpu,
            Rows::Several { gpus, .. } => gpus[self.gpu_index(row)],
        }
    }

    /// Every stream with the index of its GPU.
    pub(super) fn indexed(&self) -> Vec<(&'a Stream<'a>, usize)> {
        (0..self.len())
            .map(|row| (self.stream(row), self.gpu_index(row)))
            .collect()
    }

    /// GPU `k`'s streams.
    pub(super) fn of(&self, k: usize) -> impl Iterator<Item = &'a Stream<'a>> + '_ {
        (0..self.len())
            .filter(move |&row| self.gpu_index(row) == k)
            .map(|row| self.stream(row))
    }

    pub(super) fn wait_all(&self) -> Result<(), RuntimeError> {
        self.gpus().iter().try_for_each(|gpu| gpu.synchronize())
    }
}

/// A closed gate per GPU of `rows`, each holding that GPU's streams.
pub(super) fn gates(rows: &Rows) -> Result<Vec<Gate>, RuntimeError> {
    each_gpu(rows, |k, gpu| {
        let gate = Gate::new(gpu)?;
        rows.of(k).try_for_each(|stream| gate.hold(stream))?;
        Ok(gate)
    })
}

/// `f` of each GPU of `rows` and its index, that GPU's context made current first where
/// there are several.
fn each_gpu<T>(
    rows: &Rows,
    mut f: impl FnMut(usize, &Gpu) -> Result<T, RuntimeError>,
) -> Result<Vec<T>, RuntimeError> {
    let gpus = rows.gpus();
    let several = gpus.len() > 1;
    (gpus.iter().enumerate())
        .map(|(k, gpu)| {
            if several {
                gpu.bind()?;
            }
            f(k, gpu)
        })
        .collect()
}

/// A zero mark per GPU of `rows`, recorded in its first stream, which its other streams
/// (and for the first GPU, `lane`) wait for.
pub(super) fn zeros(rows: &Rows, lane: Option<&Stream>) -> Result<Vec<Event>, RuntimeError> {
    each_gpu(rows, |k, gpu| {
        let zero = gpu.event()?;
        let mut streams = rows.of(k);
        if let Some(first) = streams.next() {
            first.record(&zero)?;
        }
        let lane = lane.filter(|_| k == 0);
        streams
            .chain(lane)
            .try_for_each(|stream| stream.wait(&zero))?;
        Ok(zero)
    })
}
