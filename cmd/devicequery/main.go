// Command devicequery lists the devices webtensor can use: the CPU backend
// and every WebGPU adapter, with their limits, features and the kernels ×
// dtypes each runs (its hal capabilities; `go run ./cmd/optable` shows
// them per tensor op), and marks the one tensor.Default() would pick.
//
// Usage:
//
//	go run ./cmd/devicequery [-json] [-v]
//
// It opens each device to ask which kernels and dtypes it runs. A backend
// that lists nothing (for example because the WebGPU library is not
// installed) is reported with a hint on how to fix it; the exit status is
// still 0, since the CPU backend always works. What the WebGPU library and
// the drivers print while looking for adapters is held back (see
// wgpu.VerboseEnv); -v prints it, and it is shown when no adapter is found.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/webtensor/webtensor/backend/wgpu"
	"github.com/webtensor/webtensor/tensor"
)

func main() {
	asJSON := flag.Bool("json", false, "print a JSON array instead of text")
	verbose := flag.Bool("v", false, "also print what the WebGPU library and the drivers said while finding adapters")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: devicequery [-json] [-v]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()

	defaultName := tensor.DefaultName()
	entries := buildEntries(tensor.Adapters(), defaultName, openCapabilities)
	problems := backendProblems(tensor.BackendErrors(), wgpu.NativeLog())
	if *verbose {
		if log := strings.TrimSpace(wgpu.NativeLog()); log != "" {
			fmt.Fprintf(os.Stderr, "WebGPU library and driver messages:\n%s\n\n", log)
		}
	}

	var err error
	if *asJSON {
		// stdout stays valid JSON for pipelines; problems go to stderr.
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p)
		}
		err = writeJSON(os.Stdout, entries)
	} else {
		err = writeText(os.Stdout, entries, defaultName+" ("+defaultSource()+")", problems)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "devicequery:", err)
		os.Exit(1)
	}
}

// defaultSource says which rule DefaultName applied.
func defaultSource() string {
	if v, ok := os.LookupEnv(tensor.EnvDevice); ok && v != "" {
		return "from " + tensor.EnvDevice
	}
	return "first discrete, else integrated GPU, else cpu"
}
