// Package wgpu is the WebGPU backend: it runs the kernels as WGSL compute
// shaders through the standard C API webgpu.h, using whichever
// implementation (Dawn, wgpu-native) it finds at run time.
//
// The library is opened with dlopen, so the module builds and runs without
// it; the backend then reports hal.ErrLibraryNotFound. The search order is:
//
//  1. the file named by the environment variable WEBTENSOR_WEBGPU_LIB;
//  2. the cache directory that `make deps` fills,
//     $XDG_CACHE_HOME/webtensor/webgpu (os.UserCacheDir);
//  3. the system loader path, under the names libwebgpu_dawn,
//     libwgpu_native and libwebgpu_wrapper (.so, .dylib or .dll).
//
// The working directory is never searched.
//
// On Linux without a display (neither DISPLAY nor WAYLAND_DISPLAY set), the
// backend sets EGL_PLATFORM=surfaceless before loading, unless the user set
// EGL_PLATFORM, so that the OpenGL ES adapter works headless.
//
// Importing the package registers the backend under the name "webgpu".
package wgpu
