package hostile

import (
	"testing"

	"github.com/wavesmith/wavesmith/test/testinputs"
)

// TestInputs puts make's digest of the tools and repository files these
// tests use into go test's cache key (see package testinputs).
func TestInputs(t *testing.T) { testinputs.Require(t) }
