package graph

func vjpAdd(c *ctx, g *Value) []*Value {
	return grads(c.sumTo(g, 0), c.sumTo(g, 1))
}

func vjpMul(c *ctx, g *Value) []*Value {
	var ga, gb *Value
	if c.needs(0) {
		ga = c.sumTo(Mul(g, c.in(1)), 0)
	}
	if c.needs(1) {
		gb = c.sumTo(Mul(g, c.in(0)), 1)
	}
	return grads(ga, gb)
}
