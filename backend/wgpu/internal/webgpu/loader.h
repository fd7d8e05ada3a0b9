// C side of the binding: the dlopen'ed function table and the helpers that
// bundle several webgpu.h calls into one cgo crossing. Helpers never keep a
// pointer to Go memory beyond the call.
#ifndef WEBTENSOR_LOADER_H
#define WEBTENSOR_LOADER_H

#include "subset.h"

// wt_load opens the library at path. It returns NULL on success, else a
// malloc'ed message naming what failed (dlerror text or the first missing
// symbol); the caller frees it.
char* wt_load(const char* path);

// Per-device record of asynchronous failures, written by callbacks that may
// run on any thread and read by Go at Sync and Read. Owned by C.
typedef struct wt_device_state wt_device_state;

// wt_status carries a result code and, on failure, a malloc'ed message.
typedef struct wt_status {
    int code;      // 0 success; else a WT_ERR_* value
    char* message; // NULL or malloc'ed; the caller frees it
} wt_status;

enum {
    WT_OK = 0,
    WT_ERR_VALIDATION = 1,
    WT_ERR_OUT_OF_MEMORY = 2,
    WT_ERR_INTERNAL = 3,
    WT_ERR_LOST = 4,
    WT_ERR_NO_ADAPTER = 5,
    WT_ERR_MAP = 6,
};

typedef struct wt_adapter_info {
    char* vendor;
    char* architecture;
    char* device;
    char* description;
    uint32_t backend;
    uint32_t adapter_type;
    uint32_t vendor_id;
    uint32_t device_id;
    WGPULimits limits;
    size_t feature_count;
    uint32_t features[64];
} wt_adapter_info;

WGPUInstance wt_create_instance(void);
void wt_instance_release(WGPUInstance instance);
// fallback asks for the implementation's software adapter of that backend.
WGPUAdapter wt_request_adapter(WGPUInstance instance, uint32_t backend, uint32_t feature_level, uint32_t power, int fallback);
void wt_adapter_release(WGPUAdapter adapter);
void wt_adapter_info_get(WGPUAdapter adapter, wt_adapter_info* out);
void wt_adapter_info_free(wt_adapter_info* info);

// enabled and disabled name Dawn toggles for the device (besides the
// profiler's, query.h); C reads them during the call only.
WGPUDevice wt_request_device(WGPUInstance instance, WGPUAdapter adapter, const uint32_t* features, size_t feature_count, const char* const* enabled, size_t enabled_count, const char* const* disabled, size_t disabled_count, wt_device_state** state, wt_status* status);
void wt_device_destroy(WGPUInstance instance, WGPUDevice device);
WGPUQueue wt_device_queue(WGPUDevice device);
void wt_queue_release(WGPUQueue queue);
// wt_device_has_feature reports whether the device was created with feature.
int wt_device_has_feature(WGPUDevice device, uint32_t feature);

// wt_device_take_error returns (and clears) the first uncaptured error since
// the last call, or the loss of the device, which is never cleared.
wt_status wt_device_take_error(wt_device_state* state);
// wt_device_lost_flag points at the state's lost flag, set once (with
// release ordering) by the device-lost callback; Go polls it atomically.
const int* wt_device_lost_flag(wt_device_state* state);
// wt_device_lost_info returns WT_ERR_LOST with the loss message, or WT_OK,
// and the WGPUDeviceLostReason (0 while not lost).
wt_status wt_device_lost_info(wt_device_state* state, uint32_t* reason);
// wt_device_force_loss simulates a device loss (Dawn's wgpuDeviceForceLoss).
// It returns 0, doing nothing, when the library lacks the call.
int wt_device_force_loss(WGPUInstance instance, WGPUDevice device, const char* message);

WGPUBuffer wt_buffer_create(WGPUInstance instance, WGPUDevice device, uint64_t size, WGPUFlags usage, wt_status* status);
void wt_buffer_release(WGPUBuffer buffer);
void wt_queue_write(WGPUQueue queue, WGPUBuffer buffer, uint64_t offset, const void* data, size_t size);
wt_status wt_read(WGPUInstance instance, WGPUDevice device, WGPUQueue queue, WGPUBuffer src, WGPUBuffer staging, uint64_t size, void* dst);

// A compute pipeline for WGSL source with `storage_count` storage buffers
// at bindings 0.. (the first `writable_count` read-write, the rest
// read-only) and a uniform buffer with a dynamic offset at binding
// `storage_count`.
typedef struct wt_pipeline {
    WGPUComputePipeline pipeline;
    WGPUBindGroupLayout layout;
} wt_pipeline;
wt_pipeline wt_pipeline_create(WGPUInstance instance, WGPUDevice device, const char* wgsl, size_t wgsl_len, uint32_t storage_count, uint32_t writable_count, uint64_t uniform_size, wt_status* status);
void wt_pipeline_release(wt_pipeline p);

WGPUBindGroup wt_bind_group_create(WGPUDevice device, WGPUBindGroupLayout layout, uint32_t storage_count, const WGPUBuffer* buffers, const uint64_t* offsets, const uint64_t* sizes, WGPUBuffer uniform, uint64_t uniform_size);
// wt_bind_group_create_checked is wt_bind_group_create inside error scopes:
// a group the device refuses comes back NULL with the reason in status,
// instead of as an invalid group that would spoil the pass it is used in.
WGPUBindGroup wt_bind_group_create_checked(WGPUInstance instance, WGPUDevice device, WGPUBindGroupLayout layout, uint32_t storage_count, const WGPUBuffer* buffers, const uint64_t* offsets, const uint64_t* sizes, WGPUBuffer uniform, uint64_t uniform_size, wt_status* status);
void wt_bind_group_release(WGPUBindGroup group);

WGPUCommandEncoder wt_encoder_create(WGPUDevice device);
WGPUComputePassEncoder wt_pass_begin(WGPUCommandEncoder encoder);
void wt_pass_dispatch(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline, WGPUBindGroup group, uint32_t uniform_offset, uint32_t x, uint32_t y, uint32_t z);
void wt_pass_end(WGPUComputePassEncoder pass);
void wt_encoder_copy(WGPUCommandEncoder encoder, WGPUBuffer src, WGPUBuffer dst, uint64_t size);
// wt_encoder_submit finishes and submits the encoder and releases it.
void wt_encoder_submit(WGPUQueue queue, WGPUCommandEncoder encoder);
// wt_encoder_submit_checked is wt_encoder_submit inside error scopes: it
// returns the validation or out-of-memory error of the finish or the
// submission (an invalid command buffer runs nothing) instead of leaving it
// to the uncaptured-error record.
wt_status wt_encoder_submit_checked(WGPUInstance instance, WGPUDevice device, WGPUQueue queue, WGPUCommandEncoder encoder);
// wt_dispatch_alone records one dispatch in an encoder of its own and
// submits it checked, as wt_encoder_submit_checked.
wt_status wt_dispatch_alone(WGPUInstance instance, WGPUDevice device, WGPUQueue queue, WGPUComputePipeline pipeline, WGPUBindGroup group, uint32_t uniform_offset, uint32_t x, uint32_t y, uint32_t z);
// wt_queue_wait blocks until all submitted work has completed, using a
// 4-byte CopySrc buffer and a 4-byte MapRead buffer owned by the caller.
wt_status wt_queue_wait(WGPUInstance instance, WGPUDevice device, WGPUQueue queue, WGPUBuffer fence, WGPUBuffer staging);

#endif
