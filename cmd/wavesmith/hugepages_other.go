//go:build !linux

package main

// hugePageHeap does nothing here: transparent huge pages are Linux's.
func hugePageHeap(func(string) string, int) {}

// smallPagesFirst is Linux's (hugePageHeap); the tests set it everywhere.
var smallPagesFirst func(int) bool
