package outtree

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// MarkerFile is written at the top of a tree while Write updates it in
// place: the tree may then hold old and new files mixed. Read refuses a
// tree holding it (ErrInterrupted); the next Write finishes the update it
// describes before anything else, so the tree is then the new one.
const MarkerFile = ".wavesmith-tree.rendering"

// ErrInterrupted: the tree holds MarkerFile, left by a render killed while
// it replaced files: it is neither the old tree nor the new one until a
// render runs again.
var ErrInterrupted = errors.New("a render of the tree was interrupted")

// errNoUpdate: an in-place update is not possible here (the platform, or
// a tree whose current files cannot be read); Write replaces the tree
// whole instead.
var errNoUpdate = errors.New("no in-place update")

// journal is what an in-place update does, in order: remove files, remove
// folders left empty (deepest first), make folders (parents first), then
// rename the new files from the staging folder (a sibling of the tree
// named like Write's temporary folders) into place. Each step can be
// repeated: a step already done is skipped, so finishing an update that
// was killed midway is running its journal again.
type journal struct {
	staging string   // base name of the staging folder, beside the tree
	dels    []string // files to remove
	rmdirs  []string // folders to remove when empty
	mkdirs  []string // folders to make
	puts    []string // files to put: staging/<index> -> path
}

// plan compares the files wanted with the files on disk (cur) and returns
// the journal of the update; nil when nothing changes.
func plan(cur, want map[string][]byte) *journal {
	j := &journal{}
	for p, b := range want {
		if old, ok := cur[p]; !ok || !bytes.Equal(old, b) {
			j.puts = append(j.puts, p)
		}
	}
	for p := range cur {
		if _, ok := want[p]; !ok {
			j.dels = append(j.dels, p)
		}
	}
	if len(j.puts) == 0 && len(j.dels) == 0 {
		return nil
	}
	curDirs, wantDirs := folders(cur), folders(want)
	for d := range curDirs {
		if !wantDirs[d] {
			j.rmdirs = append(j.rmdirs, d)
		}
	}
	for d := range wantDirs {
		if !curDirs[d] {
			j.mkdirs = append(j.mkdirs, d)
		}
	}
	sort.Strings(j.puts)
	sort.Strings(j.dels)
	sort.Strings(j.mkdirs) // parents first
	sort.Sort(sort.Reverse(sort.StringSlice(j.rmdirs)))
	return j
}

// folders returns every folder that holds a file of files, ancestors
// included.
func folders(files map[string][]byte) map[string]bool {
	out := map[string]bool{}
	for p := range files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if out[d] {
				break
			}
			out[d] = true
		}
	}
	return out
}

// encode writes the journal as MarkerFile holds it.
func (j *journal) encode() []byte {
	var b bytes.Buffer
	b.WriteString("# A render is replacing files of this tree. If it was killed, render\n# again: it finishes the update first. check refuses the tree until then.\n")
	fmt.Fprintf(&b, "staging %s\n", j.staging)
	for _, p := range j.dels {
		fmt.Fprintf(&b, "del %s\n", strconv.Quote(p))
	}
	for _, p := range j.rmdirs {
		fmt.Fprintf(&b, "rmdir %s\n", strconv.Quote(p))
	}
	for _, p := range j.mkdirs {
		fmt.Fprintf(&b, "mkdir %s\n", strconv.Quote(p))
	}
	for _, p := range j.puts {
		fmt.Fprintf(&b, "put %s\n", strconv.Quote(p))
	}
	return b.Bytes()
}

// parseJournal reads a MarkerFile of the tree base. The marker lies in a
// tree that may have been committed by anyone: every path is checked as
// Write checks its own, and the staging folder must be named as Write
// names its temporary folders for base.
func parseJournal(base string, b []byte) (*journal, error) {
	j := &journal{}
	re := staleName(base)
	for n, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		op, arg, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("line %d: no argument", n+1)
		}
		if op == "staging" {
			if j.staging != "" || !re.MatchString(arg) || strings.HasSuffix(arg, ".old") {
				return nil, fmt.Errorf("line %d: bad staging folder %q", n+1, arg)
			}
			j.staging = arg
			continue
		}
		p, err := strconv.Unquote(arg)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if err := CheckPath(p); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		switch op {
		case "del":
			j.dels = append(j.dels, p)
		case "rmdir":
			j.rmdirs = append(j.rmdirs, p)
		case "mkdir":
			j.mkdirs = append(j.mkdirs, p)
		case "put":
			j.puts = append(j.puts, p)
		default:
			return nil, fmt.Errorf("line %d: unknown step %q", n+1, op)
		}
	}
	if j.staging == "" {
		return nil, errors.New("no staging folder")
	}
	return j, nil
}

// stagedName is the name of the i-th put's file in the staging folder.
func stagedName(i int) string { return strconv.Itoa(i) }
