package outtree

import "golang.org/x/sys/unix"

// sysFstatat is fstatat's system call number on linux/arm64 (lstat_raw.go).
const sysFstatat = unix.SYS_FSTATAT
