// Command opgen writes a package's zz_generated_ops.go from hal's op
// table: the elementwise functions that only name their kernel, and the
// forwarding methods of tensor.Tensor and graph.Value. go generate runs
// it in each package that has such a file:
//
//	go generate ./tensor ./graph
//
// internal/opgen holds the templates; its TestGeneratedFilesAreCurrent
// fails when a file is stale.
package main

import (
	"fmt"
	"os"

	"github.com/webtensor/webtensor/internal/opgen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: opgen <package> (run by go generate in the package's directory)")
		os.Exit(2)
	}
	src, err := opgen.Render(os.Args[1])
	if err == nil {
		err = os.WriteFile(opgen.FileName, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "opgen:", err)
		os.Exit(1)
	}
}
