// The CUDA C++ host twin of sincos-overlap's schedules (crates/streamlab/src/experiments/
// sincos_overlap.rs, crates/streamlab/src/measure.rs, src/region.rs), written statement
// for statement like the Rust host: one timed batch is a region of events over the
// streams, `warmup` untimed iterations, then `iterations` back to back, timed together.
// It issues through the CUDA driver API the same copies and the same kernel (the function
// streamlab loaded, passed in) on the same streams and buffers as the Rust host, so the
// two differ only in the host code that issues them. streamlab builds this file with nvcc
// into a shared library at run time (src/cpp_host.rs) and calls `sincos_host_batch`
// batch for batch with its own.
#include <cuda.h>
#include <stddef.h>

// The arrays: `a` and `b` in pinned host memory and on the device, `len` floats each.
struct SincosArrays {
    const float *host_a;
    float *host_b;
    CUdeviceptr dev_a;
    CUdeviceptr dev_b;
    size_t len;
};

// The kernel: `sincos(a: &[f32], b: &mut [f32], offset: u32)`, whose PTX parameters are
// a pointer and a length for each slice, then the offset.
struct SincosKernel {
    CUfunction function;
    unsigned threads;
};

enum Order { SEQUENTIAL = 0, ASYNC1 = 1, ASYNC2 = 2 };
enum Kind { HTOD = 0, KERNEL = 1, DTOH = 2 };

#define CHECK(call)                                                                        \
    do {                                                                                   \
        CUresult status_ = (call);                                                         \
        if (status_ != CUDA_SUCCESS)                                                       \
            return status_;                                                                \
    } while (0)

// One copy in, kernel or copy out of elements [start, end), on `stream`.
static CUresult op(const SincosArrays *b, const SincosKernel *k, Kind kind, CUstream stream,
                   size_t start, size_t end)
{
    size_t count = end - start;
    size_t bytes = count * sizeof(float);
    switch (kind) {
    case HTOD:
        return cuMemcpyHtoDAsync(b->dev_a + start * sizeof(float), b->host_a + start, bytes,
                                 stream);
    case KERNEL: {
        CUdeviceptr a = b->dev_a + start * sizeof(float);
        CUdeviceptr out = b->dev_b + start * sizeof(float);
        unsigned offset = (unsigned)start;
        void *params[] = {&a, &count, &out, &count, &offset};
        unsigned blocks = (unsigned)((count + k->threads - 1) / k->threads);
        return cuLaunchKernel(k->function, blocks, 1, 1, k->threads, 1, 1, 0, stream, params,
                              NULL);
    }
    case DTOH:
        return cuMemcpyDtoHAsync(b->host_b + start, b->dev_b + start * sizeof(float), bytes,
                                 stream);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

// Issue one iteration of `order` over `count` streams, chunk s ([bounds[s], bounds[s+1]))
// on stream s.
static CUresult issue(const SincosArrays *b, const SincosKernel *k, Order order,
                      const CUstream *streams, unsigned count, const size_t *bounds)
{
    const Kind kinds[3] = {HTOD, KERNEL, DTOH};
    switch (order) {
    case SEQUENTIAL:
        CHECK(op(b, k, HTOD, streams[0], bounds[0], bounds[count]));
        CHECK(cuStreamSynchronize(streams[0]));
        CHECK(op(b, k, KERNEL, streams[0], bounds[0], bounds[count]));
        return op(b, k, DTOH, streams[0], bounds[0], bounds[count]);
    case ASYNC1:
        for (unsigned s = 0; s < count; s++)
            for (int i = 0; i < 3; i++)
                CHECK(op(b, k, kinds[i], streams[s], bounds[s], bounds[s + 1]));
        return CUDA_SUCCESS;
    case ASYNC2:
        for (int i = 0; i < 3; i++)
            for (unsigned s = 0; s < count; s++)
                CHECK(op(b, k, kinds[i], streams[s], bounds[s], bounds[s + 1]));
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

// Events over `count` streams: a start on the first that every other waits for, and an
// end on the first after it has waited for a join event from every other.
struct Region {
    CUevent start;
    CUevent stop;
    CUevent joins[1024];
    unsigned count;
};

static CUresult region_new(Region *r, unsigned count)
{
    r->count = count;
    r->start = r->stop = NULL;
    for (unsigned s = 0; s < count; s++)
        r->joins[s] = NULL;
    CHECK(cuEventCreate(&r->start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&r->stop, CU_EVENT_DEFAULT));
    for (unsigned s = 0; s < count; s++)
        CHECK(cuEventCreate(&r->joins[s], CU_EVENT_DEFAULT));
    return CUDA_SUCCESS;
}

static void region_free(Region *r)
{
    if (r->start)
        cuEventDestroy(r->start);
    if (r->stop)
        cuEventDestroy(r->stop);
    for (unsigned s = 0; s < r->count; s++)
        if (r->joins[s])
            cuEventDestroy(r->joins[s]);
}

static CUresult region_begin(const Region *r, const CUstream *streams)
{
    CHECK(cuEventRecord(r->start, streams[0]));
    for (unsigned s = 1; s < r->count; s++)
        CHECK(cuStreamWaitEvent(streams[s], r->start, 0));
    return CUDA_SUCCESS;
}

static CUresult region_end(const Region *r, const CUstream *streams, float *ms)
{
    for (unsigned s = 1; s < r->count; s++) {
        CHECK(cuEventRecord(r->joins[s], streams[s]));
        CHECK(cuStreamWaitEvent(streams[0], r->joins[s], 0));
    }
    CHECK(cuEventRecord(r->stop, streams[0]));
    CHECK(cuEventSynchronize(r->stop));
    return cuEventElapsedTime(ms, r->start, r->stop);
}

static CUresult batch(const SincosArrays *b, const SincosKernel *k, Order order,
                      const CUstream *streams, const size_t *bounds, const Region *region,
                      unsigned warmup, unsigned iterations, double *ms_per_iteration)
{
    float ms = 0.0f;
    CHECK(region_begin(region, streams));
    for (unsigned i = 0; i < warmup; i++)
        CHECK(issue(b, k, order, streams, region->count, bounds));
    CHECK(region_end(region, streams, &ms));
    CHECK(region_begin(region, streams));
    for (unsigned i = 0; i < iterations; i++)
        CHECK(issue(b, k, order, streams, region->count, bounds));
    CHECK(region_end(region, streams, &ms));
    *ms_per_iteration = (double)ms / iterations;
    return cuCtxSynchronize();
}

// One sample: `warmup` untimed iterations of `order` over `count` streams (at most 1024),
// then `iterations` back to back, timed together; writes the time per iteration. Returns
// the first failing call's status; every call has finished when it returns.
extern "C" int sincos_host_batch(const SincosArrays *b, const SincosKernel *k, int order,
                                 const CUstream *streams, unsigned count,
                                 const size_t *bounds, unsigned warmup, unsigned iterations,
                                 double *ms_per_iteration)
{
    if (count == 0 || count > 1024 || iterations == 0 || order < SEQUENTIAL || order > ASYNC2)
        return CUDA_ERROR_INVALID_VALUE;
    Region region;
    CUresult status = region_new(&region, count);
    if (status == CUDA_SUCCESS)
        status = batch(b, k, (Order)order, streams, bounds, &region, warmup, iterations,
                       ms_per_iteration);
    region_free(&region);
    cuCtxSynchronize();
    return status;
}
