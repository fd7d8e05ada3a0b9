// Timestamp queries: the C side of query.go. The entry points are optional
// (resolved by wt_query_load when the library is opened): a library
// without them loads as before and wt_query_available reports 0.
#ifndef WEBTENSOR_QUERY_H
#define WEBTENSOR_QUERY_H

#include "subset.h"

typedef struct WGPUQuerySetImpl* WGPUQuerySet;

// WGPUQueryType_Timestamp and WGPUBufferUsage_QueryResolve.
#define WT_QUERY_TYPE_TIMESTAMP 2
#define WT_BUFFER_USAGE_QUERY_RESOLVE 0x200

// WGPUPassTimestampWrites as the pinned Dawn lays it out: an extensible
// struct (Dawn validates it with ValidateAndUnpack, which needs the chain
// pointer), shared by compute and render passes.
typedef struct WGPUPassTimestampWrites {
    WGPUChainedStruct* nextInChain;
    WGPUQuerySet querySet;
    uint32_t beginningOfPassWriteIndex;
    uint32_t endOfPassWriteIndex;
} WGPUPassTimestampWrites;

typedef struct WGPUComputePassDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
    WGPUPassTimestampWrites const* timestampWrites;
} WGPUComputePassDescriptor;

typedef struct WGPUQuerySetDescriptor {
    WGPUChainedStruct* nextInChain;
    WGPUStringView label;
    WGPUEnum type;
    uint32_t count;
} WGPUQuerySetDescriptor;

// wt_query_load resolves the query entry points of lib (a dlopen handle).
void wt_query_load(void* lib);
// wt_query_available reports whether every query entry point resolved.
int wt_query_available(void);

WGPUQuerySet wt_query_set_create(WGPUDevice device, uint32_t count);
// wt_query_set_release destroys the set and drops the handle.
void wt_query_set_release(WGPUQuerySet set);
// wt_pass_begin_timed opens a compute pass that writes timestamps at its
// beginning and end into set at indices begin and end.
WGPUComputePassEncoder wt_pass_begin_timed(WGPUCommandEncoder encoder, WGPUQuerySet set, uint32_t begin, uint32_t end);
// wt_encoder_resolve records the resolution of queries [first, first+count)
// into dst at offset (a multiple of 256), as 64-bit nanosecond counts.
void wt_encoder_resolve(WGPUCommandEncoder encoder, WGPUQuerySet set, uint32_t first, uint32_t count, WGPUBuffer dst, uint64_t offset);



// wt_query_device_toggles is the chain to put on a device descriptor so
// that Dawn does not quantize timestamps (its timestamp_quantization
// toggle, on by default as a timing-attack mitigation for the web, rounds
// them to 2^16 ns ≈ 65.5 µs, longer than most GPU kernels). It is a
// static DawnTogglesDescriptor; a library that rejects it (not Dawn) gets
// the device requested again without it. The caller's own toggles
// (gpu.TogglesEnv) ride on the same descriptor, at most 31 of each kind.
WGPUChainedStruct* wt_query_device_toggles(const char* const* enabled, size_t enabled_count, const char* const* disabled, size_t disabled_count);
#endif
