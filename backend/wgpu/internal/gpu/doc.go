// Package gpu is the process's WebGPU, below any one device: it loads the
// webgpu.h library (library.go, lavapipe.go), creates the instance and
// finds the adapters once (adapters.go), and runs every native call of the
// process on one locked OS thread (worker.go), keeping what the native
// code prints for NativeLog (diagnostics.go).
//
// Package wgpu builds its devices on it; the names wgpu's users see are
// re-exported there.
package gpu

// LibraryEnv names the environment variable that points at a webgpu.h
// implementation to load instead of searching.
const LibraryEnv = "WEBTENSOR_WEBGPU_LIB"

// LavapipeEnv names the environment variable that controls the private
// lavapipe that `make deps` installs: "0" leaves it out, a path names
// another Vulkan ICD file to add in its place.
const LavapipeEnv = "WEBTENSOR_LAVAPIPE"

// VerboseEnv names the environment variable that lets the native
// libraries print on stderr. By default what Dawn and the drivers print
// while adapters are found and devices created (warnings such as
// "XDG_RUNTIME_DIR is invalid", "Vulkan shaderUniform*ArrayDynamicIndexing
// required", "Failed to load libEGL.so") is kept for NativeLog instead of
// reaching the user's terminal: it is noise for a program that works, and
// the place to look when no adapter is found.
const VerboseEnv = "WEBTENSOR_WEBGPU_VERBOSE"

// FallbackEnv names the environment variable (set on the Go object of
// wasm_exec.js, go.env) that asks for the browser's fallback adapter
// (forceFallbackAdapter: SwiftShader in Chromium) as well as its default
// one; headless test pages set it so that WebGPU runs without a GPU.
const FallbackEnv = "WEBTENSOR_WEBGPU_FALLBACK"

// TogglesEnv names the environment variable that passes Dawn device
// toggles, comma-separated, to every device the process opens: a name
// enables the toggle, a name with a leading "-" disables it (for example
// "disable_robustness,-lazy_clear_resource_on_first_use"). It is for
// measuring what a toggle costs on a given GPU; Dawn ignores (and warns
// about) a name it does not know. Other libraries than Dawn get no toggles.
const TogglesEnv = "WEBTENSOR_DAWN_TOGGLES"
