//go:build darwin || freebsd

package treecache

import "syscall"

// ctime is st's change time (identity).
func ctime(st *syscall.Stat_t) (sec, nsec int64) {
	return int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)
}
