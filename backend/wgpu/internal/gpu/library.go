//go:build cgo

package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/backend/wgpu/internal/webgpu"
	"github.com/webtensor/webtensor/hal"
)

// libraryNames are the file names of known webgpu.h implementations, in the
// order they are tried: Dawn, wgpu-native, Dawn as packaged by bun-webgpu.
var libraryNames = []string{"libwebgpu_dawn", "libwgpu_native", "libwebgpu_wrapper"}

func libraryExtension() string {
	switch runtime.GOOS {
	case "darwin":
		return ".dylib"
	case "windows":
		return ".dll"
	}
	return ".so"
}

// CacheDir is where `make deps` installs the pinned Dawn library.
func CacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "webtensor", "webgpu")
}

// candidates lists what to try, best first. Entries without a path
// separator go to the system loader, which never searches the working
// directory; everything else is an absolute path.
func candidates() []string {
	if p := os.Getenv(LibraryEnv); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return []string{p}
	}
	var out []string
	ext := libraryExtension()
	if dir := CacheDir(); dir != "" {
		for _, name := range libraryNames {
			out = append(out, filepath.Join(dir, name+ext))
		}
	}
	for _, name := range libraryNames {
		out = append(out, name+ext)
	}
	return out
}

var (
	loadOnce sync.Once
	loadErr  error
	loaded   string
)

// load opens the first library that loads, once per process.
func load() error {
	loadOnce.Do(func() {
		setHeadlessEGL()
		addLavapipe()
		var tried []string
		for _, path := range candidates() {
			if filepath.IsAbs(path) {
				if _, err := os.Stat(path); err != nil {
					tried = append(tried, path+": not found")
					continue
				}
			}
			err := webgpu.Load(path)
			if err == nil {
				loaded = path
				return
			}
			tried = append(tried, err.Error())
			if strings.Contains(err.Error(), "missing symbol") {
				// The file is a WebGPU library, just not a usable one: say so
				// rather than hide it behind later candidates.
				break
			}
		}
		loadErr = fmt.Errorf("webgpu: %w (tried: %s); run `make deps` or set %s", hal.ErrLibraryNotFound, strings.Join(tried, "; "), LibraryEnv)
	})
	return loadErr
}

// setHeadlessEGL selects Mesa's surfaceless EGL platform when there is no
// display, so that the OpenGL ES adapter works on servers and in CI. A value
// the user set is kept.
func setHeadlessEGL() {
	if runtime.GOOS != "linux" {
		return
	}
	if os.Getenv("EGL_PLATFORM") != "" || os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "" {
		return
	}
	os.Setenv("EGL_PLATFORM", "surfaceless")
}

// LoadedLibrary returns the path of the library in use, or "" before a
// successful load.
func LoadedLibrary() string {
	if load() != nil {
		return ""
	}
	return loaded
}

// browserRequests is only used in the browser (browser.go).
func browserRequests() []adapterRequest { return nil }
