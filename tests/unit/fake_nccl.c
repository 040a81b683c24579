/* A stand-in NCCL for tests/unit/test_nccl_dl.c (loaded by
 * backend/cuda/nccl_dl.c with dlopen, named by GQ_NCCL_LIB): the entry
 * points the loader resolves, reporting version 2.23.4; none of them runs a
 * collective. Built twice: whole, and with FAKE_NCCL_OLD without ncclSend
 * and ncclRecv, as NCCL before 2.7. */
#include <stddef.h>

typedef int res_t; /* ncclResult_t */
#define OK 0
#define INVALID_USAGE 5

struct ncclComm;
struct CUstream_st;

res_t ncclGetVersion(int *version);
res_t ncclCommInitAll(struct ncclComm **comms, int ndev, const int *devlist);
res_t ncclCommDestroy(struct ncclComm *comm);
res_t ncclCommAbort(struct ncclComm *comm);
res_t ncclCommGetAsyncError(struct ncclComm *comm, res_t *e);
const char *ncclGetErrorString(res_t r);
res_t ncclGroupStart(void);
res_t ncclGroupEnd(void);
res_t ncclAllReduce(const void *s, void *r, size_t n, int t, int op, struct ncclComm *c,
                    struct CUstream_st *st);
res_t ncclAllGather(const void *s, void *r, size_t n, int t, struct ncclComm *c, struct CUstream_st *st);
res_t ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, struct ncclComm *c,
                        struct CUstream_st *st);
res_t ncclBroadcast(const void *s, void *r, size_t n, int t, int root, struct ncclComm *c,
                    struct CUstream_st *st);

res_t ncclGetVersion(int *version)
{
    *version = 22304;
    return OK;
}

res_t ncclCommInitAll(struct ncclComm **comms, int ndev, const int *devlist)
{
    (void)comms, (void)ndev, (void)devlist;
    return INVALID_USAGE;
}

res_t ncclCommDestroy(struct ncclComm *comm)
{
    (void)comm;
    return OK;
}

res_t ncclCommAbort(struct ncclComm *comm)
{
    (void)comm;
    return OK;
}

res_t ncclCommGetAsyncError(struct ncclComm *comm, res_t *e)
{
    (void)comm;
    *e = OK;
    return OK;
}

const char *ncclGetErrorString(res_t r)
{
    return r == INVALID_USAGE ? "invalid usage (run with NCCL_DEBUG=WARN for details)" : "fake error";
}

res_t ncclGroupStart(void)
{
    return OK;
}

res_t ncclGroupEnd(void)
{
    return OK;
}

res_t ncclAllReduce(const void *s, void *r, size_t n, int t, int op, struct ncclComm *c,
                    struct CUstream_st *st)
{
    (void)s, (void)r, (void)n, (void)t, (void)op, (void)c, (void)st;
    return INVALID_USAGE;
}

res_t ncclAllGather(const void *s, void *r, size_t n, int t, struct ncclComm *c, struct CUstream_st *st)
{
    (void)s, (void)r, (void)n, (void)t, (void)c, (void)st;
    return INVALID_USAGE;
}

res_t ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, struct ncclComm *c,
                        struct CUstream_st *st)
{
    (void)s, (void)r, (void)n, (void)t, (void)op, (void)c, (void)st;
    return INVALID_USAGE;
}

res_t ncclBroadcast(const void *s, void *r, size_t n, int t, int root, struct ncclComm *c,
                    struct CUstream_st *st)
{
    (void)s, (void)r, (void)n, (void)t, (void)root, (void)c, (void)st;
    return INVALID_USAGE;
}

#ifndef FAKE_NCCL_OLD
res_t ncclSend(const void *s, size_t n, int t, int peer, struct ncclComm *c, struct CUstream_st *st);
res_t ncclRecv(void *r, size_t n, int t, int peer, struct ncclComm *c, struct CUstream_st *st);

res_t ncclSend(const void *s, size_t n, int t, int peer, struct ncclComm *c, struct CUstream_st *st)
{
    (void)s, (void)n, (void)t, (void)peer, (void)c, (void)st;
    return INVALID_USAGE;
}

res_t ncclRecv(void *r, size_t n, int t, int peer, struct ncclComm *c, struct CUstream_st *st)
{
    (void)r, (void)n, (void)t, (void)peer, (void)c, (void)st;
    return INVALID_USAGE;
}
#endif
