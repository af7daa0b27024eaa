/* Table tests for the CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER resolver. */
#include <gpukit/visible.h>

#include "check.h"

#include <stdlib.h>
#include <string.h>

/* Four GPUs in NVML (PCI) order. GPU 0 is an older model, so CUDA's default
 * FASTEST_FIRST order puts it last: cuda order is 1, 2, 3, 0. */
static gk_gpu gpus[4];
static gk_mig_device migs[2];

static void make_gpu(gk_gpu *g, unsigned index, const char *name, const char *uuid,
                     const char *pci, unsigned major)
{
    memset(g, 0, sizeof *g);
    g->index = index;
    snprintf(g->name, sizeof g->name, "%s", name);
    snprintf(g->uuid, sizeof g->uuid, "%s", uuid);
    snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", pci);
    g->compute_major = (gk_field){major, true};
    g->compute_minor = (gk_field){0, true};
}

static gk_snapshot make_snapshot(void)
{
    make_gpu(&gpus[0], 0, "Tesla V100", "GPU-00aa1111-0000-0000-0000-000000000000",
             "00000000:18:00.0", 7);
    make_gpu(&gpus[1], 1, "H100", "GPU-11aa2222-0000-0000-0000-000000000000",
             "00000000:2A:00.0", 9);
    make_gpu(&gpus[2], 2, "H100", "GPU-22bb3333-0000-0000-0000-000000000000",
             "00000000:3A:00.0", 9);
    make_gpu(&gpus[3], 3, "H100", "GPU-33cc4444-0000-0000-0000-000000000000",
             "00000000:5D:00.0", 9);
    gk_snapshot s;
    memset(&s, 0, sizeof s);
    s.gpus = gpus;
    s.gpu_count = 4;
    return s;
}

/* Resolves and compares with the expected list of NVML indices ("" = none). */
static void expect(const char *visible, const char *order, const char *expected,
                   const char *note_part)
{
    gk_snapshot s = make_snapshot();
    gk_cuda_view view;
    CHECK(gk_cuda_view_resolve(&s, visible, order, &view) == GK_OK, "resolve failed");
    char got[128] = "";
    for (size_t i = 0; i < view.count; i++) {
        char item[16];
        snprintf(item, sizeof item, "%s%u", i ? "," : "", gpus[view.devices[i].gpu].index);
        strcat(got, item);
    }
    CHECK(strcmp(got, expected) == 0, "CUDA_VISIBLE_DEVICES=%s%s%s order=%s: got [%s], want [%s]",
          visible ? "\"" : "", visible ? visible : "(unset)", visible ? "\"" : "",
          order ? order : "(unset)", got, expected);
    if (note_part)
        CHECK(strstr(view.note, note_part) != NULL, "%s: note \"%s\" lacks \"%s\"",
              visible ? visible : "(unset)", view.note, note_part);
    else
        CHECK(view.note[0] == '\0', "%s: unexpected note \"%s\"", visible ? visible : "(unset)",
              view.note);
}

static void test_indices(void)
{
    expect(NULL, NULL, "1,2,3,0", NULL);              /* fastest first: the V100 last */
    expect(NULL, "PCI_BUS_ID", "0,1,2,3", NULL);
    expect(NULL, "FASTEST_FIRST", "1,2,3,0", NULL);
    expect("0", "PCI_BUS_ID", "0", NULL);
    expect("0", NULL, "1", NULL);                     /* cuda:0 is the first H100 */
    expect("3", NULL, "0", NULL);
    expect("2,0", "PCI_BUS_ID", "2,0", NULL);
    expect(" 2 , 0", "PCI_BUS_ID", "2,0", NULL);      /* blanks are tolerated */
    expect("+1", "PCI_BUS_ID", "1", NULL);
    expect("-0", "PCI_BUS_ID", "0", NULL);
    expect("1abc,2", "PCI_BUS_ID", "1,2", NULL);      /* read like strtoul */
    expect("0,2,-1,1", "PCI_BUS_ID", "0,2", "entry 3");
    expect("0,,1", "PCI_BUS_ID", "0", "entry 2");
    expect("1,7,0", "PCI_BUS_ID", "1", "beyond the last GPU");
    expect("", "PCI_BUS_ID", "", NULL);               /* empty: no device */
    expect("none", "PCI_BUS_ID", "", "not a GPU index");
    expect("NoDevFiles", "PCI_BUS_ID", "", "not a GPU index");
}

static void test_duplicates(void)
{
    expect("0,0", "PCI_BUS_ID", "", "twice");
    expect("1,0,1", "PCI_BUS_ID", "", "twice");
    expect("0,-1,0", "PCI_BUS_ID", "0", "entry 2");  /* after the end: not a duplicate */
    expect("GPU-11aa,1", "PCI_BUS_ID", "1", "entry 2"); /* an index in a UUID list ends it */
    expect("GPU-11aa,GPU-11aa2222", "PCI_BUS_ID", "", "twice");
}

static void test_uuids(void)
{
    expect("GPU-22bb3333-0000-0000-0000-000000000000", NULL, "2", NULL);
    expect("GPU-33cc,GPU-00", NULL, "3,0", NULL);       /* unique prefixes */
    expect("GPU-33cc4444-0000-0000-0000-000000000000,GPU-2", NULL, "3,2", NULL);
    expect("GPU-", NULL, "", "more than one");
    expect("GPU-1,GPU-ffff", NULL, "1", "not the UUID");
    expect("1,GPU-33cc", "PCI_BUS_ID", "1", "entry 2"); /* a UUID in an index list ends it */
}

static void test_unknown_order(void)
{
    expect(NULL, "SLOWEST_FIRST", "1,2,3,0", "not FASTEST_FIRST or PCI_BUS_ID");
}

static void test_faulty_gpus_hidden(void)
{
    gk_snapshot s = make_snapshot();
    gpus[2].state = GK_GPU_LOST;
    gk_cuda_view view;
    gk_cuda_view_resolve(&s, NULL, "PCI_BUS_ID", &view);
    CHECK(view.count == 3 && view.devices[2].gpu == 3, "a lost GPU must not get a cuda index");
}

static void test_order_guess_flag(void)
{
    gk_snapshot s = make_snapshot();
    gk_cuda_view view;
    gk_cuda_view_resolve(&s, NULL, NULL, &view);
    CHECK(view.order_guessed, "mixed GPUs under FASTEST_FIRST must be flagged");
    gk_cuda_view_resolve(&s, NULL, "PCI_BUS_ID", &view);
    CHECK(!view.order_guessed, "PCI_BUS_ID order is exact");
    s.gpu_count = 1;
    gk_cuda_view_resolve(&s, NULL, NULL, &view);
    CHECK(!view.order_guessed, "one GPU has one order");
}

/* GPU 3 has MIG enabled with two instances. */
static void test_mig(void)
{
    gk_snapshot s = make_snapshot();
    gpus[3].mig_mode = (gk_field){1, true};
    memset(migs, 0, sizeof migs);
    snprintf(migs[0].uuid, sizeof migs[0].uuid, "MIG-aaaa0000-0000-0000-0000-000000000000");
    migs[0].gpu_instance = (gk_field){1, true};
    migs[0].compute_instance = (gk_field){0, true};
    snprintf(migs[1].uuid, sizeof migs[1].uuid, "MIG-bbbb0000-0000-0000-0000-000000000000");
    migs[1].index = 1;
    migs[1].gpu_instance = (gk_field){2, true};
    migs[1].compute_instance = (gk_field){0, true};
    gpus[3].mig_devices = migs;
    gpus[3].mig_count = 2;

    gk_cuda_view view;
    gk_cuda_view_resolve(&s, "MIG-bbbb", NULL, &view);
    CHECK(view.count == 1 && view.devices[0].gpu == 3 && view.devices[0].mig == 1,
          "MIG-bbbb: got %zu devices", view.count);

    gk_cuda_view_resolve(&s, "MIG-GPU-33cc4444/1/0", NULL, &view);
    CHECK(view.count == 1 && view.devices[0].mig == 0, "old MIG-GPU-<uuid>/gi/ci form");

    gk_cuda_view_resolve(&s, "MIG-GPU-33cc4444/5/0", NULL, &view);
    CHECK(view.count == 0, "unknown MIG instance must end the list");

    gk_cuda_view_resolve(&s, "MIG-aaaa,MIG-bbbb", NULL, &view);
    CHECK(view.count == 1 && view.devices[0].mig == 0 && strstr(view.note, "one MIG"),
          "one MIG device per process: got %zu, note \"%s\"", view.count, view.note);

    gk_cuda_view_resolve(&s, NULL, NULL, &view);
    CHECK(view.count == 1 && view.devices[0].mig == 0,
          "unset with a MIG GPU: CUDA shows a single MIG device, got %zu", view.count);
}

/* Slurm's numbering: a cgroup-constrained step counts its GPUs from 0 in
 * CUDA_VISIBLE_DEVICES; SLURM_STEP_GPUS has the node's indices. */
static void test_slurm_numbering(void)
{
    char out[128];
    static const struct {
        const char *visible, *slurm, *expected;
    } cases[] = {
        {"0,1", "2,5", "2,5"},   /* relative: positions in Slurm's list */
        {"1,0", "2,5", "5,2"},
        {"2,5", "2,5", "2,5"},   /* already the node's (no cgroup) */
        {"0", "0-3", "0"},       /* other counts: left alone */
        {"0,1,2,3", "4-7", "4,5,6,7"},
        {"GPU-abc", "2", "GPU-abc"}, /* UUIDs: left alone */
        {"0,1", NULL, "0,1"},
        {"", "1", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gk_slurm_visible_devices(cases[i].visible, cases[i].slurm, out, sizeof out);
        CHECK(strcmp(out, cases[i].expected) == 0, "%s with %s: %s", cases[i].visible,
              cases[i].slurm ? cases[i].slurm : "(none)", out);
    }
    unsigned indices[8];
    size_t count;
    CHECK(gk_index_list_parse("0-2,7", indices, 8, &count) && count == 4 && indices[3] == 7,
          "a range");
    CHECK(!gk_index_list_parse("1,", indices, 8, &count), "a trailing comma");
    CHECK(!gk_index_list_parse("3-1", indices, 8, &count), "a backwards range");
    CHECK(!gk_index_list_parse("0-100", indices, 8, &count), "more than max");
    CHECK(!gk_index_list_parse("", indices, 8, &count), "nothing");
}

int main(void)
{
    test_slurm_numbering();
    test_indices();
    test_duplicates();
    test_uuids();
    test_unknown_order();
    test_faulty_gpus_hidden();
    test_order_guess_flag();
    test_mig();
    CHECK_DONE();
}
