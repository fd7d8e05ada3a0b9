//go:build !cgo && !(js && wasm)

// Package webgpu is a thin cgo binding to webgpu.h; without cgo it is empty
// and backend/wgpu reports itself unavailable.
package webgpu
