/* Hybrid-graphics detection from sysfs and procfs, without waking the dGPU.
 *
 * Everything here is chosen so that a runtime-suspended GPU stays asleep:
 *  - sysfs `vendor`, `class`, `driver` and the `power/` attributes are cached
 *    by the kernel;
 *    the `config` file is not read, because config-space access resumes a
 *    suspended device;
 *  - of the NVIDIA driver's procfs files only `power` is read: `information`
 *    takes a power reference on the GPU and so wakes it;
 *  - bumblebee is detected by its socket alone, without connecting (a client
 *    is what makes the daemon switch the card on). */
#include <gpukit/optimus.h>

#include "core/error.h"
#include "core/strings.h"
#include "probe/backend.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    PCI_VENDOR_NVIDIA = 0x10de,
    PCI_VENDOR_INTEL = 0x8086,
    PCI_VENDOR_AMD = 0x1002,
    PCI_BASE_CLASS_DISPLAY = 0x03, /* VGA (0x0300), XGA, 3D controller (0x0302), other */
};

static const char *env_or(const char *name, const char *fallback)
{
    const char *value = getenv(name);
    return value && *value ? value : fallback;
}

/* Reads a small text file into buf (NUL-terminated); false if unreadable. */
static bool read_text(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    size_t total = 0;
    while (total + 1 < size) {
        ssize_t n = read(fd, buf + total, size - 1 - total);
        if (n <= 0)
            break;
        total += (size_t)n;
    }
    close(fd);
    buf[total] = '\0';
    return true;
}

/* The first line of a sysfs attribute, trimmed. */
static bool read_attribute(const char *dir, const char *name, char *buf, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!read_text(path, buf, size))
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    const char *trimmed = gk_trim(buf);
    memmove(buf, trimmed, strlen(trimmed) + 1);
    return true;
}

static bool read_hex_attribute(const char *dir, const char *name, unsigned long *value)
{
    char text[32], *end;
    if (!read_attribute(dir, name, text, sizeof text) || !text[0])
        return false;
    *value = strtoul(text, &end, 16);
    return *end == '\0';
}

static gk_power_state parse_runtime_status(const char *status)
{
    static const struct {
        const char *name;
        gk_power_state state;
    } names[] = {
        {"active", GK_POWER_ACTIVE},
        {"suspended", GK_POWER_SUSPENDED},
        {"suspending", GK_POWER_SUSPENDING},
        {"resuming", GK_POWER_RESUMING},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(status, names[i].name) == 0)
            return names[i].state;
    return GK_POWER_UNKNOWN; /* "error", "unsupported" */
}

/* The NVIDIA device's driver, power state and runtime PM policy; false when
 * the kernel has no runtime PM policy for it (power/control missing). */
static bool read_device(const char *dir, gk_optimus *out)
{
    char path[4096], target[4096], text[64];
    snprintf(path, sizeof path, "%s/driver", dir);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n > 0) {
        target[n] = '\0';
        const char *slash = strrchr(target, '/');
        snprintf(out->driver, sizeof out->driver, "%s", slash ? slash + 1 : target);
    }
    if (read_attribute(dir, "power/runtime_status", text, sizeof text))
        out->power = parse_runtime_status(text);
    if (!read_attribute(dir, "power/control", text, sizeof text))
        return false;
    out->runtime_pm = strcmp(text, "auto") == 0;
    return true;
}

/* Walks the PCI devices in bus order for the first NVIDIA display device and
 * any Intel/AMD display device beside it. */
static void scan_pci(const char *sysfs, gk_optimus *out, bool *control_known)
{
    char devices[4096];
    snprintf(devices, sizeof devices, "%s/bus/pci/devices", sysfs);
    struct dirent **entries;
    int count = scandir(devices, &entries, NULL, alphasort);
    if (count < 0)
        return;
    for (int i = 0; i < count; i++) {
        const char *name = entries[i]->d_name;
        char dir[4096];
        unsigned long vendor, class_code;
        snprintf(dir, sizeof dir, "%s/%s", devices, name);
        if (name[0] != '.' && read_hex_attribute(dir, "vendor", &vendor) &&
            read_hex_attribute(dir, "class", &class_code) &&
            (class_code >> 16) == PCI_BASE_CLASS_DISPLAY) {
            if (vendor == PCI_VENDOR_NVIDIA && !out->pci_bus_id[0]) {
                snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%s", name);
                *control_known = read_device(dir, out);
            } else if ((vendor == PCI_VENDOR_INTEL || vendor == PCI_VENDOR_AMD) &&
                       !out->hybrid) {
                out->hybrid = true;
                snprintf(out->igpu_vendor, sizeof out->igpu_vendor, "%s",
                         vendor == PCI_VENDOR_INTEL ? "Intel" : "AMD");
            }
        }
        free(entries[i]);
    }
    free(entries);
    /* An integrated GPU alone is not a hybrid setup. */
    if (!out->pci_bus_id[0]) {
        out->hybrid = false;
        out->igpu_vendor[0] = '\0';
    }
}

/* The value after "<key>:" on the line that starts with key, trimmed. */
static bool find_field(const char *text, const char *key, char *value, size_t size)
{
    size_t key_length = strlen(key);
    const char *line = text;
    while (strncmp(line, key, key_length) != 0 || line[key_length] != ':') {
        line = strchr(line, '\n');
        if (!line)
            return false;
        line++;
    }
    const char *start = line + key_length + 1;
    char copy[256];
    snprintf(copy, sizeof copy, "%.*s", (int)strcspn(start, "\n"), start);
    snprintf(value, size, "%s", gk_trim(copy));
    return true;
}

/* The NVIDIA driver's runtime D3 report (README, "PCI-Express Runtime D3
 * (RTD3) Power Management"): "Runtime D3 status:" and "Video Memory:". */
static void read_nvidia_power(const char *proc, gk_optimus *out)
{
    char path[4096], text[2048];
    snprintf(path, sizeof path, "%s/driver/nvidia/gpus/%s/power", proc, out->pci_bus_id);
    if (!read_text(path, text, sizeof text))
        return;
    find_field(text, "Runtime D3 status", out->runtime_d3, sizeof out->runtime_d3);
    find_field(text, "Video Memory", out->video_memory, sizeof out->video_memory);
}

/* bbswitch (bumblebee's power switch) lists "<bus id> ON|OFF". Returns 1 for
 * on, 0 for off, -1 when it does not know this GPU. */
static int read_bbswitch(const char *proc, const char *bus_id)
{
    char path[4096], text[256], id[64], state[16];
    snprintf(path, sizeof path, "%s/acpi/bbswitch", proc);
    if (!read_text(path, text, sizeof text) || sscanf(text, "%63s %15s", id, state) != 2 ||
        strcmp(id, bus_id) != 0)
        return -1;
    return strcmp(state, "OFF") == 0 ? 0 : 1;
}

static void append(char *buf, size_t size, const char *part)
{
    size_t used = strlen(buf);
    if (used < size)
        snprintf(buf + used, size - used, "%s%s", used ? "; " : "", part);
}

static void describe(gk_optimus *out, int bbswitch, bool control_known)
{
    char part[128];
    if (out->runtime_d3[0]) {
        snprintf(part, sizeof part, "Runtime D3 status: %s", out->runtime_d3);
        append(out->detail, sizeof out->detail, part);
    }
    if (out->video_memory[0]) {
        snprintf(part, sizeof part, "video memory: %s", out->video_memory);
        append(out->detail, sizeof out->detail, part);
    }
    if (bbswitch >= 0)
        append(out->detail, sizeof out->detail,
               bbswitch ? "bbswitch: card on" : "bbswitch: card off");
    if (control_known && !out->runtime_pm && bbswitch < 0)
        append(out->detail, sizeof out->detail,
               "runtime PM off (power/control is not \"auto\"): the kernel never suspends it");
}

gk_status gk_optimus_detect(gk_optimus *out)
{
    if (!out)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_optimus_detect: out is NULL");
    memset(out, 0, sizeof *out);
    const char *sysfs = env_or("GPUKIT_SYSFS_ROOT", "/sys");
    const char *proc = env_or("GPUKIT_PROC_ROOT", "/proc");
    const char *socket_path = env_or("GPUKIT_BUMBLEBEE_SOCKET", "/var/run/bumblebee.socket");

    struct stat st;
    bool bumblebee = stat(socket_path, &st) == 0 && S_ISSOCK(st.st_mode);
    if (bumblebee)
        snprintf(out->bumblebee_socket, sizeof out->bumblebee_socket, "%s", socket_path);

    bool control_known = false;
    scan_pci(sysfs, out, &control_known);
    int bbswitch = -1;
    if (out->pci_bus_id[0]) {
        read_nvidia_power(proc, out);
        bbswitch = read_bbswitch(proc, out->pci_bus_id);
        /* A card bbswitch cut off may still read "active" or "suspended". */
        if (bbswitch == 0)
            out->power = GK_POWER_OFF;
        describe(out, bbswitch, control_known);
    }

    if (bumblebee)
        out->kind = GK_OFFLOAD_BUMBLEBEE;
    else if (out->hybrid && strcmp(out->driver, "nvidia") == 0)
        out->kind = GK_OFFLOAD_PRIME;
    else
        out->kind = GK_OFFLOAD_NONE;
    return GK_OK;
}

bool gk_optimus_sleeping(const gk_optimus *optimus)
{
    return optimus && optimus->pci_bus_id[0] &&
           (optimus->power == GK_POWER_SUSPENDED || optimus->power == GK_POWER_SUSPENDING ||
            optimus->power == GK_POWER_OFF);
}

gk_status gk_optimus_snapshot(const gk_optimus *optimus, gk_snapshot **out)
{
    if (!out)
        return gk_fail(GK_ERR_INVALID_ARGUMENT, "gk_optimus_snapshot: out is NULL");
    *out = NULL;
    if (!optimus || !optimus->pci_bus_id[0])
        return gk_fail(GK_ERR_NOT_FOUND, "no NVIDIA GPU was found in sysfs");
    gk_snapshot *snapshot = calloc(1, sizeof *snapshot);
    gk_gpu *gpu = calloc(1, sizeof *gpu);
    if (!snapshot || !gpu) {
        free(snapshot);
        free(gpu);
        return gk_fail(GK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    clock_gettime(CLOCK_REALTIME, &snapshot->query_time);
    gethostname(snapshot->hostname, sizeof snapshot->hostname - 1);
    gk_cpu_read(&snapshot->cpu);
    gk_format_bus_id(gpu->pci_bus_id, sizeof gpu->pci_bus_id, optimus->pci_bus_id);
    snapshot->gpus = gpu;
    snapshot->gpu_count = 1;
    *out = snapshot;
    return GK_OK;
}

const char *gk_offload_kind_name(gk_offload_kind kind)
{
    switch (kind) {
    case GK_OFFLOAD_NONE: return "none";
    case GK_OFFLOAD_PRIME: return "prime";
    case GK_OFFLOAD_BUMBLEBEE: return "bumblebee";
    }
    return "none";
}

const char *gk_power_state_name(gk_power_state state)
{
    switch (state) {
    case GK_POWER_UNKNOWN: return "unknown";
    case GK_POWER_ACTIVE: return "active";
    case GK_POWER_SUSPENDED: return "suspended";
    case GK_POWER_SUSPENDING: return "suspending";
    case GK_POWER_RESUMING: return "resuming";
    case GK_POWER_OFF: return "off";
    }
    return "unknown";
}
