/* Internal: the GPUs Slurm gave to jobs on this node, as gpukit sees them.
 *
 * `gpukit slurm prolog` (run by slurmd as root when a job starts) records
 * the job in the Slurm directory (GPUKIT_SLURM_DIR, else
 * /run/gpukit/slurm): a file per GPU, named by its index and holding the
 * ids of the jobs on it, one per line (the job mapping DCGM-exporter reads
 * with --hpc-job-mapping-dir), and a record per job (.job-ID: its user,
 * GPUs and start). `gpukit slurm epilog` removes them. gk_lease_list adds
 * the recorded jobs to the leases, so pick, run, leases, top and serve all
 * see which GPUs Slurm jobs hold. */
#ifndef GK_SELECT_SLURM_H
#define GK_SELECT_SLURM_H

#include <gpukit/lease.h>
#include <gpukit/probe.h>

#include <stdbool.h>
#include <stddef.h>

#define GK_SLURM_DEFAULT_DIR "/run/gpukit/slurm"

/* The Slurm directory: `given`, else $GPUKIT_SLURM_DIR, else the default. */
const char *gk_slurm_dir(const char *given);

/* Records job `id` (digits) of `uid`/`user` on the GPUs `indices` (UUIDs
 * from `snapshot` where it has them) in `dir`, creating it. Serialised with
 * other prologs and epilogs by a lock on the directory. */
gk_status gk_slurm_record(const char *dir, const char *id, uint32_t uid, const char *user,
                          const unsigned *indices, size_t count, const gk_snapshot *snapshot);

/* Removes job `id`'s record and its lines from the GPU files (a file left
 * empty is removed). A job never recorded is no error. */
gk_status gk_slurm_forget(const char *dir, const char *id);

/* Appends the recorded jobs of `dir` (none when it does not exist) to a
 * lease list, as leases with `slurm` set, named "slurm-ID". */
gk_status gk_slurm_append_leases(const char *dir, gk_lease **leases, size_t *count);

#endif
