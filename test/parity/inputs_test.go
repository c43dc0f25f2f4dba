package parity

import (
	"testing"

	"github.com/wavesmith/wavesmith/internal/testtool"
)

// TestInputs puts make's digest of the tools and repository files these
// tests use into go test's cache key (see package internal/testtool).
func TestInputs(t *testing.T) { testtool.Inputs(t) }
