package kustomize

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
)

// Limits of one kustomize build. Kustomize's cost grows with the square
// of the objects it holds (each object added is compared with all the
// others: 1,000 ConfigMaps take a second of a core, 4,000 sixteen), and
// it reads a base once for every path that reaches it: 37 small files
// whose namePrefix layers each include the one below twice make 4,096
// objects in 90 s of a core, one more layer four times that. Krusty
// cannot be stopped from outside, so its file system counts what it
// reads and gives up, as it does once the render's deadline has passed:
// the build ends at its next read.
var (
	// maxBuildDocuments bounds the YAML documents a build reads: a file
	// counts its documents, a shared base's files count each time the
	// base is reached. maxBuildObjects bounds the objects it makes.
	maxBuildDocuments int64 = 5_000
	maxBuildObjects         = 5_000
	// maxBuildReadBytes bounds the bytes a build reads, counted the same
	// way; maxBuildOutput the bytes of YAML it writes (what manifest
	// decodes from one file).
	maxBuildReadBytes int64 = 256 << 20
	maxBuildOutput          = 64 << 20
)

// buildBudget accounts what one build reads; kustomize may call from
// more than one goroutine.
type buildBudget struct {
	ctx   context.Context
	docs  atomic.Int64
	bytes atomic.Int64
}

// check fails when the build's context has ended.
func (b *buildBudget) check() error {
	if b == nil {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrBudget, err)
	}
	return nil
}

// read counts a file read.
func (b *buildBudget) read(data []byte) error {
	if b == nil {
		return nil
	}
	if err := b.check(); err != nil {
		return err
	}
	if d := b.docs.Add(1 + int64(bytes.Count(data, []byte("\n---")))); d > maxBuildDocuments {
		return fmt.Errorf("%w: kustomize reads more than %d YAML documents (a base counts each time a kustomization reaches it; kustomize's work grows with their square)", ErrBudget, maxBuildDocuments)
	}
	if s := b.bytes.Add(int64(len(data))); s > maxBuildReadBytes {
		return fmt.Errorf("%w: kustomize reads more than %d bytes (a base counts each time a kustomization reaches it)", ErrBudget, maxBuildReadBytes)
	}
	return nil
}
