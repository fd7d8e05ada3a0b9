package cpu

import "github.com/webtensor/webtensor/hal"

// capabilities is what the kernels of this package implement: every
// family of hal's kernel table, each kernel for every dtype its entry
// names (the CPU holds them all, Float64 included).
func capabilities() hal.Capabilities {
	c := hal.Capabilities{}
	c.Declare(hal.AllDTypes, hal.Families...)
	return c
}
