//go:build !race

package render

// raceBuild: the race detector is off (race_on_test.go).
const raceBuild = false
