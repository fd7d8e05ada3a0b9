package graph

// rules is the one table of differentiation rules: each primitive
// operation this package records, what its rule reads, and the rule
// itself. The rules' bodies live next to their families (rules_*.go);
// composite operations (Mean, Var, Softmax's …) are built from these
// primitives and need no rule of their own. An operation absent from the
// table is not differentiable: its result needs no gradient.
var rules map[string]*rule

func init() {
	rules = map[string]*rule{
		// Elementwise (rules_elementwise.go).
		"Add": {vjp: vjpAdd},
		"Mul": {saves: []int{0, 1}, vjp: vjpMul},

		// Reductions, linear algebra, views, joins and indexing (rules_shape.go).
		"Sum":     {vjp: vjpSum},
		"Reshape": {vjp: vjpReshape},
		"Expand":  {vjp: vjpExpand},

		// Neural-network operations (rules_nn.go).
	}
}
