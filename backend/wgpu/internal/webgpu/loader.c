#include "loader.h"
#include "query.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The function table. Each entry: return type, name (without the wgpu
// prefix), parameter list. Every entry is required: loading fails on the
// first one the library lacks.
#define WT_PROCS(X) \
    X(WGPUInstance, CreateInstance, (const void* descriptor)) \
    X(void, InstanceRelease, (WGPUInstance instance)) \
    X(WGPUFuture, InstanceRequestAdapter, (WGPUInstance instance, const WGPURequestAdapterOptions* options, WGPURequestAdapterCallbackInfo info)) \
    X(void, InstanceProcessEvents, (WGPUInstance instance)) \
    X(WGPUEnum, AdapterGetInfo, (WGPUAdapter adapter, WGPUAdapterInfo* info)) \
    X(void, AdapterInfoFreeMembers, (WGPUAdapterInfo value)) \
    X(WGPUEnum, AdapterGetLimits, (WGPUAdapter adapter, WGPULimits* limits)) \
    X(void, AdapterGetFeatures, (WGPUAdapter adapter, WGPUSupportedFeatures* features)) \
    X(void, SupportedFeaturesFreeMembers, (WGPUSupportedFeatures value)) \
    X(WGPUFuture, AdapterRequestDevice, (WGPUAdapter adapter, const WGPUDeviceDescriptor* descriptor, WGPURequestDeviceCallbackInfo info)) \
    X(void, AdapterRelease, (WGPUAdapter adapter)) \
    X(WGPUQueue, DeviceGetQueue, (WGPUDevice device)) \
    X(void, DeviceDestroy, (WGPUDevice device)) \
    X(void, DeviceRelease, (WGPUDevice device)) \
    X(WGPUBool, DeviceHasFeature, (WGPUDevice device, WGPUEnum feature)) \
    X(void, DevicePushErrorScope, (WGPUDevice device, WGPUEnum filter)) \
    X(WGPUFuture, DevicePopErrorScope, (WGPUDevice device, WGPUPopErrorScopeCallbackInfo info)) \
    X(WGPUBuffer, DeviceCreateBuffer, (WGPUDevice device, const WGPUBufferDescriptor* descriptor)) \
    X(WGPUShaderModule, DeviceCreateShaderModule, (WGPUDevice device, const WGPUShaderModuleDescriptor* descriptor)) \
    X(WGPUFuture, ShaderModuleGetCompilationInfo, (WGPUShaderModule module, WGPUCompilationInfoCallbackInfo info)) \
    X(void, ShaderModuleRelease, (WGPUShaderModule module)) \
    X(WGPUBindGroupLayout, DeviceCreateBindGroupLayout, (WGPUDevice device, const WGPUBindGroupLayoutDescriptor* descriptor)) \
    X(void, BindGroupLayoutRelease, (WGPUBindGroupLayout layout)) \
    X(WGPUPipelineLayout, DeviceCreatePipelineLayout, (WGPUDevice device, const WGPUPipelineLayoutDescriptor* descriptor)) \
    X(void, PipelineLayoutRelease, (WGPUPipelineLayout layout)) \
    X(WGPUComputePipeline, DeviceCreateComputePipeline, (WGPUDevice device, const WGPUComputePipelineDescriptor* descriptor)) \
    X(void, ComputePipelineRelease, (WGPUComputePipeline pipeline)) \
    X(WGPUBindGroup, DeviceCreateBindGroup, (WGPUDevice device, const WGPUBindGroupDescriptor* descriptor)) \
    X(void, BindGroupRelease, (WGPUBindGroup group)) \
    X(WGPUCommandEncoder, DeviceCreateCommandEncoder, (WGPUDevice device, const void* descriptor)) \
    X(WGPUComputePassEncoder, CommandEncoderBeginComputePass, (WGPUCommandEncoder encoder, const void* descriptor)) \
    X(void, ComputePassEncoderSetPipeline, (WGPUComputePassEncoder pass, WGPUComputePipeline pipeline)) \
    X(void, ComputePassEncoderSetBindGroup, (WGPUComputePassEncoder pass, uint32_t index, WGPUBindGroup group, size_t offset_count, const uint32_t* offsets)) \
    X(void, ComputePassEncoderDispatchWorkgroups, (WGPUComputePassEncoder pass, uint32_t x, uint32_t y, uint32_t z)) \
    X(void, ComputePassEncoderEnd, (WGPUComputePassEncoder pass)) \
    X(void, ComputePassEncoderRelease, (WGPUComputePassEncoder pass)) \
    X(void, CommandEncoderCopyBufferToBuffer, (WGPUCommandEncoder encoder, WGPUBuffer src, uint64_t src_offset, WGPUBuffer dst, uint64_t dst_offset, uint64_t size)) \
    X(WGPUCommandBuffer, CommandEncoderFinish, (WGPUCommandEncoder encoder, const void* descriptor)) \
    X(void, CommandEncoderRelease, (WGPUCommandEncoder encoder)) \
    X(void, CommandBufferRelease, (WGPUCommandBuffer buffer)) \
    X(void, QueueSubmit, (WGPUQueue queue, size_t count, const WGPUCommandBuffer* buffers)) \
    X(void, QueueWriteBuffer, (WGPUQueue queue, WGPUBuffer buffer, uint64_t offset, const void* data, size_t size)) \
    X(void, QueueRelease, (WGPUQueue queue)) \
    X(WGPUFuture, BufferMapAsync, (WGPUBuffer buffer, WGPUFlags mode, size_t offset, size_t size, WGPUBufferMapCallbackInfo info)) \
    X(const void*, BufferGetConstMappedRange, (WGPUBuffer buffer, size_t offset, size_t size)) \
    X(void, BufferUnmap, (WGPUBuffer buffer)) \
    X(void, BufferDestroy, (WGPUBuffer buffer)) \
    X(void, BufferRelease, (WGPUBuffer buffer))

#define WT_DECLARE(ret, name, params) ret(*name) params;
static struct {
    WT_PROCS(WT_DECLARE)
} P;
#undef WT_DECLARE

static void* library;

// wgpuDeviceForceLoss(device, reason, message), resolved if present.
static void (*force_loss)(WGPUDevice device, WGPUEnum type, WGPUStringView message);

char* wt_load(const char* path) {
    char buf[512];
    if (library != NULL) {
        return NULL;
    }
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char* why = dlerror();
        return strdup(why != NULL ? why : "dlopen failed");
    }
#define WT_RESOLVE(ret, name, params)                                            \
    *(void**)(&P.name) = dlsym(lib, "wgpu" #name);                               \
    if (P.name == NULL) {                                                        \
        snprintf(buf, sizeof buf, "%s: missing symbol wgpu" #name, path);        \
        dlclose(lib);                                                            \
        memset(&P, 0, sizeof P);                                                 \
        return strdup(buf);                                                      \
    }
    WT_PROCS(WT_RESOLVE)
#undef WT_RESOLVE
    // Optional: a Dawn extension that wgpu-native lacks; NULL makes
    // wt_device_force_loss report that it is unavailable.
    *(void**)(&force_loss) = dlsym(lib, "wgpuDeviceForceLoss");
    // Optional too: timestamp queries (query.c), for the profiler.
    wt_query_load(lib);
    library = lib;
    return NULL;
}

static char* dup_view(WGPUStringView v) {
    if (v.data == NULL) {
        return strdup("");
    }
    size_t n = v.length == WGPU_STRLEN ? strlen(v.data) : v.length;
    char* s = malloc(n + 1);
    memcpy(s, v.data, n);
    s[n] = 0;
    return s;
}

static WGPUStringView view(const char* s) {
    WGPUStringView v = {s, s == NULL ? 0 : strlen(s)};
    return v;
}

static wt_status fail(int code, const char* message) {
    wt_status s = {code, strdup(message)};
    return s;
}

// poll drives the instance until *done is set. Callbacks registered with
// AllowProcessEvents run inside InstanceProcessEvents on this thread, so no
// timed-wait instance feature is needed; short sleeps keep an idle wait cheap.
static int poll(WGPUInstance instance, volatile int* done) {
    const long long limit_ns = 600LL * 1000 * 1000 * 1000;
    long long waited_ns = 0;
    for (unsigned spin = 0; !*done; spin++) {
        P.InstanceProcessEvents(instance);
        if (*done) {
            break;
        }
        if (spin < 32) {
            sched_yield();
            continue;
        }
        long ns = spin < 1024 ? 20000 : 200000;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        waited_ns += ns;
        if (waited_ns > limit_ns) {
            return 0;
        }
    }
    return 1;
}

// --- instance and adapters ---

WGPUInstance wt_create_instance(void) { return P.CreateInstance(NULL); }

void wt_instance_release(WGPUInstance instance) { P.InstanceRelease(instance); }

typedef struct adapter_request {
    volatile int done;
    WGPUAdapter adapter;
} adapter_request;

static void on_adapter(WGPUEnum status, WGPUAdapter adapter, WGPUStringView message, void* userdata1, void* userdata2) {
    (void)message;
    (void)userdata2;
    adapter_request* r = userdata1;
    r->adapter = status == WT_REQUEST_SUCCESS ? adapter : NULL;
    r->done = 1;
}

WGPUAdapter wt_request_adapter(WGPUInstance instance, uint32_t backend, uint32_t feature_level, uint32_t power, int fallback) {
    WGPURequestAdapterOptions options = {0};
    options.featureLevel = feature_level;
    options.powerPreference = power;
    options.backendType = backend;
    options.forceFallbackAdapter = fallback != 0;
    adapter_request r = {0};
    WGPURequestAdapterCallbackInfo info = {NULL, WT_CALLBACK_MODE_ALLOW_PROCESS_EVENTS, on_adapter, &r, NULL};
    P.InstanceRequestAdapter(instance, &options, info);
    if (!poll(instance, &r.done)) {
        return NULL;
    }
    return r.adapter;
}

void wt_adapter_release(WGPUAdapter adapter) { P.AdapterRelease(adapter); }

// Limits are written through a padded struct: a library whose WGPULimits
// has grown keeps writing inside our memory.
typedef struct padded_limits {
    WGPULimits limits;
    uint8_t room_for_newer_members[1024];
} padded_limits;

void wt_adapter_info_get(WGPUAdapter adapter, wt_adapter_info* out) {
    memset(out, 0, sizeof *out);
    struct {
        WGPUAdapterInfo info;
        uint8_t room_for_newer_members[256];
    } padded;
    memset(&padded, 0, sizeof padded);
    if (P.AdapterGetInfo(adapter, &padded.info) == WT_STATUS_SUCCESS) {
        out->vendor = dup_view(padded.info.vendor);
        out->architecture = dup_view(padded.info.architecture);
        out->device = dup_view(padded.info.device);
        out->description = dup_view(padded.info.description);
        out->backend = padded.info.backendType;
        out->adapter_type = padded.info.adapterType;
        out->vendor_id = padded.info.vendorID;
        out->device_id = padded.info.deviceID;
        P.AdapterInfoFreeMembers(padded.info);
    }
    padded_limits limits;
    memset(&limits, 0, sizeof limits);
    if (P.AdapterGetLimits(adapter, &limits.limits) == WT_STATUS_SUCCESS) {
        out->limits = limits.limits;
    }
    WGPUSupportedFeatures features = {0};
    P.AdapterGetFeatures(adapter, &features);
    for (size_t i = 0; i < features.featureCount && out->feature_count < 64; i++) {
        out->features[out->feature_count++] = features.features[i];
    }
    P.SupportedFeaturesFreeMembers(features);
}

void wt_adapter_info_free(wt_adapter_info* info) {
    free(info->vendor);
    free(info->architecture);
    free(info->device);
    free(info->description);
    memset(info, 0, sizeof *info);
}

// --- devices and their asynchronous failures ---

struct wt_device_state {
    pthread_mutex_t mu;
    int error_code; // WT_ERR_* of the first uncaptured error, 0 if none
    char* error_message;
    int lost; // written with atomics too, so Go may poll it without a lock
    uint32_t lost_reason; // WGPUDeviceLostReason, 0 until lost
    char* lost_message;
};

static int code_of_error_type(WGPUEnum type) {
    switch (type) {
    case WT_ERROR_TYPE_NO_ERROR:
        return WT_OK;
    case WT_ERROR_TYPE_VALIDATION:
        return WT_ERR_VALIDATION;
    case WT_ERROR_TYPE_OUT_OF_MEMORY:
        return WT_ERR_OUT_OF_MEMORY;
    default:
        return WT_ERR_INTERNAL;
    }
}

static void on_uncaptured_error(WGPUDevice const* device, WGPUEnum type, WGPUStringView message, void* userdata1, void* userdata2) {
    (void)device;
    (void)userdata2;
    wt_device_state* s = userdata1;
    pthread_mutex_lock(&s->mu);
    if (s->error_code == WT_OK) {
        s->error_code = code_of_error_type(type);
        s->error_message = dup_view(message);
    }
    pthread_mutex_unlock(&s->mu);
}

static void on_device_lost(WGPUDevice const* device, WGPUEnum reason, WGPUStringView message, void* userdata1, void* userdata2) {
    (void)device;
    (void)userdata2;
    wt_device_state* s = userdata1;
    pthread_mutex_lock(&s->mu);
    if (!s->lost) {
        s->lost_reason = reason;
        s->lost_message = dup_view(message);
        // Published last, so that a reader who sees the flag finds the
        // reason and message set.
        __atomic_store_n(&s->lost, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&s->mu);
}

const int* wt_device_lost_flag(wt_device_state* s) { return &s->lost; }

wt_status wt_device_lost_info(wt_device_state* s, uint32_t* reason) {
    wt_status status = {WT_OK, NULL};
    pthread_mutex_lock(&s->mu);
    *reason = s->lost_reason;
    if (s->lost) {
        status.code = WT_ERR_LOST;
        status.message = strdup(s->lost_message);
    }
    pthread_mutex_unlock(&s->mu);
    return status;
}

int wt_device_force_loss(WGPUInstance instance, WGPUDevice device, const char* message) {
    if (force_loss == NULL) {
        return 0;
    }
    // WGPUDeviceLostReason_Unknown: what a driver reset reports.
    force_loss(device, 1, view(message));
    // The lost callback is spontaneous, but let any other pending
    // callbacks of the device settle too.
    P.InstanceProcessEvents(instance);
    return 1;
}

int wt_device_has_feature(WGPUDevice device, uint32_t feature) { return P.DeviceHasFeature(device, feature) != 0; }

wt_status wt_device_take_error(wt_device_state* s) {
    wt_status status = {WT_OK, NULL};
    pthread_mutex_lock(&s->mu);
    if (s->lost) {
        status.code = WT_ERR_LOST;
        status.message = strdup(s->lost_message);
    } else if (s->error_code != WT_OK) {
        status.code = s->error_code;
        status.message = s->error_message;
        s->error_code = WT_OK;
        s->error_message = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return status;
}

typedef struct device_request {
    volatile int done;
    WGPUDevice device;
    char* message;
} device_request;

static void on_device(WGPUEnum status, WGPUDevice device, WGPUStringView message, void* userdata1, void* userdata2) {
    (void)userdata2;
    device_request* r = userdata1;
    r->device = status == WT_REQUEST_SUCCESS ? device : NULL;
    if (r->device == NULL) {
        r->message = dup_view(message);
    }
    r->done = 1;
}

WGPUDevice wt_request_device(WGPUInstance instance, WGPUAdapter adapter, const uint32_t* features, size_t feature_count, const char* const* enabled, size_t enabled_count, const char* const* disabled, size_t disabled_count, wt_device_state** state, wt_status* status) {
    *status = (wt_status){WT_OK, NULL};
    // The state outlives the device: the lost callback may still fire while
    // the device is released, so it is deliberately never freed (a few dozen
    // bytes per device opened).
    wt_device_state* s = calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    // Ask for everything the adapter offers instead of the small defaults.
    padded_limits limits;
    memset(&limits, 0, sizeof limits);
    int have_limits = P.AdapterGetLimits(adapter, &limits.limits) == WT_STATUS_SUCCESS;

    WGPUDeviceDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.label = view("webtensor");
    desc.requiredFeatureCount = feature_count;
    desc.requiredFeatures = features;
    desc.requiredLimits = have_limits ? &limits.limits : NULL;
    desc.deviceLostCallbackInfo = (WGPUDeviceLostCallbackInfo){NULL, WT_CALLBACK_MODE_ALLOW_SPONTANEOUS, on_device_lost, s, NULL};
    desc.uncapturedErrorCallbackInfo = (WGPUUncapturedErrorCallbackInfo){NULL, on_uncaptured_error, s, NULL};

    // Exact timestamps for the profiler (query.h); asked again without
    // them if the library refuses the chain.
    WGPUChainedStruct* toggles = wt_query_device_toggles(enabled, enabled_count, disabled, disabled_count);
    desc.nextInChain = toggles;
    device_request r = {0};
    WGPURequestDeviceCallbackInfo info = {NULL, WT_CALLBACK_MODE_ALLOW_PROCESS_EVENTS, on_device, &r, NULL};
    for (int attempt = 0; attempt < 2; attempt++) {
        memset(&r, 0, sizeof r);
        P.AdapterRequestDevice(adapter, &desc, info);
        if (!poll(instance, &r.done)) {
            *status = fail(WT_ERR_INTERNAL, "timed out waiting for the device");
            return NULL;
        }
        if (desc.nextInChain == NULL) {
            break;
        }
        // Dawn answers a descriptor it refuses with a device lost at
        // creation rather than with none.
        P.InstanceProcessEvents(instance);
        if (r.device != NULL && !__atomic_load_n(&s->lost, __ATOMIC_ACQUIRE)) {
            break;
        }
        if (r.device != NULL) {
            P.DeviceRelease(r.device);
        }
        free(r.message);
        desc.nextInChain = NULL;
        // The lost callback keeps the old state: a fresh one for the retry.
        s = calloc(1, sizeof *s);
        pthread_mutex_init(&s->mu, NULL);
        desc.deviceLostCallbackInfo.userdata1 = s;
        desc.uncapturedErrorCallbackInfo.userdata1 = s;
    }
    if (r.device == NULL) {
        status->code = WT_ERR_INTERNAL;
        status->message = r.message;
        return NULL;
    }
    *state = s;
    return r.device;
}

void wt_device_destroy(WGPUInstance instance, WGPUDevice device) {
    P.DeviceDestroy(device);
    P.DeviceRelease(device);
    P.InstanceProcessEvents(instance);
}

WGPUQueue wt_device_queue(WGPUDevice device) { return P.DeviceGetQueue(device); }

void wt_queue_release(WGPUQueue queue) { P.QueueRelease(queue); }

// --- error scopes ---

typedef struct scope_result {
    volatile int done;
    int code;
    char* message;
} scope_result;

static void on_pop(WGPUEnum status, WGPUEnum type, WGPUStringView message, void* userdata1, void* userdata2) {
    (void)userdata2;
    scope_result* r = userdata1;
    r->code = status == WT_STATUS_SUCCESS ? code_of_error_type(type) : WT_ERR_LOST;
    if (r->code != WT_OK) {
        r->message = dup_view(message);
    }
    r->done = 1;
}

// pop_scopes pops n error scopes and returns the first error they caught.
static wt_status pop_scopes(WGPUInstance instance, WGPUDevice device, int n) {
    wt_status first = {WT_OK, NULL};
    for (int i = 0; i < n; i++) {
        scope_result r = {0};
        WGPUPopErrorScopeCallbackInfo info = {NULL, WT_CALLBACK_MODE_ALLOW_PROCESS_EVENTS, on_pop, &r, NULL};
        P.DevicePopErrorScope(device, info);
        if (!poll(instance, &r.done)) {
            r.code = WT_ERR_LOST;
            r.message = strdup("timed out waiting for an error scope");
        }
        if (first.code == WT_OK && r.code != WT_OK) {
            first.code = r.code;
            first.message = r.message;
        } else {
            free(r.message);
        }
    }
    return first;
}

// --- buffers ---

WGPUBuffer wt_buffer_create(WGPUInstance instance, WGPUDevice device, uint64_t size, WGPUFlags usage, wt_status* status) {
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_OUT_OF_MEMORY);
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_VALIDATION);
    WGPUBufferDescriptor desc = {0};
    desc.label = view("webtensor");
    desc.usage = usage;
    desc.size = size;
    WGPUBuffer buffer = P.DeviceCreateBuffer(device, &desc);
    *status = pop_scopes(instance, device, 2);
    if (status->code != WT_OK && buffer != NULL) {
        P.BufferRelease(buffer);
        buffer = NULL;
    }
    if (buffer == NULL && status->code == WT_OK) {
        *status = fail(WT_ERR_OUT_OF_MEMORY, "buffer creation returned no buffer");
    }
    return buffer;
}

void wt_buffer_release(WGPUBuffer buffer) {
    P.BufferDestroy(buffer);
    P.BufferRelease(buffer);
}

void wt_queue_write(WGPUQueue queue, WGPUBuffer buffer, uint64_t offset, const void* data, size_t size) {
    P.QueueWriteBuffer(queue, buffer, offset, data, size);
}

typedef struct map_result {
    volatile int done;
    WGPUEnum status;
    char* message;
} map_result;

static void on_map(WGPUEnum status, WGPUStringView message, void* userdata1, void* userdata2) {
    (void)userdata2;
    map_result* r = userdata1;
    r->status = status;
    if (status != WT_MAP_ASYNC_SUCCESS) {
        r->message = dup_view(message);
    }
    r->done = 1;
}

wt_status wt_read(WGPUInstance instance, WGPUDevice device, WGPUQueue queue, WGPUBuffer src, WGPUBuffer staging, uint64_t size, void* dst) {
    // size is the bytes wanted; copies and maps work in multiples of 4.
    uint64_t padded = (size + 3) & ~(uint64_t)3;
    WGPUCommandEncoder encoder = P.DeviceCreateCommandEncoder(device, NULL);
    P.CommandEncoderCopyBufferToBuffer(encoder, src, 0, staging, 0, padded);
    wt_encoder_submit(queue, encoder);

    map_result r = {0};
    WGPUBufferMapCallbackInfo info = {NULL, WT_CALLBACK_MODE_ALLOW_PROCESS_EVENTS, on_map, &r, NULL};
    P.BufferMapAsync(staging, WT_MAP_MODE_READ, 0, padded, info);
    if (!poll(instance, &r.done)) {
        return fail(WT_ERR_MAP, "timed out waiting for the read-back");
    }
    if (r.status != WT_MAP_ASYNC_SUCCESS) {
        wt_status s = {WT_ERR_MAP, r.message};
        return s;
    }
    const void* mapped = P.BufferGetConstMappedRange(staging, 0, padded);
    if (mapped == NULL) {
        P.BufferUnmap(staging);
        return fail(WT_ERR_MAP, "mapped range unavailable");
    }
    memcpy(dst, mapped, size);
    P.BufferUnmap(staging);
    wt_status ok = {WT_OK, NULL};
    return ok;
}

// --- pipelines ---

typedef struct compilation_result {
    volatile int done;
    char* messages;
} compilation_result;

static void on_compilation(WGPUEnum status, WGPUCompilationInfo const* info, void* userdata1, void* userdata2) {
    (void)status;
    (void)userdata2;
    compilation_result* r = userdata1;
    size_t cap = 1, len = 0;
    char* out = calloc(1, 1);
    for (size_t i = 0; info != NULL && i < info->messageCount; i++) {
        const WGPUCompilationMessage* m = &info->messages[i];
        if (m->type != WT_COMPILATION_MESSAGE_ERROR) {
            continue;
        }
        char* text = dup_view(m->message);
        size_t need = strlen(text) + 64;
        out = realloc(out, cap + need);
        cap += need;
        len += snprintf(out + len, cap - len, "%llu:%llu: %s\n", (unsigned long long)m->lineNum, (unsigned long long)m->linePos, text);
        free(text);
    }
    r->messages = out;
    r->done = 1;
}

static char* join_messages(char* compilation, char* scope) {
    size_t n = (compilation ? strlen(compilation) : 0) + (scope ? strlen(scope) : 0) + 2;
    char* s = malloc(n);
    snprintf(s, n, "%s%s", compilation ? compilation : "", scope ? scope : "");
    free(compilation);
    free(scope);
    return s;
}

wt_pipeline wt_pipeline_create(WGPUInstance instance, WGPUDevice device, const char* wgsl, size_t wgsl_len, uint32_t storage_count, uint32_t writable_count, uint64_t uniform_size, wt_status* status) {
    wt_pipeline out = {NULL, NULL};
    // Every failure of the creation is caught here, so that none reaches
    // the uncaptured-error record and fails an unrelated later Read: out of
    // memory (the caller retries later), internal, validation (a rejected
    // shader, which the caller remembers as such).
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_OUT_OF_MEMORY);
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_INTERNAL);
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_VALIDATION);

    WGPUShaderSourceWGSL source = {{NULL, WT_STYPE_SHADER_SOURCE_WGSL}, {wgsl, wgsl_len}};
    WGPUShaderModuleDescriptor module_desc = {&source.chain, view("webtensor")};
    WGPUShaderModule module = P.DeviceCreateShaderModule(device, &module_desc);

    compilation_result compiled = {0};
    WGPUCompilationInfoCallbackInfo info = {NULL, WT_CALLBACK_MODE_ALLOW_PROCESS_EVENTS, on_compilation, &compiled, NULL};
    P.ShaderModuleGetCompilationInfo(module, info);
    poll(instance, &compiled.done);

    WGPUBindGroupLayoutEntry entries[16];
    uint32_t n = storage_count + 1;
    if (n > 16) {
        n = 16;
    }
    memset(entries, 0, sizeof entries);
    for (uint32_t i = 0; i < n; i++) {
        entries[i].binding = i;
        entries[i].visibility = WT_SHADER_STAGE_COMPUTE;
        if (i + 1 == n) {
            entries[i].buffer.type = WT_BUFFER_BINDING_UNIFORM;
            entries[i].buffer.hasDynamicOffset = 1;
            entries[i].buffer.minBindingSize = uniform_size;
        } else {
            entries[i].buffer.type = i < writable_count ? WT_BUFFER_BINDING_STORAGE : WT_BUFFER_BINDING_READ_ONLY_STORAGE;
        }
    }
    WGPUBindGroupLayoutDescriptor layout_desc = {NULL, view("webtensor"), n, entries};
    out.layout = P.DeviceCreateBindGroupLayout(device, &layout_desc);
    WGPUPipelineLayoutDescriptor pipeline_layout_desc = {NULL, view("webtensor"), 1, &out.layout, 0};
    WGPUPipelineLayout pipeline_layout = P.DeviceCreatePipelineLayout(device, &pipeline_layout_desc);

    WGPUComputePipelineDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.label = view("webtensor");
    desc.layout = pipeline_layout;
    desc.compute.module = module;
    desc.compute.entryPoint = view("main");
    out.pipeline = P.DeviceCreateComputePipeline(device, &desc);

    P.PipelineLayoutRelease(pipeline_layout);
    P.ShaderModuleRelease(module);
    *status = pop_scopes(instance, device, 3);
    if (status->code != WT_OK || out.pipeline == NULL) {
        if (status->code == WT_OK) {
            status->code = WT_ERR_VALIDATION;
        }
        status->message = join_messages(compiled.messages, status->message);
        wt_pipeline_release(out);
        out.pipeline = NULL;
        out.layout = NULL;
        return out;
    }
    free(compiled.messages);
    return out;
}

void wt_pipeline_release(wt_pipeline p) {
    if (p.pipeline != NULL) {
        P.ComputePipelineRelease(p.pipeline);
    }
    if (p.layout != NULL) {
        P.BindGroupLayoutRelease(p.layout);
    }
}

WGPUBindGroup wt_bind_group_create(WGPUDevice device, WGPUBindGroupLayout layout, uint32_t storage_count, const WGPUBuffer* buffers, const uint64_t* offsets, const uint64_t* sizes, WGPUBuffer uniform, uint64_t uniform_size) {
    WGPUBindGroupEntry entries[16];
    uint32_t n = storage_count + 1;
    if (n > 16) {
        return NULL;
    }
    memset(entries, 0, sizeof entries);
    for (uint32_t i = 0; i < storage_count; i++) {
        entries[i].binding = i;
        entries[i].buffer = buffers[i];
        entries[i].offset = offsets[i];
        entries[i].size = sizes[i];
    }
    entries[storage_count].binding = storage_count;
    entries[storage_count].buffer = uniform;
    entries[storage_count].size = uniform_size;
    WGPUBindGroupDescriptor desc = {NULL, view("webtensor"), layout, n, entries};
    return P.DeviceCreateBindGroup(device, &desc);
}

WGPUBindGroup wt_bind_group_create_checked(WGPUInstance instance, WGPUDevice device, WGPUBindGroupLayout layout, uint32_t storage_count, const WGPUBuffer* buffers, const uint64_t* offsets, const uint64_t* sizes, WGPUBuffer uniform, uint64_t uniform_size, wt_status* status) {
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_OUT_OF_MEMORY);
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_VALIDATION);
    WGPUBindGroup group = wt_bind_group_create(device, layout, storage_count, buffers, offsets, sizes, uniform, uniform_size);
    *status = pop_scopes(instance, device, 2);
    if (status->code == WT_OK && group == NULL) {
        *status = fail(WT_ERR_VALIDATION, "too many bindings");
    }
    if (status->code != WT_OK && group != NULL) {
        P.BindGroupRelease(group);
        group = NULL;
    }
    return group;
}

void wt_bind_group_release(WGPUBindGroup group) { P.BindGroupRelease(group); }

// --- command recording ---

WGPUCommandEncoder wt_encoder_create(WGPUDevice device) { return P.DeviceCreateCommandEncoder(device, NULL); }

WGPUComputePassEncoder wt_pass_begin(WGPUCommandEncoder encoder) { return P.CommandEncoderBeginComputePass(encoder, NULL); }

void wt_pass_dispatch(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline, WGPUBindGroup group, uint32_t uniform_offset, uint32_t x, uint32_t y, uint32_t z) {
    if (pipeline != NULL) {
        P.ComputePassEncoderSetPipeline(pass, pipeline);
    }
    P.ComputePassEncoderSetBindGroup(pass, 0, group, 1, &uniform_offset);
    P.ComputePassEncoderDispatchWorkgroups(pass, x, y, z);
}

void wt_pass_end(WGPUComputePassEncoder pass) {
    P.ComputePassEncoderEnd(pass);
    P.ComputePassEncoderRelease(pass);
}

void wt_encoder_copy(WGPUCommandEncoder encoder, WGPUBuffer src, WGPUBuffer dst, uint64_t size) {
    P.CommandEncoderCopyBufferToBuffer(encoder, src, 0, dst, 0, size);
}

void wt_encoder_submit(WGPUQueue queue, WGPUCommandEncoder encoder) {
    WGPUCommandBuffer commands = P.CommandEncoderFinish(encoder, NULL);
    P.QueueSubmit(queue, 1, &commands);
    P.CommandBufferRelease(commands);
    P.CommandEncoderRelease(encoder);
}

wt_status wt_encoder_submit_checked(WGPUInstance instance, WGPUDevice device, WGPUQueue queue, WGPUCommandEncoder encoder) {
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_OUT_OF_MEMORY);
    P.DevicePushErrorScope(device, WT_ERROR_FILTER_VALIDATION);
    wt_encoder_submit(queue, encoder);
    return pop_scopes(instance, device, 2);
}

wt_status wt_dispatch_alone(WGPUInstance instance, WGPUDevice device, WGPUQueue queue, WGPUComputePipeline pipeline, WGPUBindGroup group, uint32_t uniform_offset, uint32_t x, uint32_t y, uint32_t z) {
    WGPUCommandEncoder encoder = P.DeviceCreateCommandEncoder(device, NULL);
    WGPUComputePassEncoder pass = P.CommandEncoderBeginComputePass(encoder, NULL);
    wt_pass_dispatch(pass, pipeline, group, uniform_offset, x, y, z);
    wt_pass_end(pass);
    return wt_encoder_submit_checked(instance, device, queue, encoder);
}

// wt_queue_wait copies a word of `fence` into `staging` and maps it: the map
// completes only after every command submitted before the copy, because the
// queue runs in order. (OnSubmittedWorkDone would say the same, but some
// implementations only resolve it on a later submission.)
wt_status wt_queue_wait(WGPUInstance instance, WGPUDevice device, WGPUQueue queue, WGPUBuffer fence, WGPUBuffer staging) {
    uint32_t word;
    return wt_read(instance, device, queue, fence, staging, sizeof word, &word);
}
