package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
	"github.com/webtensor/webtensor/tensor"
)

// TestREADMEIsCurrent fails when README.md's op table differs from the
// generated one; `go run ./cmd/optable -readme README.md` fixes it.
func TestREADMEIsCurrent(t *testing.T) {
	columns, err := openColumns()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true requires a WebGPU device: %v", err)
		}
		t.Skipf("cannot build the table here: %v", err)
	}
	doc, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	got, err := section(string(doc))
	require.NoError(t, err)
	if want := markdown(columns); got != want {
		t.Errorf("README.md's op table is out of date; run `go run ./cmd/optable -readme README.md`.\nwant:\n%s", want)
	}
}

// TestEveryAdapterMatchesTheTable checks the table's claim about each
// adapter: it declares exactly its column, the shader-f16 one when the
// adapter offers the feature (and so its device was created with it).
func TestEveryAdapterMatchesTheTable(t *testing.T) {
	columns, err := openColumns()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true requires both software WebGPU adapters: %v", err)
		}
		t.Skipf("cannot build the table here: %v", err)
	}
	plain, withF16 := columns[1].Caps, columns[2].Caps
	for _, a := range tensor.Adapters() {
		if !strings.HasPrefix(a.Name, "webgpu") {
			continue
		}
		t.Run(a.Name+"-"+a.Info.Backend, func(t *testing.T) {
			dev, err := tensor.Open(a.Name)
			require.NoError(t, err)
			want := plain
			if hasShaderF16(a.Info) {
				want = withF16
			}
			require.NoError(t, webgpuAgrees(want, dev.Capabilities()))
		})
	}
	require.Equal(t, plain, withoutDType(withF16, hal.Float16), "shader-f16 adds float16 and nothing else")
	require.Error(t, webgpuAgrees(plain, withF16), "a differing dtype is caught")
}

func TestMarkdown(t *testing.T) {
	full := hal.Capabilities{}
	for _, k := range hal.Kernels() {
		full[k] = hal.SetOf(hal.DTypes...)
	}
	floatOnly := withoutDType(withoutDType(withoutDType(full, hal.Int32), hal.Float64), hal.Int64)
	table := markdown([]column{{"A", full}, {"B", floatOnly}})

	assert.Contains(t, table, "| op | A | B |\n| --- | --- | --- |\n")
	assert.Contains(t, table, "| **elementwise binary** | | |\n")
	assert.Contains(t, table, "| `Add` `Sub` `Mul` `Div` | f32 f64 i32 f16 i64 | f32 f16 |\n", "ops with equal cells share a row")
	assert.Contains(t, table, "| `Pow` | f32 f64 f16 | f32 f16 |\n")
	assert.Contains(t, table, "| `OneHot` | i32 | — |\n")
	for _, op := range tensor.Ops() {
		assert.Contains(t, table, "`"+op.Name+"`")
	}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		assert.Equal(t, strings.TrimRight(line, " "), line)
	}
}

func TestReplaceSection(t *testing.T) {
	doc := "# x\n\n## Operations\n\n" + beginMarker + "\nold\n" + endMarker + "\n\nrest\n"
	out, err := replaceSection(doc, "new\n")
	require.NoError(t, err)
	assert.Equal(t, "# x\n\n## Operations\n\n"+beginMarker+"\nnew\n"+endMarker+"\n\nrest\n", out)
	got, err := section(out)
	require.NoError(t, err)
	assert.Equal(t, "new\n", got)

	_, err = replaceSection("no markers", "x")
	assert.ErrorContains(t, err, "no <!-- optable:begin -->")
}
