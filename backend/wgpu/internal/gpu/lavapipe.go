//go:build cgo

package gpu

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// LavapipeICD is the Vulkan ICD file of the lavapipe that `make deps`
// fetches (scripts/fetch-lavapipe.sh): Mesa 25's Vulkan driver on the CPU,
// which Dawn accepts as a core adapter with shader-f16 and subgroups.
func LavapipeICD() string {
	if p := os.Getenv(LavapipeEnv); p != "" && p != "0" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "webtensor", "lavapipe", "lvp_icd.json")
}

// addLavapipe makes the private lavapipe visible to the Vulkan loader, if
// it is installed, by appending its ICD file to VK_ADD_DRIVER_FILES: that
// adds a driver without hiding the system's (VK_DRIVER_FILES would hide a
// real GPU). It must run before the library creates its instance. Like
// every software adapter it is never picked by tensor.Default; tests and
// users open it by name.
func addLavapipe() {
	if runtime.GOOS != "linux" || os.Getenv(LavapipeEnv) == "0" {
		return
	}
	icd := LavapipeICD()
	if icd == "" {
		return
	}
	if _, err := os.Stat(icd); err != nil {
		return
	}
	const env = "VK_ADD_DRIVER_FILES"
	files := filepath.SplitList(os.Getenv(env))
	if slices.Contains(files, icd) {
		return
	}
	os.Setenv(env, strings.Join(append(files, icd), string(os.PathListSeparator)))
}
