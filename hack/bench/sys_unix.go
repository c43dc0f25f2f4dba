//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// syncDisks writes back what the runs before wrote (once).
func syncDisks() { syscall.Sync() }

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childMemory is a finished child's peak RSS (KiB) and minor page faults.
func childMemory(ps *os.ProcessState) (maxRSS, faults int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0
	}
	maxRSS = int64(ru.Maxrss)
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		maxRSS /= 1024 // bytes there, KiB elsewhere
	}
	return maxRSS, int64(ru.Minflt)
}
