package wgpu

import "github.com/webtensor/webtensor/backend/wgpu/internal/gpu"

// LibraryEnv names the environment variable that points at a webgpu.h
// implementation to load instead of searching (see the package doc).
const LibraryEnv = gpu.LibraryEnv

// LavapipeEnv names the environment variable that controls the private
// lavapipe that `make deps` installs: "0" leaves it out, a path names
// another Vulkan ICD file to add in its place.
const LavapipeEnv = gpu.LavapipeEnv

// VerboseEnv names the environment variable that lets the native
// libraries print on stderr (see NativeLog).
const VerboseEnv = gpu.VerboseEnv

// FallbackEnv names the environment variable (go.env of wasm_exec.js)
// that, in the browser, adds the browser's fallback (software) adapter,
// SwiftShader in Chromium, to the adapters, and lets tensor.Default pick
// it: for headless test pages, where there is no GPU.
const FallbackEnv = gpu.FallbackEnv
