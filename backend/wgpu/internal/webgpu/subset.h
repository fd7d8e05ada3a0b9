// Our own declarations of the subset of the WebGPU C API (webgpu.h) that
// webtensor uses: compute only, no textures, surfaces or render passes.
//
// Layouts and enum values follow the standard header of
// webgpu-native/webgpu-headers as implemented by the Dawn build we pin (npm
// bun-webgpu-linux-x64@0.1.7, a 2025 Dawn: it has bindingArraySize in
// bind-group-layout entries and the renumbered feature names). Structs
// that the library fills in (limits, adapter info) are read through padded
// wrappers in loader.c so that a library with a longer struct cannot write
// past our memory.
#ifndef WEBTENSOR_WEBGPU_SUBSET_H
#define WEBTENSOR_WEBGPU_SUBSET_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t WGPUFlags;
typedef uint32_t WGPUBool;
// Every enum in webgpu.h is 32 bits wide (Force32 = 0x7FFFFFFF).
typedef uint32_t WGPUEnum;

typedef struct WGPUInstanceImpl* WGPUInstance;
typedef struct WGPUAdapterImpl* WGPUAdapter;
typedef struct WGPUDeviceImpl* WGPUDevice;
typedef struct WGPUQueueImpl* WGPUQueue;
typedef struct WGPUBufferImpl* WGPUBuffer;
typedef struct WGPUShaderModuleImpl* WGPUShaderModule;
typedef struct WGPUBindGroupLayoutImpl* WGPUBindGroupLayout;
typedef struct WGPUBindGroupImpl* WGPUBindGroup;
typedef struct WGPUPipelineLayoutImpl* WGPUPipelineLayout;
typedef struct WGPUComputePipelineImpl* WGPUComputePipeline;
typedef struct WGPUCommandEncoderImpl* WGPUCommandEncoder;
typedef struct WGPUComputePassEncoderImpl* WGPUComputePassEncoder;
typedef struct WGPUCommandBufferImpl* WGPUCommandBuffer;

#define WGPU_STRLEN SIZE_MAX
#define WGPU_WHOLE_SIZE UINT64_MAX

// Enum values used by webtensor.
enum {
    WT_ADAPTER_TYPE_DISCRETE = 1,
    WT_ADAPTER_TYPE_INTEGRATED = 2,
    WT_ADAPTER_TYPE_CPU = 3,
    WT_ADAPTER_TYPE_UNKNOWN = 4,

    WT_BACKEND_UNDEFINED = 0,
    WT_BACKEND_NULL = 1,
    WT_BACKEND_WEBGPU = 2,
    WT_BACKEND_D3D11 = 3,
    WT_BACKEND_D3D12 = 4,
    WT_BACKEND_METAL = 5,
    WT_BACKEND_VULKAN = 6,
    WT_BACKEND_OPENGL = 7,
    WT_BACKEND_OPENGLES = 8,

    WT_BUFFER_BINDING_UNIFORM = 2,
    WT_BUFFER_BINDING_STORAGE = 3,
    WT_BUFFER_BINDING_READ_ONLY_STORAGE = 4,

    WT_CALLBACK_MODE_ALLOW_PROCESS_EVENTS = 2,
    WT_CALLBACK_MODE_ALLOW_SPONTANEOUS = 3,

    WT_COMPILATION_MESSAGE_ERROR = 1,

    WT_ERROR_FILTER_VALIDATION = 1,
    WT_ERROR_FILTER_OUT_OF_MEMORY = 2,
    WT_ERROR_FILTER_INTERNAL = 3,

    WT_ERROR_TYPE_NO_ERROR = 1,
    WT_ERROR_TYPE_VALIDATION = 2,
    WT_ERROR_TYPE_OUT_OF_MEMORY = 3,
    WT_ERROR_TYPE_INTERNAL = 4,
    WT_ERROR_TYPE_UNKNOWN = 5,

    WT_FEATURE_LEVEL_COMPATIBILITY = 1,
    WT_FEATURE_LEVEL_CORE = 2,

    WT_MAP_ASYNC_SUCCESS = 1,

    WT_POWER_LOW = 1,
    WT_POWER_HIGH_PERFORMANCE = 2,

    WT_REQUEST_SUCCESS = 1,

    WT_STATUS_SUCCESS = 1,

    WT_STYPE_SHADER_SOURCE_WGSL = 2,
};

// Flag bits (64-bit WGPUFlags).
#define WT_BUFFER_USAGE_MAP_READ 0x1
#define WT_BUFFER_USAGE_COPY_SRC 0x4
#define WT_BUFFER_USAGE_COPY_DST 0x8
#define WT_BUFFER_USAGE_UNIFORM 0x40
#define WT_BUFFER_USAGE_STORAGE 0x80
#define WT_MAP_MODE_READ 0x1
#define WT_SHADER_STAGE_COMPUTE 0x4

typedef struct WGPUStringView {
    const char* data;
    size_t length;
} WGPUStringView;

typedef struct WGPUChainedStruct {
    struct WGPUChainedStruct* next;
    WGPUEnum sType;
} WGPUChainedStruct;

typedef struct WGPUFuture {
    uint64_t id;
} WGPUFuture;

// Callback signatures: every callback carries two opaque user pointers.
typedef void (*WGPURequestAdapterCallback)(WGPUEnum status, WGPUAdapter adapter, WGPUStringView message, void* userdata1, void* userdata2);
typedef void (*WGPURequestDeviceCallback)(WGPUEnum status, WGPUDevice device, WGPUStringView message, void* userdata1, void* userdata2);
typedef void (*WGPUDeviceLostCallback)(WGPUDevice const* device, WGPUEnum reason, WGPUStringView message, void* userdata1, void* userdata2);
typedef void (*WGPUUncapturedErrorCallback)(WGPUDevice const* device, WGPUEnum type, WGPUStringView message, void* userdata1, void* userdata2);
typedef void (*WGPUPopErrorScopeCallback)(WGPUEnum status, WGPUEnum type, WGPUStringView message, void* userdata1, void* userdata2);
typedef void (*WGPUBufferMapCallback)(WGPUEnum status, WGPUStringView message, void* userdata1, void* userdata2);
struct WGPUCompilationInfo;
typedef void (*WGPUCompilationInfoCallback)(WGPUEnum status, struct WGPUCompilationInfo const* info, void* userdata1, void* userdata2);

// The callback-info structs share one shape; the error callback has no mode.
#define WT_CALLBACK_INFO(name, fn) \
    typedef struct name {          \
        WGPUChainedStruct* nextInChain; \
        WGPUEnum mode;             \
        fn callback;               \
        void* userdata1;           \
        void* userdata2;           \
    } name
WT_CALLBACK_INFO(WGPURequestAdapterCallbackInfo, WGPURequestAdapterCallback);
WT_CALLBACK_INFO(WGPURequestDeviceCallbackInfo, WGPURequestDeviceCallback);
WT_CALLBACK_INFO(WGPUDeviceLostCallbackInfo, WGPUDeviceLostCallback);
WT_CALLBACK_INFO(WGPUPopErrorScopeCallbackInfo, WGPUPopErrorScopeCallback);
WT_CALLBACK_INFO(WGPUBufferMapCallbackInfo, WGPUBufferMapCallback);
WT_CALLBACK_INFO(WGPUCompilationInfoCallbackInfo, WGPUCompilationInfoCallback);
#undef WT_CALLBACK_INFO

typedef struct WGPUUncapturedErrorCallbackInfo {
    WGPUChainedStruct* nextInChain;
    WGPUUncapturedErrorCallback callback;
    void* userdata1;
    void* userdata2;
} WGPUUncapturedErrorCallbackInfo;

typedef struct WGPURequestAdapterOptions {
    WGPUChainedStruct* nextInChain;
    WGPUEnum featureLevel;
    WGPUEnum powerPreference;
    WGPUBool forceFallbackAdapter;
    WGPUEnum backendType;
    void* compatibleSurface;
} WGPURequestAdapterOptions;

typedef struct WGPUAdapterInfo {
    WGPUChainedStruct* nextInChain;
    WGPUStringView vendor;
    WGPUStringView architecture;
    WGPUStringView device;
    WGPUStringView description;
    WGPUEnum backendType;
    WGPUEnum adapterType;
    uint32_t vendorID;
    uint32_t deviceID;
    uint32_t subgroupMinSize;
    uint32_t subgroupMaxSize;
} WGPUAdapterInfo;

typedef struct WGPULimits {
    WGPUChainedStruct* nextInChain;
    uint32_t maxTextureDimension1D;
    uint32_t maxTextureDimension2D;
    uint32_t maxTextureDimension3D;
    uint32_t maxTextureArrayLayers;
    uint32_t maxBindGroups;
    uint32_t maxBindGroupsPlusVertexBuffers;
    uint32_t maxBindingsPerBindGroup;
    uint32_t maxDynamicUniformBuffersPerPipelineLayout;
    uint32_t maxDynamicStorageBuffersPerPipelineLayout;
    uint32_t maxSampledTexturesPerShaderStage;
    uint32_t maxSamplersPerShaderStage;
    uint32_t maxStorageBuffersPerShaderStage;
    uint32_t maxStorageTexturesPerShaderStage;
    uint32_t maxUniformBuffersPerShaderStage;
    uint64_t maxUniformBufferBindingSize;
    uint64_t maxStorageBufferBindingSize;
    uint32_t minUniformBufferOffsetAlignment;
    uint32_t minStorageBufferOffsetAlignment;
    uint32_t maxVertexBuffers;
    uint64_t maxBufferSize;
    uint32_t maxVertexAttributes;
    uint32_t maxVertexBufferArrayStride;
    uint32_t maxInterStageShaderVariables;
    uint32_t maxColorAttachments;
    uint32_t maxColorAttachmentBytesPerSample;
    uint32_t maxComputeWorkgroupStorageSize;
    uint32_t maxComputeInvocationsPerWorkgroup;
    uint32_t maxComputeWorkgroupSizeX;
    uint32_t maxComputeWorkgroupSizeY;
    uint32_t maxComputeWorkgroupSizeZ;
    uint32_t maxComputeWorkgroupsPerDimension;
    // Later members (per-stage storage limits) are not read; the padded
    // wrapper in loader.c leaves room for them.
} WGPULimits;

typedef struct WGPUSupportedFeatures {
    size_t featureCount;
    WGPUEnum const* features;
} WGPUSupportedFeatures;

typedef struct WGPUQueueDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
} WGPUQueueDescriptor;

typedef struct WGPUDeviceDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
    size_t requiredFeatureCount;
    WGPUEnum const* requiredFeatures;
    void const* requiredLimits; // a WGPULimits (padded)
    WGPUQueueDescriptor defaultQueue;
    WGPUDeviceLostCallbackInfo deviceLostCallbackInfo;
    WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
} WGPUDeviceDescriptor;

typedef struct WGPUBufferDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
    WGPUFlags usage;
    uint64_t size;
    WGPUBool mappedAtCreation;
} WGPUBufferDescriptor;

typedef struct WGPUShaderSourceWGSL {
    WGPUChainedStruct chain;
    WGPUStringView code;
} WGPUShaderSourceWGSL;

typedef struct WGPUShaderModuleDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
} WGPUShaderModuleDescriptor;

typedef struct WGPUCompilationMessage {
    WGPUChainedStruct* nextInChain;
    WGPUStringView message;
    WGPUEnum type;
    uint64_t lineNum;
    uint64_t linePos;
    uint64_t offset;
    uint64_t length;
} WGPUCompilationMessage;

typedef struct WGPUCompilationInfo {
    WGPUChainedStruct* nextInChain;
    size_t messageCount;
    WGPUCompilationMessage const* messages;
} WGPUCompilationInfo;

typedef struct WGPUBufferBindingLayout {
    WGPUChainedStruct* nextInChain;
    WGPUEnum type;
    WGPUBool hasDynamicOffset;
    uint64_t minBindingSize;
} WGPUBufferBindingLayout;

// Sampler and texture layouts are unused: zero means "binding not used".
typedef struct WGPUUnusedBindingLayout {
    WGPUChainedStruct* nextInChain;
    WGPUEnum type;
} WGPUUnusedSamplerBindingLayout;

typedef struct WGPUUnusedTextureBindingLayout {
    WGPUChainedStruct* nextInChain;
    WGPUEnum sampleType;
    WGPUEnum viewDimension;
    WGPUBool multisampled;
} WGPUUnusedTextureBindingLayout;

typedef struct WGPUUnusedStorageTextureBindingLayout {
    WGPUChainedStruct* nextInChain;
    WGPUEnum access;
    WGPUEnum format;
    WGPUEnum viewDimension;
} WGPUUnusedStorageTextureBindingLayout;

typedef struct WGPUBindGroupLayoutEntry {
    WGPUChainedStruct* nextInChain;
    uint32_t binding;
    WGPUFlags visibility;
    uint32_t bindingArraySize; // 0: not an array
    WGPUBufferBindingLayout buffer;
    WGPUUnusedSamplerBindingLayout sampler;
    WGPUUnusedTextureBindingLayout texture;
    WGPUUnusedStorageTextureBindingLayout storageTexture;
} WGPUBindGroupLayoutEntry;

typedef struct WGPUBindGroupLayoutDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
    size_t entryCount;
    WGPUBindGroupLayoutEntry const* entries;
} WGPUBindGroupLayoutDescriptor;

typedef struct WGPUPipelineLayoutDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
    size_t bindGroupLayoutCount;
    WGPUBindGroupLayout const* bindGroupLayouts;
    uint32_t immediateSize; // 0: no immediate data
} WGPUPipelineLayoutDescriptor;

typedef struct WGPUComputeState {
    WGPUChainedStruct* nextInChain;
    WGPUShaderModule module;
    WGPUStringView entryPoint;
    size_t constantCount;
    void const* constants;
} WGPUComputeState;

typedef struct WGPUComputePipelineDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
    WGPUPipelineLayout layout;
    WGPUComputeState compute;
} WGPUComputePipelineDescriptor;

typedef struct WGPUBindGroupEntry {
    WGPUChainedStruct* nextInChain;
    uint32_t binding;
    WGPUBuffer buffer;
    uint64_t offset;
    uint64_t size;
    void* sampler;
    void* textureView;
} WGPUBindGroupEntry;

typedef struct WGPUBindGroupDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
    WGPUBindGroupLayout layout;
    size_t entryCount;
    WGPUBindGroupEntry const* entries;
} WGPUBindGroupDescriptor;

#endif
