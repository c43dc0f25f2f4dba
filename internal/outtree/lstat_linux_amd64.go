package outtree

import "golang.org/x/sys/unix"

// sysFstatat is fstatat's system call number on linux/amd64 (lstat_raw.go).
const sysFstatat = unix.SYS_NEWFSTATAT
