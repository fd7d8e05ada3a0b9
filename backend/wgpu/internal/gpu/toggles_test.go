package gpu

import (
	"slices"
	"testing"
)

func TestTogglesParsesEnableAndDisable(t *testing.T) {
	for _, tc := range []struct {
		env             string
		enable, disable []string
	}{
		{"", nil, nil},
		{"disable_robustness", []string{"disable_robustness"}, nil},
		{" disable_robustness , -lazy_clear_resource_on_first_use,,- ,skip_validation",
			[]string{"disable_robustness", "skip_validation"}, []string{"lazy_clear_resource_on_first_use"}},
	} {
		t.Setenv(TogglesEnv, tc.env)
		enable, disable := Toggles()
		if !slices.Equal(enable, tc.enable) || !slices.Equal(disable, tc.disable) {
			t.Errorf("%s=%q: enable %q disable %q, want %q and %q", TogglesEnv, tc.env, enable, disable, tc.enable, tc.disable)
		}
	}
}
