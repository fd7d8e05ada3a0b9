package tensor

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// startPlacement is the policy the test process started with, read by a
// variable initializer, before the package's test init sets Explicit.
var startPlacement = CurrentPlacement()

func TestParsePlacement(t *testing.T) {
	for _, p := range []Placement{Explicit, Auto, ForceGPU, ForceCPU, MinimizeTransfers} {
		got, err := ParsePlacement(p.String())
		require.NoError(t, err)
		require.Equal(t, p, got, "the constant's own name")
	}
	for name, want := range map[string]Placement{
		"explicit": Explicit, "auto": Auto, "AUTO": Auto, "force-gpu": ForceGPU, "force_cpu": ForceCPU,
		" minimize-transfers ": MinimizeTransfers,
	} {
		got, err := ParsePlacement(name)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
	for _, bad := range []string{"", "gpu", "fast", "force gpu"} {
		_, err := ParsePlacement(bad)
		require.ErrorContains(t, err, "unknown placement", bad)
	}
	require.Equal(t, Placement(0), Explicit, "the zero value, and so the default, is Explicit")
	require.Equal(t, "Placement(9)", Placement(9).String())
	require.ErrorContains(t, Catch(func() { SetPlacement(Placement(9)) }), "unknown placement")
}

// WEBTENSOR_PLACEMENT sets the policy at start-up, which a child process
// reports; unset it is Explicit, and a bad value is logged and ignored.
func TestPlacementFromEnvironment(t *testing.T) {
	if want, child := os.LookupEnv("WEBTENSOR_PLACEMENT_WANT"); child {
		require.Equal(t, want, startPlacement.String())
		return
	}
	for _, tc := range []struct{ env, want, log string }{
		{"", "Explicit", ""},
		{"auto", "Auto", ""},
		{"Force_CPU", "ForceCPU", ""},
		{"fastest", "Explicit", `webtensor: ignoring WEBTENSOR_PLACEMENT: unknown placement "fastest"`},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPlacementFromEnvironment$", "-test.v")
		cmd.Env = append(os.Environ(), EnvPlacement+"="+tc.env, "WEBTENSOR_PLACEMENT_WANT="+tc.want)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s=%q: %s", EnvPlacement, tc.env, out)
		require.Contains(t, string(out), "--- PASS: TestPlacementFromEnvironment", "the child ran the check")
		if tc.log != "" {
			require.Contains(t, string(out), tc.log)
		} else {
			require.NotContains(t, string(out), "ignoring")
		}
	}
}
