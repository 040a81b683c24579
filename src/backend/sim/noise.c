/* The simulator's measured noise model (docs/method.md, "The simulator's
 * noise", says which real run gave each number below).
 *
 * One scale, FRAC (--sim-noise, or the topology's `noise`): the amplitude of
 * the round-to-round jitter of a host path that shares a link with other
 * copies. Every part below is a fixed multiple of FRAC, and a figure is
 * multiplied by exp(FRAC x (drift + jitter - slow)), which is
 * 1 + FRAC x (...) to first order and never negative; FRAC 0 multiplies by
 * exactly 1 and starts every worker at the same instant, so a run without
 * noise is the same, bit for bit, whatever the seed.
 *
 * Every draw is a hash of the seed and what the draw belongs to: the same
 * seed gives the same figures, always.
 */
#include <math.h>

#include "backend/sim/sim.h"

/* clang-format off */
/* Per path class, multiples of FRAC (amplitudes of triangular draws on
 * [-1, 1], whose standard deviation is amplitude / sqrt 6).
 *                      jitter alone, shared; drift common, path; shared x; slow alone, shared */
const gq_sim_noise_params gq_sim_noise_bw[GQ_SIM_NPC] = {
    [GQ_SIM_PC_HOST]   = {{0.4, 1.0}, 1.5, 0.75, 3.0, {0.005, 0.05}},
    [GQ_SIM_PC_P2P]    = {{0.2, 0.5}, 0.75, 0.4, 3.0, {0.0025, 0.025}},
    [GQ_SIM_PC_NVLINK] = {{0.1, 0.1}, 0.05, 0.03, 1.0, {0.001, 0.001}},
    [GQ_SIM_PC_LOCAL]  = {{0.1, 0.1}, 0.35, 0.35, 1.0, {0.001, 0.001}},
};
/* Latency, by the class of the path it crosses: jitter (alone), drift common and
 * per path; no shared flows and no slow rounds. */
const gq_sim_noise_params gq_sim_noise_lat[GQ_SIM_NPC] = {
    [GQ_SIM_PC_HOST]   = {{1.0, 1.0}, 1.5, 0.75, 1.0, {0, 0}},
    [GQ_SIM_PC_P2P]    = {{0.7, 0.7}, 1.0, 0.5, 1.0, {0, 0}},
    [GQ_SIM_PC_NVLINK] = {{0.7, 0.7}, 1.0, 0.5, 1.0, {0, 0}},
    [GQ_SIM_PC_LOCAL]  = {{0.5, 0.5}, 0.5, 0.25, 1.0, {0, 0}},
};
/* clang-format on */

/* Salts that keep the draws of the parts apart. */
#define SALT_DRIFT_CLASS 0x6472696674636c73ull
#define SALT_DRIFT_PATH 0x6472696674706174ull
#define SALT_JITTER 0x6a6974746572ull
#define SALT_JITTER_RUN 0x6a6974746572756eull
#define SALT_SLOW 0x736c6f77ull
#define SALT_SLOW_DEPTH 0x736c6f7764ull
#define SALT_SKEW 0x736b6577ull
#define SALT_SKEW_HIT 0x736b6577686974ull
#define SALT_LAT 0x6c6174ull

double gq_sim_uniform(uint64_t key)
{
    return (double)(gq_sim_hash(key, 0x756e69666f726dull) >> 11) / 9007199254740992.0;
}

/* The drift of a class or path in a run: fixed by the seed alone. */
static double drift(const gq_sim_noise_params *p, uint64_t seed, int cls, uint64_t path, bool shared,
                    uint64_t salt)
{
    double common = gq_sim_noise_unit(gq_sim_hash(gq_sim_hash(seed, salt ^ SALT_DRIFT_CLASS), (uint64_t)cls));
    double own = gq_sim_noise_unit(gq_sim_hash(gq_sim_hash(seed, salt ^ SALT_DRIFT_PATH), path));
    return p->drift_common * (shared ? p->drift_shared : 1.0) * common + p->drift_path * own;
}

double gq_sim_flow_noise(uint64_t seed, double frac, double drift_share, gq_sim_path_class cls, int nshared,
                         uint64_t path, uint64_t flow, uint64_t call, gq_sim_noise_parts *parts)
{
    gq_sim_noise_parts x = {0};
    if (frac > 0 && (unsigned)cls < GQ_SIM_NPC) {
        const gq_sim_noise_params *p = &gq_sim_noise_bw[cls];
        bool shared = nshared > 0;
        x.drift = drift_share * drift(p, seed, (int)cls, path, shared, 0);
        uint64_t k = gq_sim_hash(gq_sim_hash(seed, call), flow);
        double own = gq_sim_noise_unit(k ^ SALT_JITTER);
        if (shared) {
            /* What a shared bottleneck does in a round, every flow through
             * it sees: most of a shared flow's jitter is the run's. */
            double run = gq_sim_noise_unit(gq_sim_hash(gq_sim_hash(seed, call), SALT_JITTER_RUN));
            own = GQ_SIM_JITTER_CORR * run + (1.0 - GQ_SIM_JITTER_CORR) * own;
        }
        x.jitter = p->jitter[shared] * own;
        /* a run of shared flows has slow rounds at the rate a pair of them
         * showed (2 x slow_p[1] a round), spread over however many share */
        double ps = shared ? p->slow_p[1] * 2.0 / (nshared > 2 ? nshared : 2) : p->slow_p[0];
        if (gq_sim_uniform(k ^ SALT_SLOW) < ps) {
            x.slow =
                GQ_SIM_SLOW_MIN + (GQ_SIM_SLOW_MAX - GQ_SIM_SLOW_MIN) * gq_sim_uniform(k ^ SALT_SLOW_DEPTH);
            x.slowed = true;
        }
    }
    x.factor = frac > 0 ? exp(frac * (x.drift + x.jitter - x.slow)) : 1.0;
    if (parts)
        *parts = x;
    return x.factor;
}

double gq_sim_start_delay(uint64_t seed, double frac, uint64_t flow, uint64_t call)
{
    if (!(frac > 0))
        return 0;
    return frac * GQ_SIM_SKEW_S * gq_sim_uniform(gq_sim_hash(gq_sim_hash(seed, call), flow) ^ SALT_SKEW);
}

int gq_sim_late_flow(uint64_t seed, double share, int nflows, uint64_t call)
{
    if (!(share > 0) || nflows < 2)
        return -1;
    uint64_t k = gq_sim_hash(gq_sim_hash(seed, call), SALT_SKEW_HIT);
    if (share < 1 && !(gq_sim_uniform(k) < share))
        return -1;
    return (int)(gq_sim_hash(k, 1) % (uint64_t)nflows);
}

double gq_sim_latency_noise(uint64_t seed, double frac, gq_sim_path_class cls, uint64_t path, uint64_t call)
{
    if (!(frac > 0) || (unsigned)cls >= GQ_SIM_NPC)
        return 1.0;
    const gq_sim_noise_params *p = &gq_sim_noise_lat[cls];
    double d = drift(p, seed, (int)cls, path, false, SALT_LAT);
    double j = p->jitter[0] * gq_sim_noise_unit(gq_sim_hash(gq_sim_hash(seed, call), path) ^ SALT_LAT);
    return exp(frac * (d + j));
}
