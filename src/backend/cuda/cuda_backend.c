/* PLACEHOLDER until the simulated fabric lands: discovers nothing. */
#include "backend/backend.h"
static int cuda_init(gq_backend *be, const gq_backend_opts *o, gq_err *err)
{
    (void)be; (void)o;
    return gq_err_set(err, GQ_E_UNSUPP, "the CUDA backend is not implemented yet");
}
static void cuda_fini(gq_backend *be) { (void)be; }
static int cuda_discover(gq_backend *be, gq_topo *t, gq_err *err) { (void)be; (void)t; (void)err; return GQ_OK; }
static int cuda_prepare(gq_backend *be, const gq_flow *f, int n, gq_group **g, gq_err *err)
{ (void)be; (void)f; (void)n; (void)g; return gq_err_set(err, GQ_E_UNSUPP, "not implemented"); }
static int cuda_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *r, gq_err *err)
{ (void)be; (void)g; (void)o; (void)r; return gq_err_set(err, GQ_E_UNSUPP, "not implemented"); }
static void cuda_release(gq_backend *be, gq_group *g) { (void)be; (void)g; }
const gq_backend_ops gq_backend_cuda_ops = {
    .version = GQ_BACKEND_OPS_VERSION, .name = "cuda", .flags = 0,
    .init = cuda_init, .fini = cuda_fini, .discover = cuda_discover,
    .prepare = cuda_prepare, .run = cuda_run, .release = cuda_release,
};
