//go:build cgo

// Package webgpu is a thin cgo binding to the subset of the WebGPU C API
// (webgpu.h) that webtensor needs for compute. The library is opened at run
// time with dlopen; nothing links against it, so the module builds without
// it.
//
// The binding is mechanical: handles wrap C pointers, every object has an
// explicit Release, failures reported by the library come back as *Error.
// Callbacks are C functions that write into C memory, so C never holds a
// pointer to Go memory. Policy (which library, which adapter, batching)
// belongs to package backend/wgpu.
//
// Under GOOS=js GOARCH=wasm, browser.go gives the same API over the
// page's navigator.gpu instead (syscall/js), so the code above this
// package is shared between native and browser builds.
//
// None of the methods is safe for concurrent use: the caller runs every
// call on one OS thread, because WebGPU error scopes are per thread.
package webgpu

/*
#cgo linux LDFLAGS: -ldl -lpthread
#cgo CFLAGS: -O2 -Wall
#include <stdlib.h>
#include "loader.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// The shared codes (codes.go) are the C enum's values; these fail to
// compile if the two ever differ.
var (
	_ = [1]struct{}{}[Validation-C.WT_ERR_VALIDATION]
	_ = [1]struct{}{}[OutOfMemory-C.WT_ERR_OUT_OF_MEMORY]
	_ = [1]struct{}{}[Internal-C.WT_ERR_INTERNAL]
	_ = [1]struct{}{}[Lost-C.WT_ERR_LOST]
	_ = [1]struct{}{}[NoAdapter-C.WT_ERR_NO_ADAPTER]
	_ = [1]struct{}{}[MapFailed-C.WT_ERR_MAP]
)

// statusError converts a wt_status and frees its message.
func statusError(s C.wt_status) error {
	if s.code == C.WT_OK {
		C.free(unsafe.Pointer(s.message))
		return nil
	}
	msg := C.GoString(s.message)
	C.free(unsafe.Pointer(s.message))
	return &Error{Code: Code(s.code), Message: msg}
}

// Load opens the shared library at path and resolves every symbol the
// binding uses. It fails with a message naming the first missing symbol.
// Loading succeeds at most once per process; later calls are no-ops.
func Load(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if msg := C.wt_load(cpath); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return fmt.Errorf("%s", C.GoString(msg))
	}
	return nil
}

// Backend types (WGPUBackendType).
const (
	BackendVulkan   = C.WT_BACKEND_VULKAN
	BackendMetal    = C.WT_BACKEND_METAL
	BackendD3D12    = C.WT_BACKEND_D3D12
	BackendD3D11    = C.WT_BACKEND_D3D11
	BackendOpenGL   = C.WT_BACKEND_OPENGL
	BackendOpenGLES = C.WT_BACKEND_OPENGLES
	BackendNull     = C.WT_BACKEND_NULL
	BackendWebGPU   = C.WT_BACKEND_WEBGPU
)

// Adapter types (WGPUAdapterType).
const (
	AdapterDiscrete   = C.WT_ADAPTER_TYPE_DISCRETE
	AdapterIntegrated = C.WT_ADAPTER_TYPE_INTEGRATED
	AdapterCPU        = C.WT_ADAPTER_TYPE_CPU
)

// Feature levels and power preferences for RequestAdapter.
const (
	FeatureLevelCompatibility = C.WT_FEATURE_LEVEL_COMPATIBILITY
	FeatureLevelCore          = C.WT_FEATURE_LEVEL_CORE
	PowerLow                  = C.WT_POWER_LOW
	PowerHighPerformance      = C.WT_POWER_HIGH_PERFORMANCE
)

// Buffer usages.
const (
	UsageMapRead = uint64(C.WT_BUFFER_USAGE_MAP_READ)
	UsageCopySrc = uint64(C.WT_BUFFER_USAGE_COPY_SRC)
	UsageCopyDst = uint64(C.WT_BUFFER_USAGE_COPY_DST)
	UsageUniform = uint64(C.WT_BUFFER_USAGE_UNIFORM)
	UsageStorage = uint64(C.WT_BUFFER_USAGE_STORAGE)
)

// Instance is the entry point to the library.
type Instance struct{ c C.WGPUInstance }

// CreateInstance creates an instance with default options.
func CreateInstance() (Instance, error) {
	i := C.wt_create_instance()
	if i == nil {
		return Instance{}, &Error{Code: Internal, Message: "wgpuCreateInstance returned NULL"}
	}
	return Instance{i}, nil
}

// Release drops the instance.
func (i Instance) Release() { C.wt_instance_release(i.c) }

// Adapter is a physical or software device.
type Adapter struct{ c C.WGPUAdapter }

// RequestAdapter asks for an adapter of the given backend type, feature level
// and power preference, or for the backend's software adapter when
// fallback is set; ok is false when none matches.
func (i Instance) RequestAdapter(backend, featureLevel, power uint32, fallback bool) (a Adapter, ok bool) {
	f := C.int(0)
	if fallback {
		f = 1
	}
	c := C.wt_request_adapter(i.c, C.uint32_t(backend), C.uint32_t(featureLevel), C.uint32_t(power), f)
	return Adapter{c}, c != nil
}

// Release drops the adapter.
func (a Adapter) Release() { C.wt_adapter_release(a.c) }

// Limits holds the adapter limits webtensor reads.
type Limits struct {
	MaxBufferSize                     uint64
	MaxStorageBufferBindingSize       uint64
	MaxUniformBufferBindingSize       uint64
	MinUniformBufferOffsetAlignment   uint32
	MinStorageBufferOffsetAlignment   uint32
	MaxStorageBuffersPerShaderStage   uint32
	MaxComputeWorkgroupStorageSize    uint32
	MaxComputeInvocationsPerWorkgroup uint32
	MaxComputeWorkgroupSizeX          uint32
	MaxComputeWorkgroupSizeY          uint32
	MaxComputeWorkgroupSizeZ          uint32
	MaxComputeWorkgroupsPerDimension  uint32
}

// AdapterInfo describes an adapter.
type AdapterInfo struct {
	Vendor, Architecture, Device, Description string
	Backend, AdapterType                      uint32
	VendorID, DeviceID                        uint32
	Limits                                    Limits
	Features                                  []uint32 // WGPUFeatureName values
}

// Info returns the adapter's description, limits and features.
func (a Adapter) Info() AdapterInfo {
	var c C.wt_adapter_info
	C.wt_adapter_info_get(a.c, &c)
	defer C.wt_adapter_info_free(&c)
	l := &c.limits
	info := AdapterInfo{
		Vendor:       C.GoString(c.vendor),
		Architecture: C.GoString(c.architecture),
		Device:       C.GoString(c.device),
		Description:  C.GoString(c.description),
		Backend:      uint32(c.backend),
		AdapterType:  uint32(c.adapter_type),
		VendorID:     uint32(c.vendor_id),
		DeviceID:     uint32(c.device_id),
		Limits: Limits{
			MaxBufferSize:                     uint64(l.maxBufferSize),
			MaxStorageBufferBindingSize:       uint64(l.maxStorageBufferBindingSize),
			MaxUniformBufferBindingSize:       uint64(l.maxUniformBufferBindingSize),
			MinUniformBufferOffsetAlignment:   uint32(l.minUniformBufferOffsetAlignment),
			MinStorageBufferOffsetAlignment:   uint32(l.minStorageBufferOffsetAlignment),
			MaxStorageBuffersPerShaderStage:   uint32(l.maxStorageBuffersPerShaderStage),
			MaxComputeWorkgroupStorageSize:    uint32(l.maxComputeWorkgroupStorageSize),
			MaxComputeInvocationsPerWorkgroup: uint32(l.maxComputeInvocationsPerWorkgroup),
			MaxComputeWorkgroupSizeX:          uint32(l.maxComputeWorkgroupSizeX),
			MaxComputeWorkgroupSizeY:          uint32(l.maxComputeWorkgroupSizeY),
			MaxComputeWorkgroupSizeZ:          uint32(l.maxComputeWorkgroupSizeZ),
			MaxComputeWorkgroupsPerDimension:  uint32(l.maxComputeWorkgroupsPerDimension),
		},
	}
	for i := 0; i < int(c.feature_count); i++ {
		info.Features = append(info.Features, uint32(c.features[i]))
	}
	return info
}

// Device is an open logical device with its queue.
type Device struct {
	instance C.WGPUInstance
	c        C.WGPUDevice
	queue    C.WGPUQueue
	state    *C.wt_device_state
	lost     *int32 // the state's lost flag, in C memory; see Lost
}

// RequestDevice opens a device on the adapter with the adapter's own limits
// (not the small defaults), the given optional features, and the Dawn
// toggles named in enable and disable (gpu.TogglesEnv).
func (i Instance) RequestDevice(a Adapter, features []uint32, enable, disable []string) (*Device, error) {
	var st C.wt_status
	var state *C.wt_device_state
	var fp *C.uint32_t
	if len(features) > 0 {
		// A Go slice of integers: C reads it during the call only.
		fp = (*C.uint32_t)(unsafe.Pointer(&features[0]))
	}
	en, enFree := cStrings(enable)
	defer enFree()
	dis, disFree := cStrings(disable)
	defer disFree()
	d := C.wt_request_device(i.c, a.c, fp, C.size_t(len(features)), en, C.size_t(len(enable)), dis, C.size_t(len(disable)), &state, &st)
	if err := statusError(st); err != nil {
		return nil, err
	}
	lost := (*int32)(unsafe.Pointer(C.wt_device_lost_flag(state)))
	return &Device{instance: i.c, c: d, queue: C.wt_device_queue(d), state: state, lost: lost}, nil
}

// Destroy destroys the device (its buffers become invalid) and releases it.
func (d *Device) Destroy() {
	C.wt_queue_release(d.queue)
	C.wt_device_destroy(d.instance, d.c)
}

// HasFeature reports whether the device was created with the feature (a
// WGPUFeatureName value).
func (d *Device) HasFeature(feature uint32) bool {
	return C.wt_device_has_feature(d.c, C.uint32_t(feature)) != 0
}

// TakeError returns the first uncaptured error since the last call, or the
// loss of the device, which every later call reports again.
func (d *Device) TakeError() error { return statusError(C.wt_device_take_error(d.state)) }

// Buffer is a device allocation.
type Buffer struct{ c C.WGPUBuffer }

// CreateBuffer allocates size bytes with the given usage, reporting
// validation and out-of-memory failures through error scopes.
func (d *Device) CreateBuffer(size, usage uint64) (Buffer, error) {
	var st C.wt_status
	b := C.wt_buffer_create(d.instance, d.c, C.uint64_t(size), C.WGPUFlags(usage), &st)
	return Buffer{b}, statusError(st)
}

// Release destroys the buffer's memory and drops the handle.
func (b Buffer) Release() { C.wt_buffer_release(b.c) }

// WriteBuffer copies data into b at offset on the queue timeline: after all
// work submitted so far, before any work submitted later.
func (d *Device) WriteBuffer(b Buffer, offset uint64, data []byte) {
	if len(data) == 0 {
		return
	}
	C.wt_queue_write(d.queue, b.c, C.uint64_t(offset), unsafe.Pointer(&data[0]), C.size_t(len(data)))
}

// Read copies len(dst) bytes from the start of src into dst through the
// staging buffer (MapRead|CopyDst, at least len(dst) rounded up to 4),
// waiting for all submitted work.
func (d *Device) Read(src, staging Buffer, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	return statusError(C.wt_read(d.instance, d.c, d.queue, src.c, staging.c, C.uint64_t(len(dst)), unsafe.Pointer(&dst[0])))
}

// WaitIdle blocks until all submitted work has completed. fence (CopySrc)
// and staging (MapRead|CopyDst) are 4-byte buffers kept for this purpose.
func (d *Device) WaitIdle(fence, staging Buffer) error {
	return statusError(C.wt_queue_wait(d.instance, d.c, d.queue, fence.c, staging.c))
}

// Pipeline is a compute pipeline with its bind group layout: storage
// buffers at bindings 0..n-1 (the first `writable` read-write, the rest
// read-only) and a dynamic-offset uniform buffer at binding n.
type Pipeline struct {
	c      C.wt_pipeline
	nStore uint32
}

// CreatePipeline compiles WGSL source with entry point "main". A rejected
// shader returns an *Error whose message carries the compiler's messages.
func (d *Device) CreatePipeline(wgsl string, storageBuffers, writable int, uniformSize uint64) (Pipeline, error) {
	var st C.wt_status
	src := C.CString(wgsl)
	defer C.free(unsafe.Pointer(src))
	p := C.wt_pipeline_create(d.instance, d.c, src, C.size_t(len(wgsl)), C.uint32_t(storageBuffers), C.uint32_t(writable), C.uint64_t(uniformSize), &st)
	return Pipeline{c: p, nStore: uint32(storageBuffers)}, statusError(st)
}

// Release drops the pipeline and its layout.
func (p Pipeline) Release() { C.wt_pipeline_release(p.c) }

// BindGroup binds buffers to a pipeline's layout.
type BindGroup struct{ c C.WGPUBindGroup }

// CreateBindGroup binds storage buffers (each with a byte size, from its
// start) and the uniform buffer (uniformSize bytes at the dynamic offset
// given at dispatch).
func (d *Device) CreateBindGroup(p Pipeline, buffers []Buffer, sizes []uint64, uniform Buffer, uniformSize uint64) BindGroup {
	return d.CreateBindGroupAt(p, buffers, make([]uint64, len(buffers)), sizes, uniform, uniformSize)
}

// CreateBindGroupAt is CreateBindGroup with each storage buffer bound from
// a byte offset, which must be a multiple of the device's
// minStorageBufferOffsetAlignment: a kernel then sees the range
// [offset, offset+size) as its whole array, which is how tensors larger
// than maxStorageBufferBindingSize are processed in windows.
func (d *Device) CreateBindGroupAt(p Pipeline, buffers []Buffer, offsets, sizes []uint64, uniform Buffer, uniformSize uint64) BindGroup {
	cb := make([]C.WGPUBuffer, len(buffers))
	for i, b := range buffers {
		cb[i] = b.c
	}
	// The slices hold only C pointers and integers; C reads them during
	// the call only.
	g := C.wt_bind_group_create(d.c, p.c.layout, C.uint32_t(len(buffers)), &cb[0],
		(*C.uint64_t)(unsafe.Pointer(&offsets[0])), (*C.uint64_t)(unsafe.Pointer(&sizes[0])), uniform.c, C.uint64_t(uniformSize))
	return BindGroup{g}
}

// CreateBindGroupChecked is CreateBindGroupAt that reports a group the
// device refuses (a binding past the end of its buffer, a misaligned
// offset) as an *Error at once, instead of returning an invalid group that
// would make the whole pass it is used in fail at submission.
func (d *Device) CreateBindGroupChecked(p Pipeline, buffers []Buffer, offsets, sizes []uint64, uniform Buffer, uniformSize uint64) (BindGroup, error) {
	cb := make([]C.WGPUBuffer, len(buffers))
	for i, b := range buffers {
		cb[i] = b.c
	}
	var st C.wt_status
	// As in CreateBindGroupAt: C pointers and integers, read during the call.
	g := C.wt_bind_group_create_checked(d.instance, d.c, p.c.layout, C.uint32_t(len(buffers)), &cb[0],
		(*C.uint64_t)(unsafe.Pointer(&offsets[0])), (*C.uint64_t)(unsafe.Pointer(&sizes[0])), uniform.c, C.uint64_t(uniformSize), &st)
	return BindGroup{g}, statusError(st)
}

// Release drops the bind group.
func (g BindGroup) Release() { C.wt_bind_group_release(g.c) }

// Encoder records commands for one submission.
type Encoder struct{ c C.WGPUCommandEncoder }

// CreateEncoder starts a command encoder.
func (d *Device) CreateEncoder() Encoder { return Encoder{C.wt_encoder_create(d.c)} }

// Copy records a copy of size bytes from the start of src to the start of dst.
func (e Encoder) Copy(src, dst Buffer, size uint64) {
	C.wt_encoder_copy(e.c, src.c, dst.c, C.uint64_t(size))
}

// Submit finishes the encoder, submits it and releases it.
func (d *Device) Submit(e Encoder) { C.wt_encoder_submit(d.queue, e.c) }

// SubmitChecked is Submit that returns the validation or out-of-memory
// error of finishing or submitting the encoder: a command buffer with an
// error in it runs none of its commands.
func (d *Device) SubmitChecked(e Encoder) error {
	return statusError(C.wt_encoder_submit_checked(d.instance, d.c, d.queue, e.c))
}

// DispatchAlone submits one dispatch in a command buffer of its own and
// returns its error as SubmitChecked does.
func (d *Device) DispatchAlone(p Pipeline, g BindGroup, uniformOffset uint32, x, y, z uint32) error {
	return statusError(C.wt_dispatch_alone(d.instance, d.c, d.queue, p.c.pipeline, g.c, C.uint32_t(uniformOffset), C.uint32_t(x), C.uint32_t(y), C.uint32_t(z)))
}

// Pass is an open compute pass.
type Pass struct{ c C.WGPUComputePassEncoder }

// BeginPass opens a compute pass on the encoder.
func (e Encoder) BeginPass() Pass { return Pass{C.wt_pass_begin(e.c)} }

// Dispatch records a dispatch. A nil pipeline keeps the one already set.
func (p Pass) Dispatch(pipeline *Pipeline, g BindGroup, uniformOffset uint32, x, y, z uint32) {
	var cp C.WGPUComputePipeline
	if pipeline != nil {
		cp = pipeline.c.pipeline
	}
	C.wt_pass_dispatch(p.c, cp, g.c, C.uint32_t(uniformOffset), C.uint32_t(x), C.uint32_t(y), C.uint32_t(z))
}

// End closes the pass and releases it.
func (p Pass) End() { C.wt_pass_end(p.c) }

// cStrings copies names into a C array of C strings (nil for none), and
// returns the function that frees them.
func cStrings(names []string) (**C.char, func()) {
	if len(names) == 0 {
		return nil, func() {}
	}
	arr := unsafe.Slice((**C.char)(C.malloc(C.size_t(len(names))*C.size_t(unsafe.Sizeof((*C.char)(nil))))), len(names))
	for k, n := range names {
		arr[k] = C.CString(n)
	}
	return &arr[0], func() {
		for _, p := range arr {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}
