/* Hybrid-graphics detection from sysfs and procfs (probe/optimus.c): the
 * input is the content of the files it reads, separated by 0xFF, written
 * into a fake /sys and /proc (GPUKIT_SYSFS_ROOT, GPUKIT_PROC_ROOT):
 *   NVIDIA device: vendor, class, power/runtime_status, power/control,
 *   the target of its driver link; the NVIDIA driver's power file;
 *   /proc/acpi/bbswitch; the integrated GPU's vendor and class. */
#include "fuzz.h"

#include <gpukit/optimus.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { VENDOR, CLASS, RUNTIME_STATUS, CONTROL, DRIVER, NVIDIA_POWER, BBSWITCH, IGPU_VENDOR,
       IGPU_CLASS, PARTS };

static char dgpu[4300], igpu[4300], nvidia[4300], acpi[4300], driver_link[4400];

static void make_dir(const char *root, const char *path)
{
    char full[8192];
    snprintf(full, sizeof full, "%s/%s", root, path);
    for (char *slash = full + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
        *slash = '\0';
        mkdir(full, 0700);
        *slash = '/';
    }
    mkdir(full, 0700);
}

static void make_tree(void)
{
    const char *root = fuzz_scratch_dir();
    make_dir(root, "sys/bus/pci/devices/0000:01:00.0/power");
    make_dir(root, "sys/bus/pci/devices/0000:00:02.0");
    make_dir(root, "proc/driver/nvidia/gpus/0000:01:00.0");
    make_dir(root, "proc/acpi");
    snprintf(dgpu, sizeof dgpu, "%s/sys/bus/pci/devices/0000:01:00.0", root);
    snprintf(igpu, sizeof igpu, "%s/sys/bus/pci/devices/0000:00:02.0", root);
    snprintf(nvidia, sizeof nvidia, "%s/proc/driver/nvidia/gpus/0000:01:00.0", root);
    snprintf(acpi, sizeof acpi, "%s/proc/acpi", root);
    snprintf(driver_link, sizeof driver_link, "%s/driver", dgpu);
    char sys[4200], proc[4200], socket_path[4200];
    snprintf(sys, sizeof sys, "%s/sys", root);
    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(socket_path, sizeof socket_path, "%s/no-bumblebee.socket", root);
    setenv("GPUKIT_SYSFS_ROOT", sys, 1);
    setenv("GPUKIT_PROC_ROOT", proc, 1);
    setenv("GPUKIT_BUMBLEBEE_SOCKET", socket_path, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dgpu[0])
        make_tree();
    char *parts[PARTS];
    char *copy = fuzz_split(data, size, parts, PARTS);
    fuzz_write_file(dgpu, "vendor", parts[VENDOR], strlen(parts[VENDOR]));
    fuzz_write_file(dgpu, "class", parts[CLASS], strlen(parts[CLASS]));
    fuzz_write_file(dgpu, "power/runtime_status", parts[RUNTIME_STATUS],
                    strlen(parts[RUNTIME_STATUS]));
    fuzz_write_file(dgpu, "power/control", parts[CONTROL], strlen(parts[CONTROL]));
    fuzz_write_file(nvidia, "power", parts[NVIDIA_POWER], strlen(parts[NVIDIA_POWER]));
    fuzz_write_file(acpi, "bbswitch", parts[BBSWITCH], strlen(parts[BBSWITCH]));
    fuzz_write_file(igpu, "vendor", parts[IGPU_VENDOR], strlen(parts[IGPU_VENDOR]));
    fuzz_write_file(igpu, "class", parts[IGPU_CLASS], strlen(parts[IGPU_CLASS]));
    unlink(driver_link);
    if (parts[DRIVER][0] && strlen(parts[DRIVER]) < 4096 && symlink(parts[DRIVER], driver_link) != 0)
        abort();

    gk_optimus optimus;
    if (gk_optimus_detect(&optimus) != GK_OK)
        abort();
    FUZZ_CHECK_TEXT(optimus.igpu_vendor);
    FUZZ_CHECK_TEXT(optimus.pci_bus_id);
    FUZZ_CHECK_TEXT(optimus.driver);
    FUZZ_CHECK_TEXT(optimus.runtime_d3);
    FUZZ_CHECK_TEXT(optimus.video_memory);
    FUZZ_CHECK_TEXT(optimus.detail);
    gk_offload_kind_name(optimus.kind);
    gk_power_state_name(optimus.power);
    gk_snapshot *snapshot;
    if (gk_optimus_sleeping(&optimus) && gk_optimus_snapshot(&optimus, &snapshot) == GK_OK)
        gk_snapshot_destroy(snapshot);
    free(copy);
    return 0;
}
