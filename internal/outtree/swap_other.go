//go:build !linux && !darwin

package outtree

// exchange is not available: Write falls back to two renames.
func exchange(a, b string) error { return errNoExchange }
