package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/hal"
)

// TestRulesFollowTheOpTable: an elementwise kernel that hal's op table
// marks Differentiable has a rule under its name (and its Scalar form's,
// for a binary one), and one it does not mark has none.
func TestRulesFollowTheOpTable(t *testing.T) {
	for _, op := range hal.UnaryOps {
		info := op.Info()
		_, ok := rules[info.Name]
		assert.Equal(t, info.Differentiable, ok, "unary %s: differentiable %v, has a rule %v", info.Name, info.Differentiable, ok)
	}
	for _, op := range hal.BinaryOps {
		info := op.Info()
		_, ok := rules[info.Name]
		_, okScalar := rules[info.Name+"Scalar"]
		assert.Equal(t, info.Differentiable, ok, "binary %s", info.Name)
		assert.Equal(t, info.Differentiable, okScalar, "binary %sScalar", info.Name)
	}
	assert.Contains(t, rules, "Expm1")
}

// TestRulesFollowTheKernelTable: every kernel that hal's kernel table marks
// Differentiable has a rule, under its name or, where the op that runs it
// is named otherwise, under that op's name; one it does not mark has none.
func TestRulesFollowTheKernelTable(t *testing.T) {
	ruleOf := map[string]string{
		hal.KernelCopy:       "Cast",
		hal.KernelConv2D:     "Conv2d",
		hal.KernelIm2Col:     "Conv2d",
		hal.KernelCol2Im:     "ConvTranspose2d",
		hal.PoolMax.Kernel(): "MaxPool2d",
		hal.PoolAvg.Kernel(): "AvgPool2d",
		hal.KernelResample:   "Interpolate",
	}
	for _, op := range hal.LinalgOps { // LinalgSolve's rule is Solve's, …
		ruleOf[op.Kernel()] = strings.TrimPrefix(op.Info().Name, "Linalg")
	}
	for _, k := range hal.KernelTable() {
		name := k.Name
		if r, ok := ruleOf[k.Key]; ok {
			name = r
		}
		_, ok := rules[name]
		assert.Equal(t, k.Differentiable, ok, "%s: differentiable %v, rule %s %v", k.Key, k.Differentiable, name, ok)
	}
}
