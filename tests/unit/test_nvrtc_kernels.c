/* Every GPU kernel source through NVRTC, as CI's proof that the CUDA
 * kernels compile (the machines here have no GPU, and NVRTC needs none):
 *
 * - each built-in program: src/compute/kernels/<family>.gk for each dtype
 *   it has (gk_gpu_family_has_dtype: float16 and bfloat16 only for
 *   elementwise, complex also for matmul), the full source being
 *   dialect.h, types.h, complex.h and the family's file with
 *   -DGK_DTYPE=<n>, exactly as the runtime compiles it;
 * - each example kernel: examples/kernels/<name>.gk, a portable-dialect
 *   source (dialect.h in front, no dtype);
 *
 * for sm_70, sm_80 and sm_90, each when this NVRTC supports the
 * architecture (CUDA 13 dropped sm_70, which is then skipped with a
 * note): to PTX, and for the newest of them to machine code, so that
 * ptxas checks every program too (it is most of the time a compile takes,
 * and its checks do not depend on the architecture). It fails when none of the three is
 * supported, on any compile error (printing NVRTC's log), and when NVRTC
 * cannot be loaded, unless GPUKIT_NO_NVRTC=1 says the toolkit is
 * deliberately absent.
 *
 * The sources are read from the source tree: GPUKIT_SOURCE_DIR, else the
 * first directory holding src/compute/kernels/dialect.h going up from the
 * current directory, then from this program's directory (or the source
 * directory its build's CMakeCache.txt names). Compiles run on a few
 * threads (NVRTC programs are independent). */
#define _GNU_SOURCE
#include "check.h"

#include "compute/gpu/gpu.h"
#include "ext/nvrtc.h"

#include <gpukit/array.h>

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int wanted_archs[] = {70, 80, 90};

#define MAX_JOBS 1024
#define MAX_THREADS 8

/* --- files --- */

static char *read_file(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    char *text = NULL;
    size_t length = 0, capacity = 0, got;
    do {
        if (length + 4096 + 1 > capacity) {
            capacity = capacity ? 2 * capacity : 65536;
            char *grown = realloc(text, capacity);
            if (!grown) {
                free(text);
                fclose(file);
                return NULL;
            }
            text = grown;
        }
        got = fread(text + length, 1, 4096, file);
        length += got;
    } while (got > 0);
    fclose(file);
    text[length] = '\0';
    if (size)
        *size = length;
    return text;
}

static int has_kernels(const char *root)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/src/compute/kernels/dialect.h", root);
    return access(path, R_OK) == 0;
}

/* The source directory a build directory's CMakeCache.txt names. */
static int source_of_build(const char *build, char *root, size_t size)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/CMakeCache.txt", build);
    char *cache = read_file(path, NULL);
    if (!cache)
        return 0;
    const char *key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
    char *line = strstr(cache, key);
    int found = 0;
    if (line) {
        line += strlen(key);
        size_t length = strcspn(line, "\r\n");
        if (length < size) {
            memcpy(root, line, length);
            root[length] = '\0';
            found = has_kernels(root);
        }
    }
    free(cache);
    return found;
}

/* Walks up from `start` to a directory holding the kernels, or a build
 * directory whose cache names one. */
static int walk_up(const char *start, char *root, size_t size)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", start);
    for (;;) {
        if (has_kernels(dir)) {
            snprintf(root, size, "%s", dir);
            return 1;
        }
        if (source_of_build(dir, root, size))
            return 1;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return 0;
        *slash = '\0';
    }
}

static int find_source_tree(char *root, size_t size)
{
    const char *env = getenv("GPUKIT_SOURCE_DIR");
    if (env && *env) {
        snprintf(root, size, "%s", env);
        if (has_kernels(root))
            return 1;
        fprintf(stderr, "GPUKIT_SOURCE_DIR=%s has no src/compute/kernels/dialect.h\n", env);
        return 0;
    }
    char dir[PATH_MAX];
    if (getcwd(dir, sizeof dir) && walk_up(dir, root, size))
        return 1;
    ssize_t length = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (length > 0) {
        dir[length] = '\0';
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        if (walk_up(dir, root, size))
            return 1;
    }
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The names of the *.gk files of a directory, sorted; 0 when it is
 * absent. */
static int list_gk(const char *dir, char names[][256], int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) && count < max) {
        size_t length = strlen(entry->d_name);
        if (length > 3 && length < 256 && strcmp(entry->d_name + length - 3, ".gk") == 0)
            snprintf(names[count++], 256, "%s", entry->d_name);
    }
    closedir(d);
    qsort(names, (size_t)count, sizeof names[0], compare_names);
    return count;
}

/* --- compiles --- */

typedef struct job {
    char name[300];    /* "elementwise_float32", what NVRTC's log calls it */
    char label[320];   /* "elementwise_float32 for sm_90" */
    const char *source;
    char options[64];
    char arch[16];
    int machine_code; /* a cubin (PTX and ptxas), else PTX only */
    int failed;
    char *log;         /* on failure, or warnings */
    char message[512]; /* gk_last_error() on failure */
} job;

static job jobs[MAX_JOBS];
static int job_count;
static int next_job;
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *unused)
{
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&jobs_lock);
        int i = next_job < job_count ? next_job++ : -1;
        pthread_mutex_unlock(&jobs_lock);
        if (i < 0)
            return NULL;
        job *j = &jobs[i];
        void *binary = NULL;
        size_t size = 0;
        gk_status status = gk_nvrtc_compile(j->source, j->name, j->options, j->arch,
                                            j->machine_code, &binary, &size, &j->log);
        if (status != GK_OK) {
            j->failed = 1;
            snprintf(j->message, sizeof j->message, "%s", gk_last_error());
        } else if (j->machine_code && (size < 4 || memcmp(binary, "\x7f" "ELF", 4) != 0)) {
            j->failed = 1;
            snprintf(j->message, sizeof j->message, "NVRTC gave no ELF machine code");
        }
        free(binary);
    }
}

static void add_job(const char *label, const char *source, const char *options, int arch,
                    int machine_code)
{
    if (job_count == MAX_JOBS) {
        CHECK(0, "more than %d compiles", MAX_JOBS);
        return;
    }
    job *j = &jobs[job_count++];
    snprintf(j->name, sizeof j->name, "%s", label);
    snprintf(j->label, sizeof j->label, "%s for sm_%d", label, arch);
    j->source = source;
    snprintf(j->options, sizeof j->options, "%s", options);
    snprintf(j->arch, sizeof j->arch, "sm_%d", arch);
    j->machine_code = machine_code;
}

/* a, "\n", b, "\n", c (b and c may be NULL), malloc'd. */
static char *join(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0, lc = c ? strlen(c) : 0;
    char *text = malloc(la + lb + lc + 3);
    char *p = text;
    memcpy(p, a, la);
    p += la;
    if (b) {
        *p++ = '\n';
        memcpy(p, b, lb);
        p += lb;
    }
    if (c) {
        *p++ = '\n';
        memcpy(p, c, lc);
        p += lc;
    }
    *p = '\0';
    return text;
}

/* `#line 1 "name"` and the text, malloc'd. */
static char *with_line(const char *name, const char *text)
{
    char *marked;
    if (asprintf(&marked, "#line 1 \"%s\"\n%s", name, text) < 0)
        return NULL;
    return marked;
}

int main(void)
{
    const gk_nvrtc *nvrtc;
    if (gk_nvrtc_open(&nvrtc) != GK_OK) {
        const char *skip = getenv("GPUKIT_NO_NVRTC");
        if (skip && strcmp(skip, "1") == 0) {
            printf("skipped: GPUKIT_NO_NVRTC=1 and NVRTC cannot be loaded (%s)\n", gk_last_error());
            return 0;
        }
        fprintf(stderr,
                "NVRTC cannot be loaded: %s\n(set GPUKIT_NO_NVRTC=1 on a machine deliberately "
                "without the CUDA toolkit to skip this test)\n",
                gk_last_error());
        return 1;
    }
    printf("NVRTC %d.%d (%s)\n", nvrtc->major, nvrtc->minor, nvrtc->path);

    int archs[3], arch_count = 0;
    for (int i = 0; i < 3; i++) {
        if (gk_nvrtc_supports(nvrtc, wanted_archs[i]))
            archs[arch_count++] = wanted_archs[i];
        else
            printf("note: NVRTC %d.%d does not support sm_%d: not compiled for it\n",
                   nvrtc->major, nvrtc->minor, wanted_archs[i]);
    }
    if (arch_count == 0) {
        fprintf(stderr, "NVRTC %d.%d supports none of sm_70, sm_80, sm_90\n", nvrtc->major,
                nvrtc->minor);
        return 1;
    }

    char root[PATH_MAX];
    if (!find_source_tree(root, sizeof root)) {
        fprintf(stderr, "cannot find the gpukit source tree (src/compute/kernels/dialect.h) "
                        "above the current directory or this program: set GPUKIT_SOURCE_DIR\n");
        return 1;
    }
    char path[PATH_MAX + 512];
    snprintf(path, sizeof path, "%s/src/compute/kernels/dialect.h", root);
    char *dialect = read_file(path, NULL);
    snprintf(path, sizeof path, "%s/src/compute/kernels/types.h", root);
    char *types_only = read_file(path, NULL);
    snprintf(path, sizeof path, "%s/src/compute/kernels/complex.h", root);
    char *complex = read_file(path, NULL);
    CHECK(dialect && types_only && complex, "dialect.h, types.h and complex.h readable in %s",
          root);
    if (!dialect || !types_only || !complex)
        CHECK_DONE();
    /* What the runtime puts between the dialect and a family's file. */
    char *types = join(types_only, complex, NULL);
    free(types_only);
    free(complex);

    /* The sources stay alive until every compile is done. */
    static char names[256][256];
    char *sources[256 + 256];
    int source_count = 0;

    snprintf(path, sizeof path, "%s/src/compute/kernels", root);
    int families = list_gk(path, names, 256);
    CHECK(families > 0, "kernel families in %s", path);
    int programs = 0;
    for (int f = 0; f < families; f++) {
        snprintf(path, sizeof path, "%s/src/compute/kernels/%s", root, names[f]);
        char *body = read_file(path, NULL);
        CHECK(body != NULL, "cannot read %s", path);
        if (!body)
            continue;
        /* One source serves every dtype: the dtype is an option. The
         * #line makes NVRTC's messages name the family file's lines. */
        char relative[300];
        snprintf(relative, sizeof relative, "src/compute/kernels/%s", names[f]);
        char *marked = with_line(relative, body);
        char *source = join(dialect, types, marked);
        free(marked);
        free(body);
        sources[source_count++] = source;
        char family[256];
        snprintf(family, sizeof family, "%.*s", (int)strlen(names[f]) - 3, names[f]);
        for (int dtype = 0; dtype < GK_DTYPE_COUNT; dtype++) {
            if (!gk_gpu_family_has_dtype(family, (gk_dtype)dtype))
                continue;
            programs++;
            char label[300], options[64];
            snprintf(label, sizeof label, "%s_%s", family, gk_dtype_name((gk_dtype)dtype));
            snprintf(options, sizeof options, "-DGK_DTYPE=%d", dtype);
            for (int a = 0; a < arch_count; a++)
                add_job(label, source, options, archs[a], a == arch_count - 1);
        }
    }

    snprintf(path, sizeof path, "%s/examples/kernels", root);
    int examples = list_gk(path, names, 256);
    for (int e = 0; e < examples; e++) {
        snprintf(path, sizeof path, "%s/examples/kernels/%s", root, names[e]);
        char *body = read_file(path, NULL);
        CHECK(body != NULL, "cannot read %s", path);
        if (!body)
            continue;
        char relative[300];
        snprintf(relative, sizeof relative, "examples/kernels/%s", names[e]);
        char *marked = with_line(relative, body);
        char *source = join(dialect, marked, NULL);
        free(marked);
        free(body);
        sources[source_count++] = source;
        char label[300];
        snprintf(label, sizeof label, "examples/kernels/%s", names[e]);
        for (int a = 0; a < arch_count; a++)
            add_job(label, source, "", archs[a], a == arch_count - 1);
    }
    if (examples == 0)
        printf("note: no example kernels (examples/kernels/*.gk) to compile\n");

    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
    pthread_t workers[MAX_THREADS];
    for (int t = 0; t < threads; t++)
        pthread_create(&workers[t], NULL, worker, NULL);
    for (int t = 0; t < threads; t++)
        pthread_join(workers[t], NULL);

    int failed = 0;
    for (int i = 0; i < job_count; i++) {
        job *j = &jobs[i];
        if (j->failed) {
            failed++;
            /* The message's first line, then the whole log. */
            fprintf(stderr, "FAILED %s: %.*s\n%s\n", j->label, (int)strcspn(j->message, "\n"),
                    j->message, j->log ? j->log : "");
        } else if (j->log && *j->log) {
            printf("warnings in %s:\n%s\n", j->label, j->log);
        }
        free(j->log);
    }
    CHECK(failed == 0, "%d of %d compiles failed", failed, job_count);
    printf("%d programs (%d families, %d dtypes) and %d example kernels compiled for",
           programs, families, GK_DTYPE_COUNT, examples);
    for (int a = 0; a < arch_count; a++)
        printf(" sm_%d", archs[a]);
    printf(" (%d compiles)\n", job_count);

    for (int i = 0; i < source_count; i++)
        free(sources[i]);
    free(dialect);
    free(types);
    CHECK_DONE();
}
