/* Prometheus text files (exposition format 0.0.4), as node_exporter's
 * textfile collector reads them: base units (bytes per second, seconds,
 * celsius, watts, hertz, 0-1 ratios), `_total` on counters, HELP and TYPE
 * for every family, each family's samples together. GPU series carry
 * dcgm-exporter's label names `gpu`, `UUID` and `Hostname`, so they join
 * with its series without relabelling; its `modelName` is `model_name` on
 * gpuqual_gpu_info (promtool refuses camelCase label names).
 * docs/prometheus.md lists every metric. */
#ifndef GQ_RENDER_PROMETHEUS_H
#define GQ_RENDER_PROMETHEUS_H

#include <stdio.h>

#include "analysis/stress.h"
#include "core/record.h"
#include "doc/card_summary.h"
#include "topo/topo.h"

struct json_t;

/* What every file says about the run: gpuqual_info and
 * gpuqual_last_run_timestamp_seconds (`now`: unix seconds). `command` is
 * "run", "stress", "card" or "fleet"; `source` is the topology's source
 * ("cuda", "sim:NAME", ...) or NULL. */
void gq_prom_header(FILE *f, const char *command, const char *hostname, const char *source, double now);

/* gpuqual_gpu_info: one series per GPU of topo with its identity and the
 * command that wrote it (files of run, stress and card side by side never
 * hold the same series), pci_bus_id as DCGM writes it (00000000:3B:00.0);
 * nothing when topo is NULL or has no GPU. */
void gq_prom_gpus(FILE *f, const gq_topo *topo, const char *command);

/* `gpuqual run` (prefix "gpuqual") and `card` ("gpuqual_card": its measured
 * figures, with or without --expect): one series per record and statistic
 * (median, min, max) of its bandwidth in bytes per second or latency in
 * seconds, its spread and overlap ratios and whether it is valid, as
 * PREFIX_bandwidth_bytes_per_second and so on. topo (may be NULL) gives the
 * GPU labels. */
void gq_prom_records(FILE *f, const gq_recordset *rs, const gq_topo *topo, const char *prefix);
/* gpuqual_run_incomplete: 1 when the run was interrupted (Ctrl-C) and its
 * figures are only part of what it was asked to measure, else 0. */
void gq_prom_run_incomplete(FILE *f, const gq_topo *topo, bool incomplete);

/* `gpuqual stress`: the node's and each GPU's verdict, one series per
 * verdict value, and the per-GPU telemetry summary. */
void gq_prom_stress(FILE *f, const gq_stress_summary *s, const gq_topo *topo);

/* `gpuqual card` and `fleet`: `nodes` are the node summaries, typed
 * (doc/card_summary.h, gq_card_node: hostname, rank, verdict, exit_code and
 * each check's id, subject, verdict, evidence, figure and unit): the card's
 * verdict, one series per verdict value, its exit code, and each check's
 * verdict and figure. */
void gq_prom_nodes(FILE *f, const gq_card_nodes *nodes);

/* The same from an array of node summaries as JSON ({"hostname", "verdict",
 * "exit_code", "checks": [{"id", "subject", "verdict", "evidence", "figure",
 * "unit"}]}, as gq_card_node_summary makes them from a card document),
 * decoded by gq_card_nodes_from_json (nothing is written when that runs out
 * of memory). */
void gq_prom_cards(FILE *f, const struct json_t *nodes);

#endif
