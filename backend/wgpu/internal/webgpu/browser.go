//go:build js && wasm

package webgpu

// The browser binding: the same API as binding.go, over the page's
// navigator.gpu through syscall/js, so that everything above this package
// (internal/gpu, internal/device, the kernels, fusion) is shared between
// the native and the browser builds.
//
// Promises are awaited by parking the calling goroutine on a channel that
// a js.FuncOf callback resolves; the Go runtime returns to the browser's
// event loop while every goroutine is parked. A blocking call (RequestDevice,
// the checked creations, Read, WaitIdle, and so every tensor read such as
// Float32s) must therefore never run inside a js.FuncOf callback (an event
// handler): the callback holds the event loop, the promise never resolves,
// and the page hangs. Run such work on a goroutine started from the handler.
//
// Error scopes pop asynchronously in the browser, so only the calls the
// native binding checks (CreateBuffer, CreatePipeline, CreateBindGroupChecked,
// SubmitChecked, DispatchAlone) push and await them, all three scopes in one
// round trip; everything else reports through TakeError, fed by the
// device's uncapturederror event.

import (
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
)

// Backend types (WGPUBackendType), as in webgpu.h.
const (
	BackendNull     = 1
	BackendWebGPU   = 2
	BackendD3D11    = 3
	BackendD3D12    = 4
	BackendMetal    = 5
	BackendVulkan   = 6
	BackendOpenGL   = 7
	BackendOpenGLES = 8
)

// Adapter types (WGPUAdapterType).
const (
	AdapterDiscrete   = 1
	AdapterIntegrated = 2
	AdapterCPU        = 3
)

// Feature levels and power preferences for RequestAdapter.
const (
	FeatureLevelCompatibility = 1
	FeatureLevelCore          = 2
	PowerLow                  = 1
	PowerHighPerformance      = 2
)

// Buffer usages: GPUBufferUsage's values, the same as webgpu.h's.
const (
	UsageMapRead = uint64(0x1)
	UsageCopySrc = uint64(0x4)
	UsageCopyDst = uint64(0x8)
	UsageUniform = uint64(0x40)
	UsageStorage = uint64(0x80)
)

// Device-lost reasons (WGPUDeviceLostReason).
const (
	LostUnknown           = 1
	LostDestroyed         = 2
	LostCallbackCancelled = 3
	LostFailedCreation    = 4
)

// featureIDs maps the browser's feature names to the WGPUFeatureName
// values the rest of the backend uses (internal/gpu's table).
var featureIDs = map[string]uint32{
	"depth-clip-control":                 0x01,
	"depth32float-stencil8":              0x02,
	"timestamp-query":                    0x03,
	"texture-compression-bc":             0x04,
	"texture-compression-bc-sliced-3d":   0x05,
	"texture-compression-etc2":           0x06,
	"texture-compression-astc":           0x07,
	"texture-compression-astc-sliced-3d": 0x08,
	"indirect-first-instance":            0x09,
	"shader-f16":                         0x0A,
	"rg11b10ufloat-renderable":           0x0B,
	"bgra8unorm-storage":                 0x0C,
	"float32-filterable":                 0x0D,
	"float32-blendable":                  0x0E,
	"clip-distances":                     0x0F,
	"dual-source-blending":               0x10,
	"subgroups":                          0x11,
	"core-features-and-limits":           0x12,
}

func featureName(id uint32) string {
	for name, v := range featureIDs {
		if v == id {
			return name
		}
	}
	return ""
}

// limitNames are the GPUSupportedLimits a device is created with, at the
// adapter's values, as the native binding asks for the adapter's limits.
var limitNames = []string{
	"maxBufferSize", "maxStorageBufferBindingSize", "maxUniformBufferBindingSize",
	"minUniformBufferOffsetAlignment", "minStorageBufferOffsetAlignment",
	"maxStorageBuffersPerShaderStage", "maxComputeWorkgroupStorageSize",
	"maxComputeInvocationsPerWorkgroup", "maxComputeWorkgroupSizeX",
	"maxComputeWorkgroupSizeY", "maxComputeWorkgroupSizeZ",
	"maxComputeWorkgroupsPerDimension", "maxBindGroups", "maxBindingsPerBindGroup",
	"maxDynamicUniformBuffersPerPipelineLayout", "maxUniformBuffersPerShaderStage",
}

// Available reports whether the page has WebGPU (navigator.gpu).
func Available() bool {
	nav := js.Global().Get("navigator")
	return nav.Truthy() && nav.Get("gpu").Truthy()
}

// await parks the calling goroutine until promise p settles. It must not
// be called from inside a js.FuncOf callback (see the file comment).
func await(p js.Value) (js.Value, error) {
	type settled struct {
		v   js.Value
		err error
	}
	ch := make(chan settled, 1)
	resolve := js.FuncOf(func(_ js.Value, args []js.Value) any {
		v := js.Undefined()
		if len(args) > 0 {
			v = args[0]
		}
		ch <- settled{v: v}
		return nil
	})
	reject := js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "promise rejected"
		if len(args) > 0 {
			msg = jsMessage(args[0])
		}
		ch <- settled{err: &Error{Code: Internal, Message: msg}}
		return nil
	})
	p.Call("then", resolve, reject)
	r := <-ch
	resolve.Release()
	reject.Release()
	return r.v, r.err
}

// jsMessage is an exception's or GPUError's message.
func jsMessage(v js.Value) string {
	if v.Type() == js.TypeObject {
		if m := v.Get("message"); m.Type() == js.TypeString {
			return m.String()
		}
	}
	return v.String()
}

// errorOf classifies a GPUError by its constructor's name.
func errorOf(e js.Value) *Error {
	code := Validation
	switch e.Get("constructor").Get("name").String() {
	case "GPUOutOfMemoryError":
		code = OutOfMemory
	case "GPUInternalError":
		code = Internal
	}
	return &Error{Code: code, Message: jsMessage(e)}
}

// Load is a no-op in the browser: the page's navigator.gpu is the library.
func Load(string) error { return nil }

// CaptureStderr runs f; the browser keeps its own messages in its console.
func CaptureStderr(f func()) string {
	f()
	return ""
}

// Instance is navigator.gpu.
type Instance struct{ gpu js.Value }

// CreateInstance returns navigator.gpu, or an error when the page has none.
func CreateInstance() (Instance, error) {
	if !Available() {
		return Instance{}, &Error{Code: NoAdapter, Message: "navigator.gpu is undefined: this browser has no WebGPU"}
	}
	return Instance{js.Global().Get("navigator").Get("gpu")}, nil
}

// Release does nothing: navigator.gpu lives as long as the page.
func (i Instance) Release() {}

// Adapter is a GPUAdapter with the options that found it: a browser adapter
// opens one device only, so RequestDevice asks again for a fresh one.
type Adapter struct{ s *adapterState }

type adapterState struct {
	gpu, options, current js.Value
	consumed              bool
}

// RequestAdapter asks navigator.gpu for an adapter with the power
// preference and feature level, or for the fallback (software) adapter when
// fallback is set; backend is ignored, the browser chooses it.
func (i Instance) RequestAdapter(backend, featureLevel, power uint32, fallback bool) (Adapter, bool) {
	opts := map[string]any{"forceFallbackAdapter": fallback}
	if power == PowerLow {
		opts["powerPreference"] = "low-power"
	} else {
		opts["powerPreference"] = "high-performance"
	}
	if featureLevel == FeatureLevelCompatibility {
		opts["featureLevel"] = "compatibility"
	}
	options := js.ValueOf(opts)
	a, err := await(i.gpu.Call("requestAdapter", options))
	if err != nil || !a.Truthy() {
		return Adapter{}, false
	}
	return Adapter{&adapterState{gpu: i.gpu, options: options, current: a}}, true
}

// Release drops the adapter.
func (a Adapter) Release() {}

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

func str(v js.Value) string {
	if v.Type() == js.TypeString {
		return v.String()
	}
	return ""
}

// Info returns the adapter's description (GPUAdapterInfo), limits and
// features. Browsers often leave the device name empty; it is then made of
// the vendor and architecture, so that the adapter has a name to show.
func (a Adapter) Info() AdapterInfo {
	ad := a.s.current
	info := AdapterInfo{Backend: BackendWebGPU}
	if gi := ad.Get("info"); gi.Truthy() {
		info.Vendor = str(gi.Get("vendor"))
		info.Architecture = str(gi.Get("architecture"))
		info.Device = str(gi.Get("device"))
		info.Description = str(gi.Get("description"))
		if gi.Get("isFallbackAdapter").Truthy() {
			info.AdapterType = AdapterCPU
		}
	}
	if ad.Get("isFallbackAdapter").Truthy() {
		info.AdapterType = AdapterCPU
	}
	if info.Device == "" {
		info.Device = strings.TrimSpace(info.Vendor + " " + info.Architecture)
	}
	if info.Description == "" {
		info.Description = "browser WebGPU (" + info.Architecture + ")"
	}
	l := ad.Get("limits")
	u64 := func(n string) uint64 { return uint64(l.Get(n).Float()) }
	u32 := func(n string) uint32 { return uint32(l.Get(n).Float()) }
	info.Limits = Limits{
		MaxBufferSize:                     u64("maxBufferSize"),
		MaxStorageBufferBindingSize:       u64("maxStorageBufferBindingSize"),
		MaxUniformBufferBindingSize:       u64("maxUniformBufferBindingSize"),
		MinUniformBufferOffsetAlignment:   u32("minUniformBufferOffsetAlignment"),
		MinStorageBufferOffsetAlignment:   u32("minStorageBufferOffsetAlignment"),
		MaxStorageBuffersPerShaderStage:   u32("maxStorageBuffersPerShaderStage"),
		MaxComputeWorkgroupStorageSize:    u32("maxComputeWorkgroupStorageSize"),
		MaxComputeInvocationsPerWorkgroup: u32("maxComputeInvocationsPerWorkgroup"),
		MaxComputeWorkgroupSizeX:          u32("maxComputeWorkgroupSizeX"),
		MaxComputeWorkgroupSizeY:          u32("maxComputeWorkgroupSizeY"),
		MaxComputeWorkgroupSizeZ:          u32("maxComputeWorkgroupSizeZ"),
		MaxComputeWorkgroupsPerDimension:  u32("maxComputeWorkgroupsPerDimension"),
	}
	names := js.Global().Get("Array").Call("from", ad.Get("features"))
	for i := 0; i < names.Length(); i++ {
		if id, ok := featureIDs[names.Index(i).String()]; ok {
			info.Features = append(info.Features, id)
		}
	}
	return info
}

// Device is an open GPUDevice with its queue.
type Device struct {
	c, queue js.Value
	lost     int32 // set by the device.lost callback; see Lost

	mu         sync.Mutex
	lostReason uint32
	lostMsg    string
	firstErr   error // the first uncaptured error since TakeError
}

// RequestDevice opens a device on the adapter with the adapter's own limits
// (not the small defaults) and the given optional features. The browser
// takes no Dawn toggles: enable and disable are ignored.
func (i Instance) RequestDevice(a Adapter, features []uint32, enable, disable []string) (*Device, error) {
	s := a.s
	if s.consumed {
		// A GPUAdapter opens one device; ask for the same kind again.
		fresh, err := await(s.gpu.Call("requestAdapter", s.options))
		if err != nil || !fresh.Truthy() {
			return nil, &Error{Code: NoAdapter, Message: "the browser no longer offers this adapter"}
		}
		s.current = fresh
	}
	s.consumed = true
	ad := s.current
	limits := map[string]any{}
	al := ad.Get("limits")
	for _, n := range limitNames {
		if v := al.Get(n); v.Type() == js.TypeNumber {
			limits[n] = v
		}
	}
	var names []any
	for _, f := range features {
		if n := featureName(f); n != "" && ad.Get("features").Call("has", n).Bool() {
			names = append(names, n)
		}
	}
	desc := js.ValueOf(map[string]any{
		"label":            "webtensor",
		"requiredLimits":   limits,
		"requiredFeatures": names,
	})
	dev, err := await(ad.Call("requestDevice", desc))
	if err != nil {
		return nil, err
	}
	d := &Device{c: dev, queue: dev.Get("queue")}
	// The callbacks live as long as the device (loss may come after
	// Destroy), so they are never released: one pair per device.
	dev.Get("lost").Call("then", js.FuncOf(func(_ js.Value, args []js.Value) any {
		reason, msg := uint32(LostUnknown), "device lost"
		if len(args) > 0 && args[0].Truthy() {
			if args[0].Get("reason").String() == "destroyed" {
				reason = LostDestroyed
			}
			msg = str(args[0].Get("message"))
		}
		d.mu.Lock()
		d.lostReason, d.lostMsg = reason, msg
		d.mu.Unlock()
		atomic.StoreInt32(&d.lost, 1)
		return nil
	}))
	dev.Set("onuncapturederror", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) == 0 {
			return nil
		}
		e := errorOf(args[0].Get("error"))
		d.mu.Lock()
		if d.firstErr == nil {
			d.firstErr = e
		}
		d.mu.Unlock()
		return nil
	}))
	return d, nil
}

// Destroy destroys the device (its buffers become invalid).
func (d *Device) Destroy() { d.c.Call("destroy") }

// HasFeature reports whether the device was created with the feature (a
// WGPUFeatureName value).
func (d *Device) HasFeature(feature uint32) bool {
	n := featureName(feature)
	return n != "" && d.c.Get("features").Call("has", n).Bool()
}

// TakeError returns the first uncaptured error since the last call, or the
// loss of the device, which every later call reports again.
func (d *Device) TakeError() error {
	if _, err := d.LostInfo(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.firstErr
	d.firstErr = nil
	return err
}

// Lost reports whether the device-lost promise has resolved: one atomic
// load, safe from any goroutine.
func (d *Device) Lost() bool { return atomic.LoadInt32(&d.lost) != 0 }

// LostInfo returns the loss as an *Error with Code Lost and the browser's
// message, and its reason; nil and 0 while the device lives.
func (d *Device) LostInfo() (reason uint32, err error) {
	if !d.Lost() {
		return 0, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lostReason, &Error{Code: Lost, Message: d.lostMsg}
}

// ForceLoss returns false: the browser has no call that loses a device as
// a driver reset would (destroy reports "destroyed", which is Close).
func (d *Device) ForceLoss(string) bool { return false }

// pushScopes opens the three error scopes popScopes closes.
func (d *Device) pushScopes() {
	d.c.Call("pushErrorScope", "out-of-memory")
	d.c.Call("pushErrorScope", "internal")
	d.c.Call("pushErrorScope", "validation")
}

// popScopes closes the scopes, awaiting all three in one round trip, and
// returns the first error, validation before internal before out of memory;
// a lost device reports its loss.
func (d *Device) popScopes() error {
	pops := js.Global().Get("Array").New(d.c.Call("popErrorScope"), d.c.Call("popErrorScope"), d.c.Call("popErrorScope"))
	all, err := await(js.Global().Get("Promise").Call("all", pops))
	if err != nil {
		if _, lerr := d.LostInfo(); lerr != nil {
			return lerr
		}
		return err
	}
	for i := 0; i < 3; i++ {
		if e := all.Index(i); e.Truthy() {
			return errorOf(e)
		}
	}
	return nil
}

type handle struct{ v js.Value }

// Buffer is a GPUBuffer; the zero Buffer is none.
type Buffer struct{ h *handle }

// CreateBuffer allocates size bytes with the given usage, reporting
// validation and out-of-memory failures through error scopes.
func (d *Device) CreateBuffer(size, usage uint64) (Buffer, error) {
	d.pushScopes()
	b := d.c.Call("createBuffer", map[string]any{"size": float64(size), "usage": float64(usage)})
	if err := d.popScopes(); err != nil {
		b.Call("destroy")
		return Buffer{}, err
	}
	return Buffer{&handle{b}}, nil
}

// Release destroys the buffer's memory and drops the handle.
func (b Buffer) Release() {
	if b.h != nil {
		b.h.v.Call("destroy")
	}
}

func (b Buffer) value() js.Value {
	if b.h == nil {
		return js.Null()
	}
	return b.h.v
}

// WriteBuffer copies data into b at offset on the queue timeline: after all
// work submitted so far, before any work submitted later.
func (d *Device) WriteBuffer(b Buffer, offset uint64, data []byte) {
	if len(data) == 0 {
		return
	}
	arr := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(arr, data)
	d.queue.Call("writeBuffer", b.value(), float64(offset), arr)
}

// Read copies len(dst) bytes from the start of src into dst through the
// staging buffer (MapRead|CopyDst, at least len(dst) rounded up to 4),
// waiting for all submitted work.
func (d *Device) Read(src, staging Buffer, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	padded := float64((len(dst) + 3) &^ 3)
	enc := d.c.Call("createCommandEncoder")
	enc.Call("copyBufferToBuffer", src.value(), 0, staging.value(), 0, padded)
	d.queue.Call("submit", []any{enc.Call("finish")})
	st := staging.value()
	if _, err := await(st.Call("mapAsync", 1 /* GPUMapMode.READ */, 0, padded)); err != nil {
		if _, lerr := d.LostInfo(); lerr != nil {
			return lerr
		}
		return &Error{Code: MapFailed, Message: err.(*Error).Message}
	}
	mapped := js.Global().Get("Uint8Array").New(st.Call("getMappedRange", 0, padded), 0, len(dst))
	js.CopyBytesToGo(dst, mapped)
	st.Call("unmap")
	return nil
}

// WaitIdle blocks until all submitted work has completed, by reading the
// 4-byte fence through staging as the native binding does (a map on a
// lost device fails instead of waiting forever).
func (d *Device) WaitIdle(fence, staging Buffer) error {
	var word [4]byte
	return d.Read(fence, staging, word[:])
}

// Pipeline is a compute pipeline with its bind group layout: storage
// buffers at bindings 0..n-1 (the first `writable` read-write, the rest
// read-only) and a dynamic-offset uniform buffer at binding n.
type Pipeline struct{ p *pipelineState }

type pipelineState struct {
	pipeline, layout js.Value
	nStore           uint32
}

// CreatePipeline compiles WGSL source with entry point "main". A rejected
// shader returns an *Error whose message carries the compiler's messages.
func (d *Device) CreatePipeline(wgsl string, storageBuffers, writable int, uniformSize uint64) (Pipeline, error) {
	d.pushScopes()
	module := d.c.Call("createShaderModule", map[string]any{"label": "webtensor", "code": wgsl})
	entries := make([]any, 0, storageBuffers+1)
	for i := 0; i < storageBuffers; i++ {
		kind := "read-only-storage"
		if i < writable {
			kind = "storage"
		}
		entries = append(entries, map[string]any{"binding": i, "visibility": 4 /* COMPUTE */, "buffer": map[string]any{"type": kind}})
	}
	entries = append(entries, map[string]any{"binding": storageBuffers, "visibility": 4,
		"buffer": map[string]any{"type": "uniform", "hasDynamicOffset": true, "minBindingSize": float64(uniformSize)}})
	layout := d.c.Call("createBindGroupLayout", map[string]any{"label": "webtensor", "entries": entries})
	pl := d.c.Call("createPipelineLayout", map[string]any{"label": "webtensor", "bindGroupLayouts": []any{layout}})
	pipeline := d.c.Call("createComputePipeline", map[string]any{
		"label": "webtensor", "layout": pl,
		"compute": map[string]any{"module": module, "entryPoint": "main"},
	})
	if err := d.popScopes(); err != nil {
		if e, ok := err.(*Error); ok && e.Code == Validation {
			if msgs := compilationMessages(module); msgs != "" {
				e.Message += "\n" + msgs
			}
		}
		return Pipeline{}, err
	}
	return Pipeline{&pipelineState{pipeline: pipeline, layout: layout, nStore: uint32(storageBuffers)}}, nil
}

// compilationMessages is the compiler's messages for module, one a line,
// as the native binding reports them; read only for a rejected shader.
func compilationMessages(module js.Value) string {
	info, err := await(module.Call("getCompilationInfo"))
	if err != nil {
		return ""
	}
	var b strings.Builder
	msgs := info.Get("messages")
	for i := 0; i < msgs.Length(); i++ {
		m := msgs.Index(i)
		b.WriteString(js.Global().Get("String").Invoke(m.Get("lineNum")).String() + ":" +
			js.Global().Get("String").Invoke(m.Get("linePos")).String() + " " +
			m.Get("type").String() + ": " + m.Get("message").String() + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Release drops the pipeline and its layout (the browser collects them).
func (p Pipeline) Release() {}

// BindGroup binds buffers to a pipeline's layout.
type BindGroup struct{ h *handle }

// Release drops the bind group (the browser collects it).
func (g BindGroup) Release() {}

// CreateBindGroup binds storage buffers (each with a byte size, from its
// start) and the uniform buffer (uniformSize bytes at the dynamic offset
// given at dispatch).
func (d *Device) CreateBindGroup(p Pipeline, buffers []Buffer, sizes []uint64, uniform Buffer, uniformSize uint64) BindGroup {
	return d.CreateBindGroupAt(p, buffers, make([]uint64, len(buffers)), sizes, uniform, uniformSize)
}

// CreateBindGroupAt is CreateBindGroup with each storage buffer bound from
// a byte offset, which must be a multiple of the device's
// minStorageBufferOffsetAlignment.
func (d *Device) CreateBindGroupAt(p Pipeline, buffers []Buffer, offsets, sizes []uint64, uniform Buffer, uniformSize uint64) BindGroup {
	entries := make([]any, 0, len(buffers)+1)
	for i, b := range buffers {
		entries = append(entries, map[string]any{"binding": i, "resource": map[string]any{
			"buffer": b.value(), "offset": float64(offsets[i]), "size": float64(sizes[i])}})
	}
	entries = append(entries, map[string]any{"binding": len(buffers), "resource": map[string]any{
		"buffer": uniform.value(), "offset": 0, "size": float64(uniformSize)}})
	var layout js.Value = js.Null()
	if p.p != nil {
		layout = p.p.layout
	}
	return BindGroup{&handle{d.c.Call("createBindGroup", map[string]any{"layout": layout, "entries": entries})}}
}

// CreateBindGroupChecked is CreateBindGroupAt that reports a group the
// device refuses as an *Error at once.
func (d *Device) CreateBindGroupChecked(p Pipeline, buffers []Buffer, offsets, sizes []uint64, uniform Buffer, uniformSize uint64) (BindGroup, error) {
	d.pushScopes()
	g := d.CreateBindGroupAt(p, buffers, offsets, sizes, uniform, uniformSize)
	return g, d.popScopes()
}

// Encoder records commands for one submission.
type Encoder struct{ h *handle }

// CreateEncoder starts a command encoder.
func (d *Device) CreateEncoder() Encoder {
	return Encoder{&handle{d.c.Call("createCommandEncoder")}}
}

// Copy records a copy of size bytes from the start of src to the start of dst.
func (e Encoder) Copy(src, dst Buffer, size uint64) {
	e.h.v.Call("copyBufferToBuffer", src.value(), 0, dst.value(), 0, float64(size))
}

// Submit finishes the encoder and submits it.
func (d *Device) Submit(e Encoder) { d.queue.Call("submit", []any{e.h.v.Call("finish")}) }

// SubmitChecked is Submit that returns the validation or out-of-memory
// error of finishing or submitting the encoder.
func (d *Device) SubmitChecked(e Encoder) error {
	d.pushScopes()
	d.Submit(e)
	return d.popScopes()
}

// DispatchAlone submits one dispatch in a command buffer of its own and
// returns its error as SubmitChecked does.
func (d *Device) DispatchAlone(p Pipeline, g BindGroup, uniformOffset uint32, x, y, z uint32) error {
	e := d.CreateEncoder()
	pass := e.BeginPass()
	pass.Dispatch(&p, g, uniformOffset, x, y, z)
	pass.End()
	return d.SubmitChecked(e)
}

// Pass is an open compute pass.
type Pass struct{ h *handle }

// BeginPass opens a compute pass on the encoder.
func (e Encoder) BeginPass() Pass { return Pass{&handle{e.h.v.Call("beginComputePass")}} }

// Dispatch records a dispatch. A nil pipeline keeps the one already set.
func (p Pass) Dispatch(pipeline *Pipeline, g BindGroup, uniformOffset uint32, x, y, z uint32) {
	if pipeline != nil && pipeline.p != nil {
		p.h.v.Call("setPipeline", pipeline.p.pipeline)
	}
	p.h.v.Call("setBindGroup", 0, g.h.v, []any{uniformOffset})
	p.h.v.Call("dispatchWorkgroups", x, y, z)
}

// End closes the pass.
func (p Pass) End() { p.h.v.Call("end") }
