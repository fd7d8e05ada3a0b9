package tensor

// Importing tensor registers every backend, so that users only ever import
// this package and device names just work.
import (
	_ "github.com/webtensor/webtensor/backend/cpu"
	_ "github.com/webtensor/webtensor/backend/wgpu"
)
