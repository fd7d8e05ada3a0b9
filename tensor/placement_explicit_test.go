package tensor

// The package's tests name the device each test runs on and expect
// operands on different devices to be misuse: they run under Explicit, the
// default, whatever WEBTENSOR_PLACEMENT says; the placement tests switch
// policies themselves and restore this one.
func init() { SetPlacement(Explicit) }
