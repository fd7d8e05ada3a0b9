package gpu

import (
	"os"
	"strings"
)

// Toggles returns the Dawn toggles TogglesEnv asks to enable and to
// disable, in the order given, without empty names.
func Toggles() (enable, disable []string) {
	for _, name := range strings.Split(os.Getenv(TogglesEnv), ",") {
		name = strings.TrimSpace(name)
		if off, ok := strings.CutPrefix(name, "-"); ok {
			if off = strings.TrimSpace(off); off != "" {
				disable = append(disable, off)
			}
		} else if name != "" {
			enable = append(enable, name)
		}
	}
	return enable, disable
}
