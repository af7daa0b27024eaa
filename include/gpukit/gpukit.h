/* gpukit: find the right NVIDIA GPU and put work on it, with the CPU as the
 * fallback. This umbrella header includes the whole public API. */
#ifndef GPUKIT_GPUKIT_H
#define GPUKIT_GPUKIT_H

#include <gpukit/array.h>
#include <gpukit/device.h>
#include <gpukit/kernel.h>
#include <gpukit/launch.h>
#include <gpukit/lease.h>
#include <gpukit/monitor.h>
#include <gpukit/optimus.h>
#include <gpukit/probe.h>
#include <gpukit/reserve.h>
#include <gpukit/select.h>
#include <gpukit/status.h>
#include <gpukit/version.h>
#include <gpukit/visible.h>

#endif
