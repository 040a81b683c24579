/* The stress load of the CUDA backend (issue 7): one host thread per GPU runs
 * a cuBLAS GEMM in a loop on deterministic random inputs, and checks the
 * results against a reference computed once; telemetry comes from NVML
 * (topo/nvml.h, loaded with dlopen).
 *
 * Why these choices:
 *  - BF16/FP16 run on the tensor cores (cublasGemmEx, CUBLAS_COMPUTE_32F),
 *    which is what draws the most power on current GPUs; FP32 (plain SGEMM
 *    math, no TF32) and FP64 are options.
 *  - Matrices of 16384^2 (16-bit) or 8192^2 (32/64-bit) make one GEMM last
 *    ~10-20 ms on an H200: long enough to keep the GPU at its power limit,
 *    short enough that a stop request is seen within a batch or two (~0.2 s).
 *  - Two batches are kept in flight, and the faulty count reaches the host
 *    through mapped memory (not a copy), so neither the host's wake-up
 *    latency nor copy engines kept busy by --with-transfers leave the GPU
 *    idle between batches.
 *  - The same GEMM on the same inputs on one GPU gives the same result, so
 *    every CHECK_EVERY-th result is compared with the first; the tolerance
 *    (two units in the last place of the output type, relative to the
 *    element's magnitude plus the typical magnitude) only forgives a change
 *    of summation order, never a flipped exponent or high mantissa bit.
 *  - Workers poll gq_interrupt_requested() themselves, so Ctrl-C stops the
 *    load on every GPU at once, without waiting for the caller to reach
 *    each GPU's stress_stop.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "backend/cuda/cublas_dl.h"
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_priv.h"
#include "backend/cuda/stress_kernels.h"
#include "core/interrupt.h"
#include "core/units.h"
#include "topo/nvml.h"

#define CHECK_EVERY 4     /* compare every 4th GEMM with the reference */
#define BATCH_SECONDS 0.1 /* GEMMs enqueued between host syncs */
#define MAX_STATES 8      /* open "cuda" backends at once */

typedef struct stress_gpu {
    int dev;
    gq_precision prec;
    pthread_t th;
    atomic_bool stop;
    pthread_mutex_t mu; /* guards the fields below */
    uint64_t gemms, faulty;
    double t_update; /* when gemms was last updated (gq_now_mono) */
    double flops;    /* per GEMM */
    int n;           /* matrix order */
    int status;      /* GQ_OK, or the error that stopped the worker */
    char error[256];
    bool finished; /* the worker has returned */
    double t_loop; /* when the timed loop began (after the reference) */
    /* Caller side of stress_poll (one caller thread). */
    bool poll_init;
    uint64_t poll_gemms;
    double poll_t, poll_tflops;
} stress_gpu;

typedef struct stress_state {
    const gq_backend *be;
    stress_gpu *gpu[GQ_MAX_GPUS];
    int nvml; /* 0 not tried, 1 open, -1 failed */
    char nvml_error[256];
    gq_nvml_dev nvdev[GQ_MAX_GPUS];
    signed char nvdev_ok[GQ_MAX_GPUS]; /* 0 not looked up, 1 found, -1 not found */
    char nvdev_error[GQ_MAX_GPUS][160];
} stress_state;

static pthread_mutex_t states_mu = PTHREAD_MUTEX_INITIALIZER;
static stress_state *states[MAX_STATES];

/* State of one open backend; created on first use. NULL when out of slots. */
static stress_state *state_of(const gq_backend *be, bool create)
{
    stress_state *s = NULL;
    pthread_mutex_lock(&states_mu);
    for (int i = 0; i < MAX_STATES && !s; i++)
        if (states[i] && states[i]->be == be)
            s = states[i];
    for (int i = 0; i < MAX_STATES && !s && create; i++)
        if (!states[i]) {
            s = calloc(1, sizeof *s);
            if (s) {
                s->be = be;
                states[i] = s;
            }
            break;
        }
    pthread_mutex_unlock(&states_mu);
    return s;
}

static void set_error(stress_gpu *g, int status, const char *msg)
{
    pthread_mutex_lock(&g->mu);
    if (g->status == GQ_OK) {
        g->status = status;
        snprintf(g->error, sizeof g->error, "%.250s", msg);
    }
    pthread_mutex_unlock(&g->mu);
}

static const char *cublas_msg(cublasStatus_t st)
{
    switch (st) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "cuBLAS error";
    }
}

#define CKB(call)                                                                                            \
    do {                                                                                                     \
        cublasStatus_t ckb_st_ = (call);                                                                     \
        if (ckb_st_ != CUBLAS_STATUS_SUCCESS) {                                                              \
            rc = gq_err_set(err, GQ_E_BACKEND, "cuda_stress.c:%d: %.*s: %s", __LINE__,                       \
                            (int)strcspn(#call, "("), #call, cublas_msg(ckb_st_));                           \
            goto out;                                                                                        \
        }                                                                                                    \
    } while (0)

typedef struct gemm_desc {
    cudaDataType_t type;
    cublasComputeType_t compute;
    size_t elt;
    int n;
    double rtol;
} gemm_desc;

static gemm_desc describe(gq_precision p)
{
    switch (p) {
    case GQ_PREC_FP16: return (gemm_desc){CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 16384, 2.0 / 1024};
    case GQ_PREC_FP32: return (gemm_desc){CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 8192, 1e-5};
    case GQ_PREC_FP64: return (gemm_desc){CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, 8192, 1e-12};
    case GQ_PREC_BF16:
    default: return (gemm_desc){CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 16384, 2.0 / 128};
    }
}

static const gq_cublas *cublas; /* loaded by gq_cuda_stress_start before any worker runs */

static cublasStatus_t gemm(cublasHandle_t h, const gemm_desc *d, const void *A, const void *B, void *C)
{
    static const float one_f = 1.0f, zero_f = 0.0f;
    static const double one_d = 1.0, zero_d = 0.0;
    bool dbl = d->compute == CUBLAS_COMPUTE_64F;
    return cublas->gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, d->n, d->n, d->n, dbl ? (const void *)&one_d : &one_f,
                           A, d->type, d->n, B, d->type, d->n, dbl ? (const void *)&zero_d : &zero_f, C,
                           d->type, d->n, d->compute, CUBLAS_GEMM_DEFAULT);
}

/* One batch of the loop: `batch` GEMMs (every CHECK_EVERY-th result
 * compared with the reference), then the running faulty count published to
 * the batch's host slot, then its event. */
typedef struct batch_q {
    cublasHandle_t h;
    const gemm_desc *d;
    const void *A, *B, *R;
    void *C;
    size_t elems;
    int prec;
    unsigned long long *dcount;
    cudaStream_t st;
    int batch;
} batch_q;

static int enqueue_batch(const batch_q *q, unsigned long long *slot_d, cudaEvent_t ev, gq_err *err)
{
    int rc = GQ_OK;
    for (int i = 1; i <= q->batch; i++) {
        CKB(gemm(q->h, q->d, q->A, q->B, q->C));
        if (i % CHECK_EVERY == 0)
            CK(gq_k_stress_compare(q->C, q->R, q->elems, q->prec, q->d->rtol, sqrt((double)q->d->n) / 3.0,
                                   q->dcount, q->st));
    }
    CK(gq_k_stress_publish(q->dcount, slot_d, q->st));
    CK(cudaEventRecord(ev, q->st));
out:
    return rc;
}

/* The worker: set up, compute the reference, then GEMM in batches until
 * stopped. Any failure is recorded in g->status and ends the worker. */
static int worker_body(stress_gpu *g, gq_err *err)
{
    int rc = GQ_OK;
    cublasHandle_t h = NULL;
    cudaStream_t st = NULL;
    cudaEvent_t ev[2] = {NULL, NULL}, e0 = NULL, e1 = NULL;
    void *A = NULL, *B = NULL, *C = NULL, *R = NULL;
    unsigned long long *dcount = NULL, *hcount = NULL, *hcount_d = NULL;
    gemm_desc d = describe(g->prec);
    batch_q bq;

    CK(cudaSetDevice(g->dev));
    size_t freeb = 0, totalb = 0;
    CK(cudaMemGetInfo(&freeb, &totalb));
    /* Four matrices; stay within half of what is free, leaving room for
     * transfers running alongside (--with-transfers). */
    while (d.n > 1024 && 4.0 * d.n * (double)d.n * d.elt > freeb / 2.0)
        d.n /= 2;
    size_t elems = (size_t)d.n * d.n, bytes = elems * d.elt;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    /* Blocking-sync event: the host thread sleeps instead of spinning a core. */
    for (int k = 0; k < 2; k++)
        CK(cudaEventCreateWithFlags(&ev[k], cudaEventBlockingSync | cudaEventDisableTiming));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMalloc(&A, bytes));
    CK(cudaMalloc(&B, bytes));
    CK(cudaMalloc(&C, bytes));
    CK(cudaMalloc(&R, bytes));
    CK(cudaMalloc((void **)&dcount, sizeof *dcount));
    /* The faulty count reaches the host through mapped memory, written by a
     * one-thread kernel, not by a copy: with --with-transfers on 2 x H200 the
     * loop fell to 69 of 672 TFLOP/s while its 8-byte count copy shared the
     * copy engines with the transfers, which is the suspected cause
     * (bench/results/stress-2026-11-30.md). */
    CK(cudaHostAlloc((void **)&hcount, 2 * sizeof *hcount, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&hcount_d, hcount, 0));
    hcount[0] = hcount[1] = 0;
    CK(cudaMemsetAsync(dcount, 0, sizeof *dcount, st));
    CKB(cublas->create(&h));
    CKB(cublas->set_stream(h, st));
    CK(gq_k_stress_fill(A, elems, (int)g->prec, 0x5eed0001ull + (uint64_t)g->dev, st));
    CK(gq_k_stress_fill(B, elems, (int)g->prec, 0x5eed0002ull + (uint64_t)g->dev, st));

    /* Reference: the first result. Timing the second GEMM sizes the batches. */
    CKB(gemm(h, &d, A, B, R));
    CK(cudaEventRecord(e0, st));
    CKB(gemm(h, &d, A, B, C));
    CK(cudaEventRecord(e1, st));
    CK(gq_k_stress_compare(C, R, elems, (int)g->prec, d.rtol, sqrt((double)d.n) / 3.0, dcount, st));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    int batch = ms > 0 ? (int)(BATCH_SECONDS * 1e3 / ms) : 8;
    batch = batch < CHECK_EVERY ? CHECK_EVERY : batch > 4096 ? 4096 : batch;
    batch -= batch % CHECK_EVERY;

    pthread_mutex_lock(&g->mu);
    g->n = d.n;
    g->flops = 2.0 * d.n * (double)d.n * d.n;
    g->gemms = 2;
    g->t_update = g->t_loop = gq_now_mono();
    pthread_mutex_unlock(&g->mu);

    /* Two batches in flight: while the host wakes up for one, the GPU works
     * on the other, so it never idles between batches. Batches end in stream
     * order, so the slots are waited for alternately. */
    bq.h = h;
    bq.d = &d;
    bq.A = A;
    bq.B = B;
    bq.C = C;
    bq.R = R;
    bq.elems = elems;
    bq.prec = (int)g->prec;
    bq.dcount = dcount;
    bq.st = st;
    bq.batch = batch;
    for (int k = 0; k < 2; k++)
        if ((rc = enqueue_batch(&bq, hcount_d + k, ev[k], err)) != GQ_OK)
            goto out;
    for (int slot = 0;; slot ^= 1) {
        CK(cudaEventSynchronize(ev[slot]));
        unsigned long long f = ((volatile unsigned long long *)hcount)[slot];
        pthread_mutex_lock(&g->mu);
        g->gemms += (uint64_t)batch;
        g->faulty = f;
        g->t_update = gq_now_mono();
        pthread_mutex_unlock(&g->mu);
        if (atomic_load(&g->stop) || gq_interrupt_requested())
            break;
        if ((rc = enqueue_batch(&bq, hcount_d + slot, ev[slot], err)) != GQ_OK)
            goto out;
    }

out:
    /* The batch still in flight finishes before anything is freed. */
    if (st)
        cudaStreamSynchronize(st);
    if (h)
        cublas->destroy(h);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(R);
    cudaFree(dcount);
    if (hcount)
        cudaFreeHost(hcount);
    for (int k = 0; k < 2; k++)
        if (ev[k])
            cudaEventDestroy(ev[k]);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (st)
        cudaStreamDestroy(st);
    return rc;
}

static void *worker(void *arg)
{
    stress_gpu *g = arg;
    gq_err e = {0};
    int rc = worker_body(g, &e);
    if (rc != GQ_OK)
        set_error(g, rc, e.msg);
    pthread_mutex_lock(&g->mu);
    g->finished = true;
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int gq_cuda_stress_start(gq_backend *be, int gpu, gq_precision p, gq_err *err)
{
    gq_cuda_coll_trim(be->priv);
    int ndev = 0;
    cudaError_t ce = cudaGetDeviceCount(&ndev);
    if (ce != cudaSuccess)
        return gq_cuda_fail(err, ce, "cudaGetDeviceCount", __FILE__, __LINE__);
    if (gpu < 0 || gpu >= ndev || gpu >= GQ_MAX_GPUS)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist (this machine has GPUs 0-%d)", gpu,
                          ndev - 1);
    if (p < GQ_PREC_BF16 || p > GQ_PREC_FP64)
        return gq_err_set(err, GQ_E_USAGE, "unknown precision %d", (int)p);
    int rc = gq_cublas_load(&cublas, err);
    if (rc)
        return rc;
    stress_state *s = state_of(be, true);
    if (!s)
        return gq_err_set(err, GQ_E_NOMEM, "too many open CUDA backends for stress");
    if (s->gpu[gpu])
        return gq_err_set(err, GQ_E_USAGE, "GPU %d: a stress load is already running", gpu);
    stress_gpu *g = calloc(1, sizeof *g);
    if (!g)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    g->dev = gpu;
    g->prec = p;
    g->poll_tflops = NAN;
    atomic_init(&g->stop, false);
    pthread_mutex_init(&g->mu, NULL);
    g->t_update = gq_now_mono();
    if (pthread_create(&g->th, NULL, worker, g) != 0) {
        pthread_mutex_destroy(&g->mu);
        free(g);
        return gq_err_set(err, GQ_E_FAIL, "GPU %d: cannot start the stress thread", gpu);
    }
    s->gpu[gpu] = g;
    return GQ_OK;
}

int gq_cuda_stress_poll(gq_backend *be, int gpu, uint64_t *gemms, uint64_t *faulty, double *tflops,
                        gq_err *err)
{
    stress_state *s = state_of(be, false);
    stress_gpu *g = s && gpu >= 0 && gpu < GQ_MAX_GPUS ? s->gpu[gpu] : NULL;
    if (!g)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d: no stress load is running", gpu);
    pthread_mutex_lock(&g->mu);
    uint64_t n = g->gemms, f = g->faulty;
    double t = g->t_update, t_loop = g->t_loop, flops = g->flops;
    int status = g->status;
    char msg[sizeof g->error];
    memcpy(msg, g->error, sizeof msg);
    pthread_mutex_unlock(&g->mu);
    *gemms = n;
    *faulty = f;
    /* Rate since the previous poll, from the worker's own update times so
     * that the host's sampling jitter does not show up as rate noise. */
    if (!g->poll_init && flops > 0) {
        /* The two setup GEMMs (reference and first check) are not timed. */
        g->poll_init = true;
        g->poll_gemms = 2;
        g->poll_t = t_loop;
    }
    if (g->poll_init && n > g->poll_gemms && t > g->poll_t) {
        g->poll_tflops = (double)(n - g->poll_gemms) * flops / (t - g->poll_t) / 1e12;
        g->poll_gemms = n;
        g->poll_t = t;
    }
    *tflops = g->poll_tflops;
    if (status != GQ_OK)
        return gq_err_set(err, status, "%s", msg);
    return GQ_OK;
}

int gq_cuda_stress_stop(gq_backend *be, int gpu, gq_err *err)
{
    stress_state *s = state_of(be, false);
    stress_gpu *g = s && gpu >= 0 && gpu < GQ_MAX_GPUS ? s->gpu[gpu] : NULL;
    if (!g)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d: no stress load is running", gpu);
    atomic_store(&g->stop, true);
    pthread_join(g->th, NULL);
    s->gpu[gpu] = NULL;
    int rc = GQ_OK;
    if (g->status != GQ_OK)
        rc = gq_err_set(err, g->status, "%s", g->error);
    pthread_mutex_destroy(&g->mu);
    free(g);
    return rc;
}

int gq_cuda_nvml_dev(gq_backend *be, int gpu, gq_nvml_dev *dev, gq_err *err)
{
    stress_state *s = state_of(be, true);
    if (!s)
        return gq_err_set(err, GQ_E_NOMEM, "too many open CUDA backends");
    if (gpu < 0 || gpu >= GQ_MAX_GPUS)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist", gpu);
    if (s->nvml == 0) {
        gq_err e = {0};
        if (gq_nvml_open(&e) == GQ_OK)
            s->nvml = 1;
        else {
            s->nvml = -1;
            snprintf(s->nvml_error, sizeof s->nvml_error, "%.250s", e.msg);
        }
    }
    if (s->nvml < 0)
        return gq_err_set(err, GQ_E_UNSUPP, "%s", s->nvml_error);
    if (s->nvdev_ok[gpu] == 0) {
        /* NVML orders GPUs by PCI bus, CUDA by speed: match by bus id. */
        char bus[32];
        gq_err e = {0};
        cudaError_t ce = cudaDeviceGetPCIBusId(bus, sizeof bus, gpu);
        if (ce != cudaSuccess) {
            gq_cuda_fail(&e, ce, "cudaDeviceGetPCIBusId", __FILE__, __LINE__);
            s->nvdev_ok[gpu] = -1;
        } else if (gq_nvml_device_by_bus_id(bus, &s->nvdev[gpu], &e) == GQ_OK) {
            s->nvdev_ok[gpu] = 1;
        } else {
            s->nvdev_ok[gpu] = -1;
        }
        if (s->nvdev_ok[gpu] < 0)
            snprintf(s->nvdev_error[gpu], sizeof s->nvdev_error[gpu], "%.150s", e.msg);
    }
    if (s->nvdev_ok[gpu] < 0)
        return gq_err_set(err, GQ_E_UNSUPP, "GPU %d: NVML: %s", gpu, s->nvdev_error[gpu]);
    *dev = s->nvdev[gpu];
    return GQ_OK;
}

int gq_cuda_sample(gq_backend *be, int gpu, gq_sample *smp, gq_err *err)
{
    gq_nvml_dev d;
    int rc = gq_cuda_nvml_dev(be, gpu, &d, err);
    return rc ? rc : gq_nvml_sample(d, smp, err);
}

void gq_cuda_stress_fini(gq_backend *be)
{
    stress_state *s = state_of(be, false);
    if (!s)
        return;
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        if (s->gpu[i]) {
            gq_err e;
            gq_cuda_stress_stop(be, i, &e);
        }
    if (s->nvml > 0)
        gq_nvml_close();
    pthread_mutex_lock(&states_mu);
    for (int i = 0; i < MAX_STATES; i++)
        if (states[i] == s)
            states[i] = NULL;
    pthread_mutex_unlock(&states_mu);
    free(s);
}
