// Package nn will hold neural-network layers, losses and optimizers built
// on package tensor. It is empty until that work lands.
package nn
