package textdiff

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Diff compares want (rendered) with got (on disk) file by file and
// returns a unified diff, empty when they are equal.
func Diff(want, got map[string][]byte) string {
	if equal(want, got) {
		return "" // the common case (check of a fresh tree): no sorting
	}
	names := map[string]bool{}
	for p := range want {
		names[p] = true
	}
	for p := range got {
		names[p] = true
	}
	sorted := make([]string, 0, len(names))
	for p := range names {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var b strings.Builder
	for _, p := range sorted {
		w, inWant := want[p]
		g, inGot := got[p]
		if inWant && inGot && bytes.Equal(w, g) {
			continue
		}
		from, to := "a/"+p, "b/"+p
		if !inGot {
			from = "/dev/null"
		}
		if !inWant {
			to = "/dev/null"
		}
		b.WriteString(UnifiedDiff(from, to, string(g), string(w)))
	}
	return b.String()
}

// UnifiedDiff returns the unified diff (3 lines of context) that turns a
// into b, or "" when they are equal.
func UnifiedDiff(nameA, nameB, a, b string) string {
	if a == b {
		return ""
	}
	al, bl := splitLines(a), splitLines(b)
	ops := diffLines(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after the
		// last change that is at most 2*ctx equal lines away.
		start := i
		for start > 0 && i-start < ctx && ops[start-1].kind == ' ' {
			start--
		}
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
				continue
			}
			if j-end > 2*ctx {
				break
			}
		}
		stop := end + 1
		for stop < len(ops) && stop-end <= ctx && ops[stop].kind == ' ' {
			stop++
		}
		aStart, bStart, aN, bN := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:stop] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
		for _, op := range ops[start:stop] {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			if !strings.HasSuffix(op.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	text string
	a, b int // 0-based line positions before this op
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines computes an edit script with a longest common subsequence on
// what remains after the common prefix and suffix; very large differing
// middles are shown as replaced whole.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var ops []diffOp
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{' ', a[i], i, i})
	}
	ai, bi := pre, pre
	emit := func(kind byte, text string) {
		ops = append(ops, diffOp{kind, text, ai, bi})
		switch kind {
		case ' ':
			ai++
			bi++
		case '-':
			ai++
		case '+':
			bi++
		}
	}
	if len(am)*len(bm) > 16_000_000 {
		for _, l := range am {
			emit('-', l)
		}
		for _, l := range bm {
			emit('+', l)
		}
	} else {
		n, m := len(am), len(bm)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if am[i] == bm[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && am[i] == bm[j]:
				emit(' ', am[i])
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				emit('-', am[i])
				i++
			default:
				emit('+', bm[j])
				j++
			}
		}
	}
	for k := len(a) - suf; k < len(a); k++ {
		emit(' ', a[k])
	}
	return ops
}

// equal reports whether a and b hold the same files.
func equal(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for p, x := range a {
		if y, ok := b[p]; !ok || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}
