/* Run-time loading of FFTW 3: see fftw.h. */
#include "ext/fftw.h"

#include "core/error.h"
#include "ext/loader.h"
#include "ext/openmp.h"

#include <stddef.h>

/* The same functions under fftw_ (double) and fftwf_ (single) names. */
#define ENTRY_POINTS(prefix)                                                                       \
    {                                                                                              \
        {prefix "plan_guru64_dft", 1, offsetof(gk_fftw, plan_dft)},                                \
            {prefix "plan_guru64_dft_r2c", 1, offsetof(gk_fftw, plan_r2c)},                        \
            {prefix "plan_guru64_dft_c2r", 1, offsetof(gk_fftw, plan_c2r)},                        \
            {prefix "execute_dft", 1, offsetof(gk_fftw, execute_dft)},                             \
            {prefix "execute_dft_r2c", 1, offsetof(gk_fftw, execute_r2c)},                         \
            {prefix "execute_dft_c2r", 1, offsetof(gk_fftw, execute_c2r)},                         \
            {prefix "destroy_plan", 1, offsetof(gk_fftw, destroy_plan)},                           \
            {prefix "alignment_of", 1, offsetof(gk_fftw, alignment_of)},                           \
            {prefix "init_threads", 0, offsetof(gk_fftw, init_threads)},                           \
            {prefix "plan_with_nthreads", 0, offsetof(gk_fftw, plan_with_nthreads)},               \
    }

static const gk_entry_point double_entry_points[] = ENTRY_POINTS("fftw_");
static const gk_entry_point single_entry_points[] = ENTRY_POINTS("fftwf_");

/* Threaded by OpenMP first (the CPU backend's runtime, so the two share
 * one team of threads), then by pthreads, then not. */
static const char *const double_names[] = {"libfftw3_omp.so.3", "libfftw3_threads.so.3",
                                           "libfftw3.so.3"};
static const char *const single_names[] = {"libfftw3f_omp.so.3", "libfftw3f_threads.so.3",
                                           "libfftw3f.so.3"};

static gk_fftw double_table, single_table;

/* The threads library must be set up once before any planning. */
static void set_up_threads(gk_library *lib)
{
    gk_fftw *table = lib->table;
    if (table->init_threads && table->plan_with_nthreads)
        table->threaded = table->init_threads() != 0;
}

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static gk_library double_library = {
    "FFTW (double precision)", "GPUKIT_FFTW_LIBRARY", double_names, COUNT(double_names),
    double_entry_points, COUNT(double_entry_points),
    "install FFTW 3 (Debian, Ubuntu: apt install libfftw3-double3; Fedora: dnf install fftw-libs-double)",
    &double_table, sizeof double_table, &double_table.library, double_table.path,
    sizeof double_table.path, set_up_threads, 0, GK_OK, "",
    &gk_openmp_short_spin}; /* libfftw3_omp brings libgomp in */

static gk_library single_library = {
    "FFTW (single precision)", "GPUKIT_FFTWF_LIBRARY", single_names, COUNT(single_names),
    single_entry_points, COUNT(single_entry_points),
    "install FFTW 3 (Debian, Ubuntu: apt install libfftw3-single3; Fedora: dnf install fftw-libs-single)",
    &single_table, sizeof single_table, &single_table.library, single_table.path,
    sizeof single_table.path, set_up_threads, 0, GK_OK, "",
    &gk_openmp_short_spin}; /* libfftw3_omp brings libgomp in */

gk_status gk_fftw_open(const char *op, int single, const gk_fftw **fftw)
{
    gk_status status = gk_library_open(single ? &single_library : &double_library, op);
    *fftw = status != GK_OK ? NULL : single ? &single_table : &double_table;
    return status;
}
