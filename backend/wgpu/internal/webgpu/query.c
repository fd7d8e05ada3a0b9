#include "query.h"

#include <dlfcn.h>
#include <stddef.h>

static WGPUQuerySet (*create_query_set)(WGPUDevice device, const WGPUQuerySetDescriptor* descriptor);
static void (*query_set_destroy)(WGPUQuerySet set);
static void (*query_set_release)(WGPUQuerySet set);
static void (*resolve_query_set)(WGPUCommandEncoder encoder, WGPUQuerySet set, uint32_t first, uint32_t count, WGPUBuffer dst, uint64_t offset);
static WGPUComputePassEncoder (*begin_compute_pass)(WGPUCommandEncoder encoder, const WGPUComputePassDescriptor* descriptor);

void wt_query_load(void* lib) {
    *(void**)(&create_query_set) = dlsym(lib, "wgpuDeviceCreateQuerySet");
    *(void**)(&query_set_destroy) = dlsym(lib, "wgpuQuerySetDestroy");
    *(void**)(&query_set_release) = dlsym(lib, "wgpuQuerySetRelease");
    *(void**)(&resolve_query_set) = dlsym(lib, "wgpuCommandEncoderResolveQuerySet");
    *(void**)(&begin_compute_pass) = dlsym(lib, "wgpuCommandEncoderBeginComputePass");
}

int wt_query_available(void) {
    return create_query_set != NULL && query_set_destroy != NULL && query_set_release != NULL && resolve_query_set != NULL && begin_compute_pass != NULL;
}

WGPUQuerySet wt_query_set_create(WGPUDevice device, uint32_t count) {
    WGPUQuerySetDescriptor desc = {NULL, {"webtensor profile", 17}, WT_QUERY_TYPE_TIMESTAMP, count};
    return create_query_set(device, &desc);
}

void wt_query_set_release(WGPUQuerySet set) {
    if (set == NULL) {
        return;
    }
    query_set_destroy(set);
    query_set_release(set);
}

WGPUComputePassEncoder wt_pass_begin_timed(WGPUCommandEncoder encoder, WGPUQuerySet set, uint32_t begin, uint32_t end) {
    WGPUPassTimestampWrites writes = {NULL, set, begin, end};
    WGPUComputePassDescriptor desc = {NULL, {NULL, 0}, &writes};
    return begin_compute_pass(encoder, &desc);
}

void wt_encoder_resolve(WGPUCommandEncoder encoder, WGPUQuerySet set, uint32_t first, uint32_t count, WGPUBuffer dst, uint64_t offset) {
    resolve_query_set(encoder, set, first, count, dst, offset);
}

// WGPUDawnTogglesDescriptor and its sType in the pinned Dawn (0x00050007
// is DawnCacheDeviceDescriptor there: a wrong value is not harmless).
#define WT_STYPE_DAWN_TOGGLES_DESCRIPTOR 0x0005000A
typedef struct WGPUDawnTogglesDescriptor {
    WGPUChainedStruct chain;
    size_t enabledToggleCount;
    const char* const* enabledToggles;
    size_t disabledToggleCount;
    const char* const* disabledToggles;
} WGPUDawnTogglesDescriptor;

#define WT_MAX_TOGGLES 32
static const char* enabled_toggles[WT_MAX_TOGGLES];
static const char* disabled_toggles[WT_MAX_TOGGLES];
static WGPUDawnTogglesDescriptor device_toggles;

// Called on the one native thread (gpu.Run), so the static descriptor is
// never filled by two callers at once; Dawn reads it during the request.
WGPUChainedStruct* wt_query_device_toggles(const char* const* enabled, size_t enabled_count, const char* const* disabled, size_t disabled_count) {
    size_t ne = 0, nd = 0;
    disabled_toggles[nd++] = "timestamp_quantization";
    for (size_t i = 0; i < enabled_count && ne < WT_MAX_TOGGLES; i++) {
        enabled_toggles[ne++] = enabled[i];
    }
    for (size_t i = 0; i < disabled_count && nd < WT_MAX_TOGGLES; i++) {
        disabled_toggles[nd++] = disabled[i];
    }
    device_toggles = (WGPUDawnTogglesDescriptor){{NULL, WT_STYPE_DAWN_TOGGLES_DESCRIPTOR}, ne, enabled_toggles, nd, disabled_toggles};
    return &device_toggles.chain;
}
