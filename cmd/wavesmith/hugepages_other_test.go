//go:build !linux

package main

import "errors"

// limitAddressSpace: hugePageHeap is Linux's (TestHugePageHeap).
func limitAddressSpace(uint64) error { return errors.New("no address-space limit here") }

// smallPagesFirst is Linux's (hugePageHeap); hugePageChild sets it.
var smallPagesFirst func(int) bool
