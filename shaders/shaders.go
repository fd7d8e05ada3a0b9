// Package shaders holds the WGSL compute kernels as plain .wgsl files.
//
// It exists only because go:embed cannot reach files outside a package's
// own directory: backend/wgpu reads the kernels from FS.
package shaders

import "embed"

// FS contains every *.wgsl file of this directory.
//
//go:embed *.wgsl
var FS embed.FS
