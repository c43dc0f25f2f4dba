package syncwaves

import (
	"testing"

	"github.com/wavesmith/wavesmith/test/testkit"
)

// TestInputs puts make's digest of the tools and repository files these
// tests use into go test's cache key (see package testkit).
func TestInputs(t *testing.T) { testkit.Inputs(t) }
