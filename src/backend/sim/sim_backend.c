/* PLACEHOLDER until the simulated fabric lands: discovers nothing. */
#include "backend/backend.h"
static int sim_init(gq_backend *be, const gq_backend_opts *o, gq_err *err)
{
    (void)be; (void)o;
    return gq_err_set(err, GQ_E_UNSUPP, "the simulated backend is not implemented yet");
}
static void sim_fini(gq_backend *be) { (void)be; }
static int sim_discover(gq_backend *be, gq_topo *t, gq_err *err) { (void)be; (void)t; (void)err; return GQ_OK; }
static int sim_prepare(gq_backend *be, const gq_flow *f, int n, gq_group **g, gq_err *err)
{ (void)be; (void)f; (void)n; (void)g; return gq_err_set(err, GQ_E_UNSUPP, "not implemented"); }
static int sim_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *r, gq_err *err)
{ (void)be; (void)g; (void)o; (void)r; return gq_err_set(err, GQ_E_UNSUPP, "not implemented"); }
static void sim_release(gq_backend *be, gq_group *g) { (void)be; (void)g; }
const gq_backend_ops gq_backend_sim_ops = {
    .version = GQ_BACKEND_OPS_VERSION, .name = "sim", .flags = GQ_BE_SIMULATED | GQ_BE_VIRTUAL_TIME,
    .init = sim_init, .fini = sim_fini, .discover = sim_discover,
    .prepare = sim_prepare, .run = sim_run, .release = sim_release,
};
