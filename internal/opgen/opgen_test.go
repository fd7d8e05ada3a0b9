package opgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/hal"
)

// TestGeneratedFilesAreCurrent fails when a generated file differs from
// what cmd/opgen writes now; `go generate ./tensor ./graph` fixes it.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for _, pkg := range Packages {
		want, err := Render(pkg)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("..", "..", pkg, FileName))
		require.NoError(t, err)
		if string(got) != string(want) {
			t.Errorf("%s/%s is stale: run `go generate ./%s`", pkg, FileName, pkg)
		}
	}
}

// TestRenderFollowsTheTable checks that each op of the table, and only
// those, gets its forwarders.
func TestRenderFollowsTheTable(t *testing.T) {
	tensorSrc, err := Render("tensor")
	require.NoError(t, err)
	graphSrc, err := Render("graph")
	require.NoError(t, err)
	src, gsrc := string(tensorSrc), string(graphSrc)
	assert.True(t, strings.HasPrefix(src, "// Code generated"), "the header marks the file generated")
	for _, u := range hal.UnaryOps {
		name := u.Info().Name
		assert.Contains(t, src, "func (t *Tensor) "+name+"(")
		assert.Contains(t, gsrc, "func (x *Value) "+name+"(")
	}
	for _, b := range hal.BinaryOps {
		name := b.Info().Name
		assert.Contains(t, src, "func "+name+"(a, b *Tensor) *Tensor")
		assert.Contains(t, src, "func (t *Tensor) "+name+"Scalar(s float64) *Tensor")
		assert.Contains(t, gsrc, "func "+name+"(a, b *Value) *Value")
	}
	assert.Contains(t, src, `func Expm1(x *Tensor) *Tensor { return x.unary("Expm1", hal.Expm1) }`)
	assert.Contains(t, src, "func (t *Tensor) Clamp(lo, hi float64) *Tensor { return Clamp(t, lo, hi) }")
	assert.NotContains(t, src, "func Clamp(", "ops with parameters keep their hand-written function")
	assert.Contains(t, gsrc, `func Expm1(x *Value) *Value { return unaryOp("Expm1", tensor.Expm1, x) }`)
	_, err = Render("nn")
	assert.Error(t, err)
}
