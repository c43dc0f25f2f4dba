//go:build !unix

package status

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
