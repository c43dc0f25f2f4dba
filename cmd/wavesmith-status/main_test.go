package main

import (
	"runtime/debug"
	"testing"
)

func TestSetMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	cases := map[string]struct {
		env  map[string]string
		want int64
	}{
		"from the container's limit": {map[string]string{"MEMORY_LIMIT": "536870912"}, 483183819},
		"GOMEMLIMIT wins":            {map[string]string{"MEMORY_LIMIT": "536870912", "GOMEMLIMIT": "100MiB"}, -1},
		"no limit":                   {map[string]string{}, -1},
		"not a number":               {map[string]string{"MEMORY_LIMIT": "512Mi"}, -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := setMemoryLimit(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("setMemoryLimit = %d, want %d", got, tc.want)
			}
			if tc.want > 0 {
				if got := debug.SetMemoryLimit(-1); got != tc.want {
					t.Errorf("runtime memory limit %d, want %d", got, tc.want)
				}
			}
		})
	}
}
