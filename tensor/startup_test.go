package tensor

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// startupChildEnv makes the test binary run startupChild instead of the
// tests: what a program does at start is only visible in a fresh process.
const startupChildEnv = "WEBTENSOR_TEST_STARTUP_CHILD"

// TestMain lets the binary serve as that child program.
func TestMain(m *testing.M) {
	if mode := os.Getenv(startupChildEnv); mode != "" {
		startupChild(mode)
		return
	}
	os.Exit(m.Run())
}

// startupChild is a small user program: "cpu" opens the CPU by name,
// "default" takes Default(), "webgpu" opens every adapter. Each computes
// something, then prints whether the WebGPU library is mapped into the
// process.
func startupChild(mode string) {
	var devs []*Device
	switch mode {
	case "cpu":
		dev, err := Open("cpu")
		if err != nil {
			panic(err)
		}
		devs = append(devs, dev)
	case "default":
		devs = append(devs, Default())
	case "webgpu":
		for _, a := range Adapters() {
			if strings.HasPrefix(a.Name, "webgpu") {
				dev, err := Open(a.Name)
				if err != nil {
					panic(err)
				}
				devs = append(devs, dev)
			}
		}
	}
	for _, dev := range devs {
		x := FromFloat32(dev, []float32{1, -2, 3}, 3)
		got, err := x.Add(x).ReLU().Float32s()
		if err != nil || got[0] != 2 || got[1] != 0 || got[2] != 6 {
			panic("wrong result")
		}
	}
	maps, _ := os.ReadFile("/proc/self/maps")
	os.Stdout.WriteString("devices " + string(rune('0'+len(devs))) + " webgpu-loaded=" + boolWord(strings.Contains(string(maps), "webgpu")) + "\n")
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// runStartupChild runs the test binary as startupChild(mode) with the
// extra environment and returns its stdout and stderr.
func runStartupChild(t *testing.T, mode string, env ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, startupChildEnv+"="+mode)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "child stderr: %s", errOut.String())
	return out.String(), errOut.String()
}

// TestCPUProgramsDoNotLoadWebGPU: a program that opens only the CPU, by
// name or through WEBTENSOR_DEVICE=cpu, never loads the WebGPU library, so
// it starts fast and the drivers print nothing.
func TestCPUProgramsDoNotLoadWebGPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	for _, c := range []struct {
		mode string
		env  []string
	}{
		{"cpu", nil},
		{"default", []string{EnvDevice + "=cpu"}},
	} {
		stdout, stderr := runStartupChild(t, c.mode, c.env...)
		require.Equal(t, "devices 1 webgpu-loaded=no\n", stdout, c.mode)
		require.Empty(t, stderr, c.mode)
	}
}

// TestWebGPUStartIsQuiet: opening every adapter and computing on it prints
// nothing on stderr (the drivers' warnings are held back unless
// WEBTENSOR_WEBGPU_VERBOSE is set), and the library is loaded.
func TestWebGPUStartIsQuiet(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	if len(backendAdapters(webgpuBackend)) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true requires a WebGPU device")
		}
		t.Skip("no WebGPU adapter")
	}
	stdout, stderr := runStartupChild(t, "webgpu", "WEBTENSOR_WEBGPU_VERBOSE=")
	require.Contains(t, stdout, "webgpu-loaded=yes")
	require.NotContains(t, stdout, "devices 0")
	require.Empty(t, stderr)
}
