// Command optable prints which tensor operations run on which backend for
// which dtypes, as a Markdown table generated from tensor.Ops() and the
// hal capabilities the backends declare when a device opens.
//
// Usage:
//
//	go run ./cmd/optable                   # print the table
//	go run ./cmd/optable -readme README.md # rewrite the README's table
//
// With -readme it replaces what lies between the lines
// <!-- optable:begin --> and <!-- optable:end --> in the file. A test in
// this package fails when README.md differs from what it would write, so
// the README cannot drift from the code.
//
// The WebGPU column is the first WebGPU adapter's capabilities without
// float16, so that it reads the same on every machine: float16 needs the
// adapter feature shader-f16, which the table's note says.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	readme := flag.String("readme", "", "rewrite the op table in this Markdown file instead of printing it")
	flag.Parse()
	if err := run(*readme); err != nil {
		fmt.Fprintln(os.Stderr, "optable:", err)
		os.Exit(1)
	}
}

func run(readme string) error {
	columns, err := openColumns()
	if err != nil {
		return err
	}
	table := markdown(columns)
	if readme == "" {
		_, err := fmt.Print(table)
		return err
	}
	old, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	updated, err := replaceSection(string(old), table)
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	return os.WriteFile(readme, []byte(updated), 0o644)
}
