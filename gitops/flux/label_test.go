package flux

import "testing"

func TestWaveLabel(t *testing.T) {
	for _, w := range []int{-32768, -101, -1, 0, 1, 7, 32767} {
		got, ok := parseWaveLabel(WaveLabel(w))
		if !ok || got != w {
			t.Errorf("wave %d: label %q parses back as %d, %v", w, WaveLabel(w), got, ok)
		}
	}
	for _, bad := range []string{"", "m0", "-1", "01", "x"} {
		if _, ok := parseWaveLabel(bad); ok {
			t.Errorf("label %q: want refused", bad)
		}
	}
}
