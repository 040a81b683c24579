/* The simulated backend's stress load and telemetry model (issue 7), and the
 * fault injection of --sim-fault.
 *
 * Link readings: under load the trained generation and width (the
 * topology's negotiated link); at idle Gen1 at the trained width.
 *
 * Model, per GPU, in virtual time (the ops' wait hook advances it, so a
 * 5-minute stress runs in milliseconds):
 *  - power: idle at 10% of the limit; under a GEMM load the GPU asks for
 *    more than its limit (120% for 16-bit, 110% fp32, 100% fp64) and is held
 *    at the limit, with the SW power cap reason set;
 *  - SM clock: boost when not capped, boost x (limit/demand)^0.88 when capped
 *    (seed 001: 2,208-2,249 MHz under a 600 W cap on 2,617 MHz parts);
 *  - temperature: first order from 32 C towards ambient + R x power
 *    (tau 26 s), about 71 C steady at the limit, plus a fixed per-GPU offset
 *    of up to +-0.4 C (seed 001, five minutes at the limit: 66.5-68.2 C
 *    average per GPU, 71 C at most);
 *  - a per-GPU clock offset of up to +-0.92% (seed 001 saw 1.9% spread);
 *  - achieved TFLOP/s from the model's rate x clock ratio; counters of
 *    GEMMs and faulty elements as the CUDA backend reports them.
 * Noise on power, temperature and clocks is deterministic (seed, GPU,
 * sample), linear in the simulator's one noise scale (--sim-noise, else the
 * topology's `noise`; the sizes above are at 0.01, the calibrated default;
 * 0 turns noise and offsets off).
 *
 * Faults ("gpuN:KIND", comma-separated):
 *   thermal        cooling fails: temperature heads for ~110 C; at 88 C the
 *                  GPU throttles (SW thermal, HW thermal and HW slowdown set,
 *                  clocks and power drop) until it is back under 84 C;
 *   ecc            uncorrected ECC errors from 5 s under load (+1 / 20 s),
 *                  and corrected ones (+3 / 10 s);
 *   faulty-result  from 3 s under load, 7 faulty elements every 2 s;
 *   link-x8        the PCIe link runs at x8 while loaded (x16 idle), and the
 *                  replay counter rises 2 per second under load; the GPU's
 *                  PCIe link carries half its bandwidth in every measurement
 *                  (the sim backend halves it at init);
 *   busy           another process (pid 4242, "sim-load") uses the GPU:
 *                  the observe hook lists it with 100% utilization and 20 GiB
 *                  in use, and the GPU's link and local copies slow down (its
 *                  link to 60%, local copies to 45%, memory latency x2: what
 *                  a GEMM load did to one H200's figures);
 *   lost           the GPU falls off the bus after 10 s under load.
 * and, for the whole machine, "no-nccl" (NCCL is not installed) and
 * "interrupt@N" (a Ctrl-C during the N-th measurement call; gq_sim_faults).
 */
#ifndef GQ_BACKEND_SIM_STRESS_H
#define GQ_BACKEND_SIM_STRESS_H

#include "backend/backend.h"

#define GQ_SIM_FAULT_THERMAL 0x1u
#define GQ_SIM_FAULT_ECC 0x2u
#define GQ_SIM_FAULT_FAULTY 0x4u
#define GQ_SIM_FAULT_LINK_X8 0x8u
#define GQ_SIM_FAULT_LOST 0x10u
#define GQ_SIM_FAULT_BUSY 0x20u

#define GQ_SIM_MAX_NODE_FAULTS 8
#define GQ_SIM_INTERRUPT_MAX 1000000000L /* the largest N of interrupt@N */

/* Faults per GPU (bitmask of GQ_SIM_FAULT_*), and the switches and bridges
 * whose uplink trains down to x8 ("sw0:link-x8": node names of the
 * topology, checked against the machine by the sim backend's init). */
typedef struct gq_sim_faults {
    unsigned gpu[GQ_MAX_GPUS];
    int nnode;
    char node[GQ_SIM_MAX_NODE_FAULTS][48];
    bool no_nccl; /* "no-nccl": NCCL is not installed (coll_probe says so; collectives exit 7) */
    /* "interrupt@N": a Ctrl-C arrives during the simulator's N-th measurement
     * call (1 = the first; 0 = none). The calls counted, in the order they
     * come: copy runs, latency queries, collective runs (one each, however
     * many copies it makes) and stress ticks (a wait while a stress load
     * runs). The call completes, as a real one does when the signal arrives
     * in flight; gq_interrupt_request() is called as the SIGINT handler
     * would, and the command's own polling stops it there. */
    long interrupt_at;
} gq_sim_faults;

/* Parse "gpu3:thermal,gpu1:ecc,sw0:link-x8". NULL or "" = no faults. ngpu > 0 also
 * rejects GPUs the machine does not have ("GPU 9 does not exist (this
 * machine has GPUs 0-7)"); with ngpu 0 (the machine not known yet) only the
 * grammar is checked, and a GPU number of GQ_MAX_GPUS or more is left out
 * of *out (the sim backend's init checks it against the machine). GQ_E_USAGE
 * with one line naming the bad item and listing the valid kinds. */
int gq_sim_faults_parse(const char *spec, int ngpu, gq_sim_faults *out, gq_err *err);

/* The stress and telemetry model of one open sim backend. The sim backend
 * keeps it in its be->priv (there are no global tables): its init creates
 * it from its options (seed, noise: the backend's scale, < 0 = GQ_SIM_NOISE_DEFAULT, faults) and its fini
 * frees it. NULL when out of memory. */
typedef struct gq_sim_stress gq_sim_stress;
gq_sim_stress *gq_sim_stress_new(uint64_t seed, double noise, const gq_sim_faults *faults);
void gq_sim_stress_free(gq_sim_stress *s);

/* The ops hooks (contracts in backend/backend.h), on the model s of backend
 * be (the model learns the machine from be's discover on first use). */
int gq_sim_stress_start(gq_sim_stress *s, gq_backend *be, int gpu, gq_precision p, gq_err *err);
int gq_sim_stress_poll(gq_sim_stress *s, gq_backend *be, int gpu, uint64_t *gemms, uint64_t *faulty,
                       double *tflops, gq_err *err);
int gq_sim_stress_stop(gq_sim_stress *s, gq_backend *be, int gpu, gq_err *err);
int gq_sim_sample(gq_sim_stress *s, gq_backend *be, int gpu, gq_sample *x, gq_err *err);
void gq_sim_stress_wait(gq_sim_stress *s, double seconds);
/* Whether a stress load runs on some GPU (a wait is then a stress tick). */
bool gq_sim_stress_loaded(const gq_sim_stress *s);

#endif
