/* Table tests for selection (orders, filters, N/A values, reservations, the
 * CUDA view restriction), for the size/ratio/duration parsers and for
 * reading who holds the lease directory's lock from /proc/locks. */
#include <gpukit/select.h>

#include "check.h"
#include "core/units.h"
#include "select/lease_dir.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define GIB (1024ull * 1024 * 1024)
#define NA ((gk_field){0, false})
#define V(x) ((gk_field){(x), true})

static gk_gpu gpus[5];
static gk_mig_device migs[2];
static gk_snapshot snapshot;

/* GPU 0..4: free 10, 40, 40, 70, N/A GiB of 80; util 50, 10, 90, N/A, 0;
 * power 300/700, 100/700, N/A, 600/700, 50/700; GPU 4 has unknown memory. */
static void make_gpu(unsigned i, gk_field free_bytes, gk_field util, gk_field draw, size_t procs)
{
    gk_gpu *g = &gpus[i];
    free(g->processes); /* setup() runs again to undo a test's changes */
    memset(g, 0, sizeof *g);
    g->index = i;
    snprintf(g->uuid, sizeof g->uuid, "GPU-%u%u%u%u0000-aaaa", i, i, i, i);
    snprintf(g->name, sizeof g->name, "Test GPU");
    g->memory_total = free_bytes.known ? V(80 * GIB) : NA;
    g->memory_free = free_bytes;
    g->utilization_gpu = util;
    g->power_draw = draw;
    g->power_limit = V(700000);
    g->processes_known = true;
    g->process_count = procs;
    g->processes = procs ? calloc(procs, sizeof *g->processes) : NULL;
}

static void setup(void)
{
    make_gpu(0, V(10 * GIB), V(50), V(300000), 1);
    make_gpu(1, V(40 * GIB), V(10), V(100000), 2);
    make_gpu(2, V(40 * GIB), V(90), NA, 0);
    make_gpu(3, V(70 * GIB), NA, V(600000), 3);
    make_gpu(4, NA, V(0), V(50000), 0);
    memset(&snapshot, 0, sizeof snapshot);
    snapshot.gpus = gpus;
    snapshot.gpu_count = 5;
}

/* Runs a selection and returns the candidate order as "3,1,2|0,4" (the
 * fitting ones, a bar, the rejected ones). */
static const char *order_of(const gk_request *request, const gk_cuda_view *view,
                            const gk_claim *claims, size_t claim_count, gk_selection *out)
{
    static char text[128];
    gk_selection selection;
    text[0] = '\0';
    if (gk_select(&snapshot, view, claims, claim_count, request, &selection) != GK_OK)
        return "error";
    for (size_t i = 0; i < selection.count; i++) {
        char item[16];
        snprintf(item, sizeof item, "%s%s%u", i == selection.fitting ? "|" : (i ? "," : ""),
                 "", selection.candidates[i].index);
        strcat(text, item);
    }
    if (selection.fitting == selection.count)
        strcat(text, "|");
    if (out)
        *out = selection;
    else
        gk_selection_free(&selection);
    return text;
}

static void expect_order(const char *label, const gk_request *request, const char *want)
{
    const char *got = order_of(request, NULL, NULL, 0, NULL);
    CHECK(strcmp(got, want) == 0, "%s: got %s, want %s", label, got, want);
}

static void test_orders(void)
{
    gk_request r;
    gk_request_init(&r);
    expect_order("free (ties by index, N/A last)", &r, "3,1,2,0,4|");
    r.order = GK_ORDER_FREE_RATIO;
    expect_order("free-ratio", &r, "3,1,2,0,4|");
    r.order = GK_ORDER_UTIL;
    expect_order("util (N/A last)", &r, "4,1,0,2,3|");
    r.order = GK_ORDER_POWER;
    expect_order("power (N/A last)", &r, "4,1,0,3,2|");
    r.order = GK_ORDER_INDEX;
    expect_order("index", &r, "0,1,2,3,4|");

    /* random: a seed gives the same shuffle every time; seeds differ. */
    r.order = GK_ORDER_RANDOM;
    r.seed = 1;
    char first[64];
    snprintf(first, sizeof first, "%s", order_of(&r, NULL, NULL, 0, NULL));
    CHECK(strcmp(first, order_of(&r, NULL, NULL, 0, NULL)) == 0, "random is not repeatable");
    int different = 0;
    for (r.seed = 2; r.seed < 12; r.seed++)
        different += strcmp(first, order_of(&r, NULL, NULL, 0, NULL)) != 0;
    CHECK(different > 0, "ten seeds gave the same shuffle %s", first);

    gk_order order;
    CHECK(gk_order_parse("free-ratio", &order) == GK_OK && order == GK_ORDER_FREE_RATIO,
          "parse free-ratio");
    CHECK(gk_order_parse("fastest", &order) == GK_ERR_INVALID_ARGUMENT, "bad order accepted");
}

static void test_filters(void)
{
    gk_request r;
    gk_request_init(&r);
    r.min_free = V(40 * GIB);
    expect_order("--min-free 40G (unknown free fails)", &r, "3,1,2|0,4");
    gk_request_init(&r);
    r.min_free_ratio = 0.5;
    expect_order("--min-free-ratio 0.5 (exactly half fits)", &r, "3,1,2|0,4");
    r.min_free_ratio = 0.6;
    expect_order("--min-free-ratio 0.6", &r, "3|1,2,0,4");
    gk_request_init(&r);
    r.max_util = 50;
    expect_order("--max-util 50 (unknown util fails)", &r, "1,0,4|3,2");
    gk_request_init(&r);
    r.min_total = V(81 * GIB);
    expect_order("--min-total 81G", &r, "|3,1,2,0,4");
    gk_request_init(&r);
    r.max_procs = 1;
    expect_order("--max-procs 1", &r, "2,0,4|3,1");
    gk_request_init(&r);
    r.gpus = "1, 3,GPU-0000";
    expect_order("--gpus 1,3,GPU-0000", &r, "3,1,0|");
    gk_request_init(&r);
    r.exclude = "3,GPU-1111";
    expect_order("--exclude 3,GPU-1111", &r, "2,0,4|");

    gk_selection selection;
    gk_request_init(&r);
    r.count = 3;
    r.min_free = V(40 * GIB);
    order_of(&r, NULL, NULL, 0, &selection);
    CHECK(selection.fits && selection.fitting == 3, "3 of 40G should fit");
    gk_selection_free(&selection);
    r.count = 4;
    order_of(&r, NULL, NULL, 0, &selection);
    CHECK(!selection.fits && selection.possible, "4 of 40G: not now, but possible");
    CHECK(strstr(selection.why, "wanted 4 device(s), 3 fit") &&
              strstr(selection.why, "GPU 0: 10.0 GiB free, less than --min-free 40.0 GiB"),
          "why: %s", selection.why);
    gk_selection_free(&selection);
    r.count = 1;
    r.min_free = V(100 * GIB);
    order_of(&r, NULL, NULL, 0, &selection);
    CHECK(!selection.fits && !selection.possible, "100G can never fit on 80G GPUs");
    gk_selection_free(&selection);

    /* Bad device lists are errors, not empty choices. */
    const char *bad[] = {"9", "GPU-9999", "GPU-", "x", "0:0", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gk_request_init(&r);
        r.gpus = bad[i];
        CHECK(gk_select(&snapshot, NULL, NULL, 0, &r, &selection) == GK_ERR_INVALID_ARGUMENT,
              "--gpus %s accepted", bad[i]);
    }
    /* An empty --gpus list is a slip (it would offer nothing), not a request. */
    const char *empty[] = {"", ",", " , "};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        gk_request_init(&r);
        CHECK(gk_request_set(&r, "gpus", empty[i]) == GK_ERR_INVALID_ARGUMENT && !r.gpus,
              "--gpus '%s' accepted", empty[i]);
    }
    /* "GPU-" followed by a prefix shared by two GPUs is ambiguous: make one. */
    snprintf(gpus[2].uuid, sizeof gpus[2].uuid, "GPU-1111ffff");
    gk_request_init(&r);
    r.gpus = "GPU-1111";
    CHECK(gk_select(&snapshot, NULL, NULL, 0, &r, &selection) == GK_ERR_INVALID_ARGUMENT &&
              strstr(gk_last_error(), "more than one"),
          "ambiguous prefix: %s", gk_last_error());
    setup();
}

static void test_claims(void)
{
    gk_claim claims[3];
    memset(claims, 0, sizeof claims);
    snprintf(claims[0].uuid, sizeof claims[0].uuid, "%s", gpus[3].uuid);
    claims[0].pid = 100;
    snprintf(claims[0].user, sizeof claims[0].user, "alice");
    snprintf(claims[0].holder, sizeof claims[0].holder, "pid 100 (alice)");
    /* Two shared reservations on GPU 1 (40 GiB free): 30 GiB of which the job
     * already holds 10, and 5 GiB. */
    snprintf(claims[1].uuid, sizeof claims[1].uuid, "%s", gpus[1].uuid);
    claims[1].share = true;
    claims[1].reserved = 30 * GIB;
    claims[1].held = 10 * GIB;
    snprintf(claims[2].uuid, sizeof claims[2].uuid, "%s", gpus[1].uuid);
    claims[2].share = true;
    claims[2].reserved = 5 * GIB;

    gk_request r;
    gk_request_init(&r);
    gk_selection selection;
    const char *got = order_of(&r, NULL, claims, 3, &selection);
    CHECK(strcmp(got, "2,0,4|3,1") == 0, "exclusive skips reserved GPUs: %s", got);
    CHECK(strstr(selection.candidates[3].rejected, "reserved by pid 100 (alice)"), "why: %s",
          selection.candidates[3].rejected);
    gk_selection_free(&selection);

    r.share = true;
    got = order_of(&r, NULL, claims, 3, &selection);
    /* GPU 1: 40 - (30 - 10) - 5 = 15 GiB left; GPU 3 is exclusive. */
    CHECK(strcmp(got, "2,1,0,4|3") == 0, "share: %s", got);
    CHECK(selection.candidates[1].free.value == 15 * GIB, "shared free %llu",
          (unsigned long long)selection.candidates[1].free.value);
    CHECK(strstr(selection.candidates[4].rejected, "exclusive"), "why: %s",
          selection.candidates[4].rejected);
    gk_selection_free(&selection);

    r.min_free = V(16 * GIB);
    got = order_of(&r, NULL, claims, 3, &selection);
    /* Rejected ones keep the order too: GPU 3 (70, exclusive), 1 (15), 0, 4. */
    CHECK(strcmp(got, "2|3,1,0,4") == 0, "share 16G: %s", got);
    gk_selection_free(&selection);
}

static void test_view_and_mig(void)
{
    /* CUDA_VISIBLE_DEVICES restricts the choice. */
    gk_cuda_view view;
    CHECK(gk_cuda_view_resolve(&snapshot, "0,2", "PCI_BUS_ID", &view) == GK_OK, "view");
    gk_request r;
    gk_request_init(&r);
    const char *got = order_of(&r, &view, NULL, 0, NULL);
    CHECK(strcmp(got, "2,0|") == 0, "restricted to 0,2: %s", got);
    CHECK(gk_cuda_view_resolve(&snapshot, "", NULL, &view) == GK_OK, "empty view");
    gk_selection selection;
    order_of(&r, &view, NULL, 0, &selection);
    CHECK(selection.count == 0 && !selection.fits && !selection.possible &&
              strstr(selection.why, "no device is usable by this process: "
                                    "CUDA_VISIBLE_DEVICES hides every GPU"),
          "empty view: %s", selection.why);
    gk_selection_free(&selection);
    /* An empty choice names the limit that emptied it; waiting cannot help. */
    CHECK(gk_cuda_view_resolve(&snapshot, "9", NULL, &view) == GK_OK, "view of no GPU");
    order_of(&r, &view, NULL, 0, &selection);
    CHECK(!selection.possible && strstr(selection.why, "hides every GPU from it (entry 1"),
          "CUDA_VISIBLE_DEVICES=9: %s", selection.why);
    gk_selection_free(&selection);
    CHECK(gk_cuda_view_resolve(&snapshot, "0,2", NULL, &view) == GK_OK, "view of 0,2");
    r.gpus = "1";
    order_of(&r, &view, NULL, 0, &selection);
    CHECK(!selection.possible && strstr(selection.why, "--gpus 1 names none") &&
              strstr(selection.why, "(CUDA_VISIBLE_DEVICES hides 3)"),
          "--gpus 1 hidden: %s", selection.why);
    gk_selection_free(&selection);
    r.gpus = NULL;
    r.exclude = "0,2";
    order_of(&r, &view, NULL, 0, &selection);
    CHECK(!selection.possible && strstr(selection.why, "--exclude 0,2 leaves none"),
          "--exclude 0,2: %s", selection.why);
    gk_selection_free(&selection);
    r.exclude = NULL;

    /* A lost GPU is never a candidate. */
    gpus[3].state = GK_GPU_LOST;
    got = order_of(&r, NULL, NULL, 0, NULL);
    CHECK(strcmp(got, "1,2,0,4|") == 0, "lost GPU 3: %s", got);
    gpus[3].state = GK_GPU_OK;

    /* GPU 1 in MIG mode offers its two MIG devices, for one-device requests. */
    memset(migs, 0, sizeof migs);
    for (int m = 0; m < 2; m++) {
        snprintf(migs[m].uuid, sizeof migs[m].uuid, "MIG-%d%d%d%d", m, m, m, m);
        migs[m].memory_total = V(40 * GIB);
        migs[m].memory_used = V((uint64_t)(m ? 5 : 35) * GIB);
    }
    gpus[1].mig_mode = V(1);
    gpus[1].mig_devices = migs;
    gpus[1].mig_count = 2;
    got = order_of(&r, NULL, NULL, 0, &selection);
    /* Free: GPU 3 70, GPU 2 40, MIG 1 35, GPU 0 10, MIG 0 5, GPU 4 N/A. */
    CHECK(strcmp(got, "3,2,1,0,1,4|") == 0, "MIG devices as candidates: %s", got);
    CHECK(selection.count == 6 && selection.candidates[2].mig == 1 &&
              selection.candidates[2].free.value == 35 * GIB &&
              strcmp(selection.candidates[2].uuid, "MIG-1111") == 0,
          "MIG device 1 of GPU 1");
    gk_selection_free(&selection);
    r.count = 2;
    order_of(&r, NULL, NULL, 0, &selection);
    CHECK(selection.fitting == 4 && strstr(selection.candidates[5].rejected, "MIG"),
          "MIG devices are not offered for 2 devices");
    gk_selection_free(&selection);
    r.count = 1;
    r.gpus = "1:0";
    got = order_of(&r, NULL, NULL, 0, NULL);
    CHECK(strcmp(got, "1|") == 0, "--gpus 1:0: %s", got);
    gpus[1].mig_mode = V(0);
    gpus[1].mig_count = 0;
}

static void test_units(void)
{
    struct { const char *text; uint64_t bytes; } good[] = {
        {"0", 0}, {"1073741824", 1073741824ull}, {"512M", 512ull << 20}, {"20G", 20 * GIB},
        {"20GiB", 20 * GIB}, {"20gib", 20 * GIB}, {"20g", 20 * GIB}, {"1.5G", 3 * GIB / 2},
        {"2GB", 2000000000ull}, {"1T", 1ull << 40}, {"4k", 4096}, {"100B", 100},
        {"18446744073709551615", UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t bytes = 1;
        CHECK(gk_parse_size(good[i].text, &bytes) == GK_OK && bytes == good[i].bytes,
              "size %s: got %llu", good[i].text, (unsigned long long)bytes);
    }
    const char *bad[] = {"", "G", "-1G", "+1G", " 20G", "20G ", "1.2.3G", "20X", "1e3",
                         "20 G", "1.5", "99999999999T", "0x10", "20GiBs"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t bytes;
        CHECK(gk_parse_size(bad[i], &bytes) == GK_ERR_INVALID_ARGUMENT, "size '%s' accepted",
              bad[i]);
    }
    double value;
    CHECK(gk_parse_ratio("0.25", &value) == GK_OK && value == 0.25, "ratio 0.25");
    CHECK(gk_parse_ratio("50%", &value) == GK_OK && value == 0.5, "ratio 50%%");
    CHECK(gk_parse_ratio("1.5", &value) != GK_OK, "ratio 1.5 accepted");
    CHECK(gk_parse_ratio("-0.1", &value) != GK_OK, "ratio -0.1 accepted");
    CHECK(gk_parse_duration("90", &value) == GK_OK && value == 90, "90 s");
    CHECK(gk_parse_duration("10m", &value) == GK_OK && value == 600, "10m");
    CHECK(gk_parse_duration("1.5s", &value) == GK_OK && value == 1.5, "1.5s");
    CHECK(gk_parse_duration("2h", &value) == GK_OK && value == 7200, "2h");
    CHECK(gk_parse_duration("soon", &value) != GK_OK, "duration 'soon' accepted");
    char text[32];
    CHECK(strcmp(gk_format_size(text, sizeof text, 20 * GIB), "20.0 GiB") == 0, "%s", text);
    CHECK(strcmp(gk_format_size(text, sizeof text, 100), "100 B") == 0, "%s", text);
}

/* Device fe:00 inode 10955121 (what /proc/locks prints as fe:00:10955121),
 * and numbers that only match it when wrapped or cut to their field: the
 * conversions inside sscanf did that, where no sanitizer looks. */
static void test_lock_holders(void)
{
    const dev_t dev = makedev(0xfe, 0x00);
    char out[1024];
    static const struct {
        const char *locks;
        size_t holders;
    } cases[] = {
        {"3: FLOCK  ADVISORY  WRITE 0 fe:00:10955121 0 EOF\n", 1},
        {"3: FLOCK  ADVISORY  WRITE 0 1000000fe:00:10955121 0 EOF\n", 0},
        {"3: FLOCK  ADVISORY  WRITE 0 fe:100000000:10955121 0 EOF\n", 0},
        {"3: FLOCK  ADVISORY  WRITE 0 fe:00:18446744073720506737 0 EOF\n", 0},
        {"3: FLOCK  ADVISORY  WRITE 4294967296 fe:00:10955121 0 EOF\n", 0},
        /* Waiters, and locks of kinds that do not block flock(2). */
        {"3: -> FLOCK  ADVISORY  WRITE 0 fe:00:10955121 0 EOF\n"
         "4: POSIX  ADVISORY  READ 0 fe:00:10955121 0 EOF\n"
         "5: OFDLCK ADVISORY  READ -1 fe:00:10955121 0 EOF\n",
         0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t found = gk_lock_holders_parse(cases[i].locks, dev, 10955121, "/proc", out,
                                             sizeof out);
        CHECK(found == cases[i].holders, "%zu holders in %s", found, cases[i].locks);
    }
    /* Inode 2^64 is no number, not the largest one. */
    CHECK(gk_lock_holders_parse("1: FLOCK  ADVISORY  READ 0 fe:00:18446744073709551616 0 EOF\n",
                                dev, (ino_t)UINT64_MAX, "/proc", out, sizeof out) == 0,
          "%s", out);

    /* This process, as /proc shows it. */
    char locks[128], expected[64];
    snprintf(locks, sizeof locks, "1: FLOCK  ADVISORY  WRITE %ld fe:00:10955121 0 EOF\n",
             (long)getpid());
    snprintf(expected, sizeof expected, "pid %ld (user ", (long)getpid());
    CHECK(gk_lock_holders_parse(locks, dev, 10955121, "/proc", out, sizeof out) == 1 &&
              strncmp(out, expected, strlen(expected)) == 0 &&
              strstr(out, ", command 'test_select')"),
          "%s", out);
}

int main(void)
{
    setup();
    test_orders();
    test_filters();
    test_claims();
    test_view_and_mig();
    test_units();
    test_lock_holders();
    for (size_t i = 0; i < 5; i++)
        free(gpus[i].processes);
    CHECK_DONE();
}
