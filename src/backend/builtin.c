#include "backend/backend.h"

extern const gq_backend_ops gq_backend_sim_ops;
#ifdef GQ_HAVE_CUDA
extern const gq_backend_ops gq_backend_cuda_ops;
#endif

void gq_backend_register_builtin(void)
{
    /* Built-in ops are static tables checked by tests/unit/test_backend.c;
     * a failure here would be a programming error, so it is not reported. */
#ifdef GQ_HAVE_CUDA
    gq_backend_register(&gq_backend_cuda_ops, NULL);
#endif
    gq_backend_register(&gq_backend_sim_ops, NULL);
}
