// Package graph will hold reverse-mode automatic differentiation over
// tensor operations, running the backward pass on the device that holds
// the data. It is empty until the autodiff work lands.
package graph
