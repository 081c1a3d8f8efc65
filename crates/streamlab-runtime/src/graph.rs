//! CUDA graphs: the work a closure issues on several streams, captured once and replayed
//! with one launch.
//!
//! Capture starts on the first stream; the others join it by waiting for an event
//! recorded there (fork) and leave it by recording an event the first stream waits for
//! (join), so the graph keeps every dependency the streams had.
use cudarc::driver::{result, sys};

use super::{Context, Event, Gpu, RuntimeError, Stream};

/// An instantiated graph, ready to replay.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Graph {
    /// Capture what `issue` puts on `streams` (it must neither synchronise nor wait on
    /// the host) into a graph.
    pub fn capture(
        gpu: &Gpu,
        streams: &[Stream],
        issue: impl FnOnce() -> Result<(), RuntimeError>,
    ) -> Result<Graph, RuntimeError> {
        let origin = &streams[0];
        // SAFETY: the stream is live and not capturing.
        unsafe {
            result::stream::begin_capture(
                origin.raw,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }
        .doing("starting a graph capture")?;
        let fork = gpu.event()?;
        let joins = (1..streams.len())
            .map(|_| gpu.event())
            .collect::<Result<Vec<Event>, _>>()?;
        let captured = (|| {
            origin.record(&fork)?;
            for stream in &streams[1..] {
                stream.wait(&fork)?;
            }
            issue()?;
            for (stream, join) in streams[1..].iter().zip(&joins) {
                stream.record(join)?;
                origin.wait(join)?;
            }
            Ok(())
        })();
        // SAFETY: capture was started on this stream; ending it is required either way.
        let graph =
            unsafe { result::stream::end_capture(origin.raw) }.doing("ending a graph capture");
        captured?;
        let graph = graph?;
        // SAFETY: `graph` is a complete captured graph.
        let exec = unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) };
        match exec {
            Ok(exec) => Ok(Graph { graph, exec }),
            Err(source) => {
                // SAFETY: the graph is ours and not instantiated.
                let _ = unsafe { result::graph::destroy(graph) };
                Err(RuntimeError::Driver {
                    what: "instantiating a graph",
                    source,
                })
            }
        }
    }

    /// Replay the whole graph on `stream`.
    ///
    /// # Safety
    /// The replay copies and computes on the buffers the capture was given, which the
    /// graph does not hold: they must still live, and the host must not read, write or
    /// free them until the replay is waited for with [`Gpu::synchronize`] (the host
    /// buffers' own waits do not see a replay).
    pub unsafe fn launch(&self, stream: &Stream) -> Result<(), RuntimeError> {
        stream.work.issue();
        // SAFETY: both handles are live.
        unsafe { result::graph::launch(self.exec, stream.raw) }.doing("launching a graph")
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: both are ours; callers synchronise before dropping a graph in flight.
        unsafe {
            let _ = result::graph::exec_destroy(self.exec);
            let _ = result::graph::destroy(self.graph);
        }
    }
}
