//go:build !linux

package main

// hugePageHeap does nothing here: transparent huge pages are Linux's.
func hugePageHeap(func(string) string, int) {}
