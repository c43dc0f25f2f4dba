//go:build !unix

package main

import (
	"os"
	"time"
)

// Without getrusage and sync (Windows): the bench runs, and prints 0 for
// what it cannot measure (peak RSS, faults, the CPU of "files alone");
// the children's CPU comes from os.ProcessState on every system.

func syncDisks() {}

func selfCPU() time.Duration { return 0 }

func childMemory(*os.ProcessState) (maxRSS, faults int64) { return 0, 0 }
